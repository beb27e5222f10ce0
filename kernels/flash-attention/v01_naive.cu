// v01 naive: one thread per query row. The thread keeps its query row and its output
// row in registers (fp32) and walks over every key: a dot product, an online-softmax
// update, and a rank-1 update of the output. K and V come straight from global memory,
// one fp16 element per load. No shared memory, no tensor cores.
#include <cuda_fp16.h>

// NVRTC has no <math.h>: minus infinity, spelled by its bits.
#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;

extern "C" __global__ void __launch_bounds__(128)
attn_v01(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    const long base = (long)blockIdx.y * S * D;
    const half* q = Q + base + (long)i * D;
    const half* k = K + base;
    const half* v = V + base;

    float qf[D], o[D];
#pragma unroll
    for (int d = 0; d < D; ++d) {
        qf[d] = __half2float(q[d]) * scale;
        o[d] = 0.f;
    }
    float m = NEG_INF, l = 0.f;
    const int n = causal ? i + 1 : S;
    for (int j = 0; j < n; ++j) {
        float s = 0.f;
#pragma unroll
        for (int d = 0; d < D; ++d) s += qf[d] * __half2float(k[(long)j * D + d]);
        float mn = fmaxf(m, s);
        float corr = __expf(m - mn);
        float p = __expf(s - mn);
        l = l * corr + p;
#pragma unroll
        for (int d = 0; d < D; ++d) o[d] = o[d] * corr + p * __half2float(v[(long)j * D + d]);
        m = mn;
    }
    half* out = O + base + (long)i * D;
    const float inv = 1.f / l;
#pragma unroll
    for (int d = 0; d < D; ++d) out[d] = __float2half(o[d] * inv);
}
