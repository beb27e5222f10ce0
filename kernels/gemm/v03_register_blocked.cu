// v03 register blocking: a block of 256 threads owns a 128×128 tile of C and walks K in
// steps of 16. Each thread computes an 8×8 block of the tile in registers: per k it
// reads 8 values of A and 8 of B from shared memory and does 64 FMAs, where v02 read 2
// values for 1 FMA. The tiles are stored k-major (As[k][m], Bs[k][n]) so that a thread's
// values lie side by side; its 8 rows are two groups of 4 (ty*4 and 64 + ty*4), and its
// 8 columns likewise, so each group is one float4 load and the 16 threads of a half-warp
// read 16 consecutive float4. Global loads are 16-byte vectors of 8 halves where a row
// holds them whole (K a multiple of 8), element by element with zeros past the edges
// otherwise.
#include <cuda_fp16.h>

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;

// Rows r0.. of a [rows, K] matrix, k0..k0+BK, into S[k][r] as fp32 (zeros outside).
__device__ __forceinline__ void load_tile(const half* __restrict__ G, int rows, int K,
                                          int r0, int k0, float (*S)[BM]) {
    const int t = threadIdx.x;
    const int r = t / 2, c = (t % 2) * 8;  // 128 rows × 2 chunks of 8 halves
    const int row = r0 + r, k = k0 + c;
    half v[8];
    if (row < rows && k + 8 <= K && K % 8 == 0) {
        *reinterpret_cast<uint4*>(v) = *reinterpret_cast<const uint4*>(G + (long)row * K + k);
    } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
            v[j] = (row < rows && k + j < K) ? G[(long)row * K + k + j] : __float2half(0.f);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) S[c + j][r] = __half2float(v[j]);
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_v03(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[8][8] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile(A, M, K, m0, k0, As);
        load_tile(Bt, N, K, n0, k0, Bs);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[8], b[8];
            *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
            *reinterpret_cast<float4*>(a + 4) =
                *reinterpret_cast<const float4*>(&As[kk][64 + ty * 4]);
            *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
            *reinterpret_cast<float4*>(b + 4) =
                *reinterpret_cast<const float4*>(&Bs[kk][64 + tx * 4]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (n < N) C[(long)m * N + n] = __float2half(acc[i][j]);
        }
    }
}
