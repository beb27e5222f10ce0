// v02 tiled: a block of 32×32 threads owns a 32×32 tile of C and walks K in steps of 32.
// Each step, every thread loads one element of the A tile and one of the Bt tile (a
// warp reads 32 consecutive k of one row: 64 coalesced bytes), converted to fp32 into
// shared memory, and after a barrier each thread takes its dot product of 32 from there:
// every element loaded from global memory is used 32 times. The Bt tile is padded to 33
// columns so that the 32 threads of a warp, reading Bs[n][k] for 32 different n, hit 32
// different banks. Partial tiles (M, N or K no multiple of 32) load zeros.
#include <cuda_fp16.h>

constexpr int T = 32;

extern "C" __global__ void __launch_bounds__(1024)
gemm_v02(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T + 1];
    const int tx = threadIdx.x % T, ty = threadIdx.x / T;
    const int m0 = blockIdx.y * T, n0 = blockIdx.x * T;
    const int m = m0 + ty, n = n0 + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += T) {
        const int k = k0 + tx;
        // Row ty of each tile, k along the warp.
        As[ty][tx] = (m0 + ty < M && k < K) ? __half2float(A[(long)(m0 + ty) * K + k]) : 0.f;
        Bs[ty][tx] = (n0 + ty < N && k < K) ? __half2float(Bt[(long)(n0 + ty) * K + k]) : 0.f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < T; ++kk) acc += As[ty][kk] * Bs[tx][kk];
        __syncthreads();
    }
    if (m < M && n < N) C[(long)m * N + n] = __float2half(acc);
}
