// An fp32 matrix multiply C = A·B (N × N), the stand-in for a user's own CUDA program.
// VERSION 1: one thread per element of C, operands from global memory.
// VERSION 2: 32 × 32 tiles of A and B staged in shared memory.
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef VERSION
#define VERSION 1
#endif
constexpr int T = 32;

__global__ void mm_naive(const float* A, const float* B, float* C, int n) {
    int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
    float s = 0.f;
    for (int k = 0; k < n; ++k) s += A[r * n + k] * B[k * n + c];
    C[r * n + c] = s;
}

__global__ void mm_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float a[T][T], b[T][T];
    int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
    float s = 0.f;
    for (int k0 = 0; k0 < n; k0 += T) {
        a[threadIdx.y][threadIdx.x] = A[r * n + k0 + threadIdx.x];
        b[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + c];
        __syncthreads();
        for (int k = 0; k < T; ++k) s += a[threadIdx.y][k] * b[k][threadIdx.x];
        __syncthreads();
    }
    C[r * n + c] = s;
}

int main() {
    const int n = 2048;
    std::vector<float> h(n * n);
    for (auto& x : h) x = rand() / (float)RAND_MAX - 0.5f;
    float *A, *B, *C;
    cudaMalloc(&A, n * n * 4);
    cudaMalloc(&B, n * n * 4);
    cudaMalloc(&C, n * n * 4);
    cudaMemcpy(A, h.data(), n * n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(B, h.data(), n * n * 4, cudaMemcpyHostToDevice);
    dim3 grid(n / T, n / T), block(T, T);
    for (int i = 0; i < 3; ++i) {
#if VERSION == 1
        mm_naive<<<grid, block>>>(A, B, C, n);
#else
        mm_tiled<<<grid, block>>>(A, B, C, n);
#endif
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
    }
    // A check that the product is not nonsense: C[0] against the CPU.
    float c0 = 0.f, got = 0.f;
    for (int k = 0; k < n; ++k) c0 += h[k] * h[k * n];
    cudaMemcpy(&got, C, 4, cudaMemcpyDeviceToHost);
    printf("version %d: C[0] = %g (CPU %g)\n", VERSION, got, c0);
    return (got - c0) * (got - c0) < 1e-3f * (1.f + c0 * c0) ? 0 : 2;
}
