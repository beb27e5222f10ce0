// The softmax of the unfused baseline: one block per score row, fp32 in (Q·Kᵀ from
// cuBLAS), fp16 probabilities out (the A operand of the P·V GEMM). Keys after the query
// get probability 0 when causal.
#include <cuda_fp16.h>

// NVRTC has no <math.h>: minus infinity, spelled by its bits.
#define NEG_INF __int_as_float(0xff800000)

__device__ float block_reduce(float x, bool is_max) {
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float y = __shfl_xor_sync(0xffffffffu, x, o);
        x = is_max ? fmaxf(x, y) : x + y;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) part[warp] = x;
    __syncthreads();
    int warps = blockDim.x >> 5;
    x = lane < warps ? part[lane] : (is_max ? NEG_INF : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        float y = __shfl_xor_sync(0xffffffffu, x, o);
        x = is_max ? fmaxf(x, y) : x + y;
    }
    return x;
}

extern "C" __global__ void softmax_rows(const float* __restrict__ scores, half* __restrict__ probs,
                                        int rows, int len, float scale, int causal) {
    long row = blockIdx.x;
    int i = row % len;
    const float* x = scores + row * len;
    half* p = probs + row * len;
    int n = causal ? i + 1 : len;
    float m = NEG_INF;
    for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, x[j] * scale);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int j = threadIdx.x; j < n; j += blockDim.x) s += expf(x[j] * scale - m);
    s = block_reduce(s, false);
    float inv = 1.f / s;
    for (int j = threadIdx.x; j < len; j += blockDim.x)
        p[j] = __float2half(j < n ? expf(x[j] * scale - m) * inv : 0.f);
}
