// The GEMM ladder's reference on the GPU: C = A·B with A [M, K] row-major and B stored
// column-major, as Bt [N, K] row-major (row n of Bt is column n of B, the way a linear
// layer stores its weight W = Bᵀ). fp16 in, fp64 accumulation, fp16 out, one thread per
// output element: slow and plain, so that it is easy to believe. The check compares it
// with fp64 rows computed on the CPU before it is used to judge the versions.
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(256)
gemm_reference(const half* __restrict__ A, const half* __restrict__ Bt,
               half* __restrict__ C, int M, int N, int K) {
    const int n = blockIdx.x * 16 + threadIdx.x % 16;
    const int m = blockIdx.y * 16 + threadIdx.x / 16;
    if (m >= M || n >= N) return;
    const half* a = A + (long)m * K;
    const half* b = Bt + (long)n * K;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += (double)__half2float(a[k]) * (double)__half2float(b[k]);
    C[(long)m * N + n] = __double2half(acc);
}
