// Deliberately broken kernels: they prove that stallscope's runner isolates a version
// that faults, hangs, computes the wrong thing or leaves output unwritten, and that the
// other versions of the same run are unaffected. Same argument list as the ladder.
#include <cuda_fp16.h>

// Writes far outside O: CUDA_ERROR_ILLEGAL_ADDRESS, and the context is lost.
extern "C" __global__ void fault_oob(const half* Q, const half* K, const half* V, half* O,
                                     int B, int H, int S, float scale, int causal) {
    long far = (long)1 << 40;
    O[far + threadIdx.x] = __float2half(1.f);
}

// Never ends: the runner's timeout must stop it.
extern "C" __global__ void hang(const half* Q, const half* K, const half* V, half* O,
                                int B, int H, int S, float scale, int causal) {
    volatile int* flag = reinterpret_cast<volatile int*>(O);
    while (flag[0] != 0x12345678) {
    }
}

// Runs and writes every element, but computes mean(V) instead of attention.
extern "C" __global__ void wrong_result(const half* Q, const half* K, const half* V, half* O,
                                        int B, int H, int S, float scale, int causal) {
    long row = blockIdx.x;  // (b*H + h)*S + i
    long head = row / S;
    int d = threadIdx.x;
    float acc = 0.f;
    for (int j = 0; j < S; ++j) acc += __half2float(V[(head * S + j) * blockDim.x + d]);
    O[row * blockDim.x + d] = __float2half(acc / S);
}

// Writes only the first half of the rows: the rest keeps the NaN poison.
extern "C" __global__ void half_written(const half* Q, const half* K, const half* V, half* O,
                                        int B, int H, int S, float scale, int causal) {
    long row = blockIdx.x;
    if (row % S >= S / 2) return;
    O[row * blockDim.x + threadIdx.x] = V[row * blockDim.x + threadIdx.x];
}

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif

// One query row of attention, naive (as the ladder's v01), into `out`. With
// `subtract_max` false the softmax skips the running maximum: right while scores stay
// small, exp overflows to infinity once they reach ~88.
__device__ void attention_row(const half* q, const half* k, const half* v, half* out, int n,
                              float scale, bool subtract_max) {
    constexpr int D = HEAD_DIM;
    float qf[D], o[D];
    for (int d = 0; d < D; ++d) {
        qf[d] = __half2float(q[d]) * scale;
        o[d] = 0.f;
    }
    float m = subtract_max ? __int_as_float(0xff800000) : 0.f, l = 0.f;
    for (int j = 0; j < n; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qf[d] * __half2float(k[(long)j * D + d]);
        float mn = subtract_max ? fmaxf(m, s) : 0.f;
        float corr = __expf(m - mn);
        float p = __expf(s - mn);
        l = l * corr + p;
        for (int d = 0; d < D; ++d) o[d] = o[d] * corr + p * __half2float(v[(long)j * D + d]);
        m = mn;
    }
    for (int d = 0; d < D; ++d) out[d] = __float2half(o[d] / l);
}

// Never subtracts the row maximum: passes gentle inputs, overflows on large logits.
extern "C" __global__ void no_max_subtraction(const half* Q, const half* K, const half* V,
                                              half* O, int B, int H, int S, float scale,
                                              int causal) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    const long base = (long)blockIdx.y * S * HEAD_DIM;
    attention_row(Q + base + (long)i * HEAD_DIM, K + base, V + base,
                  O + base + (long)i * HEAD_DIM, causal ? i + 1 : S, scale, false);
}

// A persistent kernel whose work counter is never reset: the first launch takes every
// row, later launches find the counter spent and write nothing.
__device__ unsigned int stale_next_row = 0;

extern "C" __global__ void stale_counter(const half* Q, const half* K, const half* V, half* O,
                                         int B, int H, int S, float scale, int causal) {
    const unsigned rows = (unsigned)(B * H) * (unsigned)S;
    for (unsigned r = atomicAdd(&stale_next_row, 1u); r < rows;
         r = atomicAdd(&stale_next_row, 1u)) {
        const long head = r / S;
        const int i = r % S;
        const long base = head * S * HEAD_DIM;
        attention_row(Q + base + (long)i * HEAD_DIM, K + base, V + base,
                      O + base + (long)i * HEAD_DIM, causal ? i + 1 : S, scale, true);
    }
}
