// The fp32 reference every version is checked against: plain CUDA, no tensor cores, no
// fp16 arithmetic, exact expf. Each warp owns 4 query rows; a block of 4 warps shares
// fp32 tiles of 32 keys of K and V in shared memory. Online softmax in fp32.
// Its own output is checked against fp64 CPU rows before any version is judged by it.
#include <cuda_fp16.h>

// NVRTC has no <math.h>: minus infinity, spelled by its bits.
#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif

constexpr int D = HEAD_DIM;
constexpr int ROWS = 4;          // query rows per warp
constexpr int WARPS = 4;
constexpr int KT = 32;           // keys per shared-memory tile
constexpr int DPL = D / 32;      // dims per lane: lane owns d = t * 32 + lane

__device__ __forceinline__ float warp_sum(float x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

extern "C" __global__ void __launch_bounds__(128)
attn_reference(const half* __restrict__ Q, const half* __restrict__ K,
               const half* __restrict__ V, float* __restrict__ R,
               int B, int H, int S, float scale, int causal) {
    __shared__ float ks[KT][D];
    __shared__ float vs[KT][D];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long head = blockIdx.y;
    const int first = blockIdx.x * (WARPS * ROWS);
    const int row0 = first + warp * ROWS;
    const half* q = Q + head * (long)S * D;
    const half* k = K + head * (long)S * D;
    const half* v = V + head * (long)S * D;

    float qr[ROWS][DPL], o[ROWS][DPL], m[ROWS], l[ROWS];
    for (int r = 0; r < ROWS; ++r) {
        m[r] = NEG_INF;
        l[r] = 0.f;
        for (int t = 0; t < DPL; ++t) {
            int row = row0 + r;
            qr[r][t] = row < S ? __half2float(q[(long)row * D + t * 32 + lane]) : 0.f;
            o[r][t] = 0.f;
        }
    }
    int last = min(S - 1, first + WARPS * ROWS - 1);
    int kend = causal ? last + 1 : S;
    for (int j0 = 0; j0 < kend; j0 += KT) {
        __syncthreads();
        for (int idx = threadIdx.x; idx < KT * D; idx += blockDim.x) {
            int r = idx / D, c = idx % D, key = j0 + r;
            ks[r][c] = key < S ? __half2float(k[(long)key * D + c]) : 0.f;
            vs[r][c] = key < S ? __half2float(v[(long)key * D + c]) : 0.f;
        }
        __syncthreads();
        for (int jj = 0; jj < KT && j0 + jj < kend; ++jj) {
            int key = j0 + jj;
            for (int r = 0; r < ROWS; ++r) {
                float part = 0.f;
                for (int t = 0; t < DPL; ++t) part += qr[r][t] * ks[jj][t * 32 + lane];
                float s = warp_sum(part) * scale;
                int row = row0 + r;
                if (row >= S || (causal && key > row)) continue;
                float mn = fmaxf(m[r], s);
                float corr = expf(m[r] - mn);
                float p = expf(s - mn);
                l[r] = l[r] * corr + p;
                for (int t = 0; t < DPL; ++t) o[r][t] = o[r][t] * corr + p * vs[jj][t * 32 + lane];
                m[r] = mn;
            }
        }
    }
    float* out = R + head * (long)S * D;
    for (int r = 0; r < ROWS; ++r) {
        int row = row0 + r;
        if (row >= S) continue;
        for (int t = 0; t < DPL; ++t) out[(long)row * D + t * 32 + lane] = o[r][t] / l[r];
    }
}
