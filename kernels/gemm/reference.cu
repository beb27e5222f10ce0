// The GEMM ladder's reference on the GPU: C = A·B with A [M, K] row-major and B stored
// column-major, as Bt [N, K] row-major (row n of Bt is column n of B, the way a linear
// layer stores its weight W = Bᵀ). fp16 in, fp64 accumulation, one thread per output
// element: slow and plain, so that it is easy to believe. Its output is fp32, not fp16
// like the versions': the runner compares every element of a version's output with it,
// and an fp16 reference would add its own rounding (up to half an fp16 ulp) to every
// comparison. The check compares it with fp64 rows computed on the CPU before it is used
// to judge the versions.
//
// Launch: grid (cdiv(N, 16), cdiv(M, 16)), block 256 (16×16 threads, x along N), no
// shared memory.
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(256)
gemm_reference(const half* __restrict__ A, const half* __restrict__ Bt,
               float* __restrict__ C, int M, int N, int K) {
    const int n = blockIdx.x * 16 + threadIdx.x % 16;
    const int m = blockIdx.y * 16 + threadIdx.x / 16;
    if (m >= M || n >= N) return;
    const half* a = A + (long)m * K;
    const half* b = Bt + (long)n * K;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += (double)__half2float(a[k]) * (double)__half2float(b[k]);
    C[(long)m * N + n] = (float)acc;
}
