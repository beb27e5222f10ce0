// v06 cp.async pipeline: v05's swizzled tiles and ldmatrix fragments, three stages deep.
// The copies of tiles k+1 and k+2 into shared memory are in flight (cp.async, 16 bytes a
// lane, global → shared without passing through registers) while the MMAs of tile k run;
// one barrier a tile instead of two. Dynamic shared memory: 3 stages × (A + B) × 8 KiB =
// 48 KiB. Rows past M or N, and the part of a row past K, are zero-filled by the copy
// itself (its source size); a K that is no multiple of 8 leaves rows unaligned for
// 16-byte copies, and such tiles are stored element by element as in v05.
#include <cuda_fp16.h>

constexpr int BM = 128, BN = 128, BK = 32, CHUNKS = BK / 8, THREADS = 128, STAGES = 3;
constexpr int TILE = BM * BK;  // halves of one operand's tile in one stage

// Where chunk `c` (8 halves) of tile row `r` lives.
__device__ __forceinline__ int swz(int r, int c) { return r * BK + ((c ^ ((r >> 1) & 3)) * 8); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Starts copying rows r0.. of a [rows, K] matrix, k0..k0+BK, into the swizzled tile S
// (zeros outside).
__device__ __forceinline__ void load_tile_async(const half* __restrict__ G, int rows, int K,
                                                int r0, int k0, half* S) {
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; ++i) {
        const int id = threadIdx.x + i * THREADS;
        const int r = id / CHUNKS, c = id % CHUNKS;
        const int row = r0 + r, k = k0 + c * 8;
        half* dst = S + swz(r, c);
        if (K % 8 == 0) {
            const int left = row < rows ? K - k : 0;
            const int bytes = left >= 8 ? 16 : (left > 0 ? left * 2 : 0);
            const half* from = bytes > 0 ? G + (long)row * K + k : G;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                         :: "r"(smem_addr(dst)), "l"(from), "r"(bytes));
        } else {
#pragma unroll
            for (int j = 0; j < 8; ++j)
                dst[j] = (row < rows && k + j < K) ? G[(long)row * K + k + j] : __float2half(0.f);
        }
    }
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of the committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_groups() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
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
gemm_v06(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    extern __shared__ __align__(128) half smem[];
    half* As = smem;                  // STAGES tiles of A
    half* Bs = smem + STAGES * TILE;  // then STAGES tiles of Bt
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t4 = lane % 4;
    const int wm = (warp / 2) * 64, wn = (warp % 2) * 64;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int tiles = (K + BK - 1) / BK;
    float acc[4][8][4] = {};
    // The first STAGES - 1 tiles in flight; one commit group per tile, empty past the
    // end, so that the count of groups in flight stays the same every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) {
            load_tile_async(A, M, K, m0, s * BK, As + s * TILE);
            load_tile_async(Bt, N, K, n0, s * BK, Bs + s * TILE);
        }
        commit();
    }
    for (int t = 0; t < tiles; ++t) {
        wait_groups<STAGES - 2>();  // tile t has landed (this lane's copies) …
        __syncthreads();            // … everyone's, and stage (t - 1) % STAGES is free
        const int next = t + STAGES - 1;
        if (next < tiles) {
            load_tile_async(A, M, K, m0, next * BK, As + (next % STAGES) * TILE);
            load_tile_async(Bt, N, K, n0, next * BK, Bs + (next % STAGES) * TILE);
        }
        commit();
        const half* a_tile = As + (t % STAGES) * TILE;
        const half* b_tile = Bs + (t % STAGES) * TILE;
#pragma unroll
        for (int kc = 0; kc < CHUNKS; kc += 2) {
            unsigned a[4][4], b[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                const int r = wm + mi * 16 + lane % 16;
                ldsm_x4(a[mi], smem_addr(a_tile + swz(r, kc + lane / 16)));
            }
#pragma unroll
            for (int nj = 0; nj < 4; ++nj) {
                const int r = wn + nj * 16 + lane % 8 + (lane / 16) * 8;
                unsigned q[4];
                ldsm_x4(q, smem_addr(b_tile + swz(r, kc + (lane / 8) % 2)));
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
