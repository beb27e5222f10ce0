// v01 naive: one thread per element of C. Thread (m, n) walks row m of A and row n of
// Bt (column n of B) from global memory, one fp16 element per load, and accumulates in
// fp32. No shared memory, no tensor cores. The 16×16 threads of a block cover a 16×16
// tile of C; neighbouring threads in x take neighbouring n, so a warp's loads from Bt hit
// 16 different rows K elements apart: nothing is coalesced but the A row, which every
// thread of a row shares.
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(256)
gemm_v01(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    const int n = blockIdx.x * 16 + threadIdx.x % 16;
    const int m = blockIdx.y * 16 + threadIdx.x / 16;
    if (m >= M || n >= N) return;
    const half* a = A + (long)m * K;
    const half* b = Bt + (long)n * K;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += __half2float(a[k]) * __half2float(b[k]);
    C[(long)m * N + n] = __float2half(acc);
}
