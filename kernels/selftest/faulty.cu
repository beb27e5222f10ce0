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
