// v05 ldmatrix + swizzle: v04's tiles and MMAs, but each fragment is loaded with
// ldmatrix.x4 (four 8×8 matrices per instruction, one row address per lane) instead of
// four 32-bit loads per lane, and the shared tiles lose their padding: a tile row of 32
// halves is four 16-byte chunks, and chunk c of row r is stored at chunk c ^ ((r / 2) % 4).
// Without it, the 8 rows an ldmatrix reads (64 bytes apart) fall in two bank groups (a
// 4-way conflict); with it, in eight. The tiles shrink from v04's 20 KiB (padded rows)
// to 16 KiB.
#include <cuda_fp16.h>

constexpr int BM = 128, BN = 128, BK = 32, CHUNKS = BK / 8, THREADS = 128;

// Where chunk `c` (8 halves) of tile row `r` lives.
__device__ __forceinline__ int swz(int r, int c) { return r * BK + ((c ^ ((r >> 1) & 3)) * 8); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Rows r0.. of a [rows, K] matrix, k0..k0+BK, into the swizzled tile S (zeros outside).
__device__ __forceinline__ void load_tile(const half* __restrict__ G, int rows, int K,
                                          int r0, int k0, half* S) {
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; ++i) {
        const int id = threadIdx.x + i * THREADS;
        const int r = id / CHUNKS, c = id % CHUNKS;
        const int row = r0 + r, k = k0 + c * 8;
        half* dst = S + swz(r, c);
        if (row < rows && k + 8 <= K && K % 8 == 0) {
            *reinterpret_cast<uint4*>(dst) =
                *reinterpret_cast<const uint4*>(G + (long)row * K + k);
        } else {
#pragma unroll
            for (int j = 0; j < 8; ++j)
                dst[j] = (row < rows && k + j < K) ? G[(long)row * K + k + j] : __float2half(0.f);
        }
    }
}

__device__ __forceinline__ void ldsm_x4(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void mma(float* d, const unsigned* a, const unsigned* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// C[m][n..n+1] from two accumulators, as one half2 where it can.
__device__ __forceinline__ void store2(half* C, int M, int N, int m, int n, float x, float y) {
    if (m >= M) return;
    half* p = C + (long)m * N + n;
    if (n + 1 < N && N % 2 == 0) {
        *reinterpret_cast<half2*>(p) = __floats2half2_rn(x, y);
    } else {
        if (n < N) p[0] = __float2half(x);
        if (n + 1 < N) p[1] = __float2half(y);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_v05(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    __shared__ __align__(128) half As[BM * BK];
    __shared__ __align__(128) half Bs[BN * BK];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t4 = lane % 4;
    const int wm = (warp / 2) * 64, wn = (warp % 2) * 64;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[4][8][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile(A, M, K, m0, k0, As);
        load_tile(Bt, N, K, n0, k0, Bs);
        __syncthreads();
#pragma unroll
        for (int kc = 0; kc < CHUNKS; kc += 2) {  // k16 steps: chunks kc, kc + 1
            unsigned a[4][4], b[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                // Lanes 0-15: rows 0-15 at chunk kc; lanes 16-31: the same rows at kc + 1.
                const int r = wm + mi * 16 + lane % 16;
                ldsm_x4(a[mi], smem_addr(As + swz(r, kc + lane / 16)));
            }
#pragma unroll
            for (int nj = 0; nj < 4; ++nj) {
                // Two n-tiles of 8: matrices (n 0-7, kc), (n 0-7, kc+1), (n 8-15, kc),
                // (n 8-15, kc+1), i.e. b[2nj][0..1] and b[2nj+1][0..1].
                const int r = wn + nj * 16 + lane % 8 + (lane / 16) * 8;
                unsigned q[4];
                ldsm_x4(q, smem_addr(Bs + swz(r, kc + (lane / 8) % 2)));
                b[2 * nj][0] = q[0];
                b[2 * nj][1] = q[1];
                b[2 * nj + 1][0] = q[2];
                b[2 * nj + 1][1] = q[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 8; ++ni) mma(acc[mi][ni], a[mi], b[ni]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) {
            const int m = m0 + wm + mi * 16 + g, n = n0 + wn + ni * 8 + 2 * t4;
            store2(C, M, N, m, n, acc[mi][ni][0], acc[mi][ni][1]);
            store2(C, M, N, m + 8, n, acc[mi][ni][2], acc[mi][ni][3]);
        }
}
