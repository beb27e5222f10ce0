// v08 two m-tiles per warp: 4 warps of 32 query rows instead of 8 warps of 16.
//
// In v07 every K and V fragment loaded from shared memory fed the MMAs of one 16-row
// m-tile. Now a warp owns two m-tiles (rows warp*32 + 0-15 and + 16-31), and each
// fragment feeds both: half the ldmatrix per MMA, and twice the independent MMAs per
// fragment load. The price is registers: two output tiles (128) and two score tiles
// (64) per thread leave no room to keep Q's fragments, so they are loaded from shared
// memory per d-slice, one step ahead like K's. Blocks are 128 threads; two fit per SM.
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;
#ifndef BC_KEYS
#define BC_KEYS 64
#endif
constexpr int BR = 128, BC = BC_KEYS, WARPS = 4, THREADS = WARPS * 32;
constexpr int MT = 2;   // 16-row m-tiles per warp
// Two blocks of 4 warps fit on an SM at up to 255 registers per thread.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif

__device__ __forceinline__ void mma16816(float* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ unsigned pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
}

// Element offset of 16-byte chunk `ch` of row `r` in a swizzled [rows][D] tile.
__device__ __forceinline__ int swz(int r, int ch) { return r * D + ((ch ^ (r & 7)) << 3); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldsm_x4(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void ldsm_x4_t(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// Starts copying a [rows][D] fp16 tile (rows from `first`; rows at or past S are
// zero-filled) into a swizzled shared tile, 16 bytes per cp.async.
__device__ __forceinline__ void load_tile_async(half* dst, const half* src, int first, int rows, int S) {
    for (int c = threadIdx.x; c < rows * D / 8; c += THREADS) {
        int r = c / (D / 8), ch = c % (D / 8);
        bool in = first + r < S;
        const half* from = src + (long)(in ? first + r : 0) * D + ch * 8;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                     :: "r"(smem_addr(dst + swz(r, ch))), "l"(from), "r"(in ? 16 : 0));
    }
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of the committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attn_v08(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal) {
    extern __shared__ __align__(16) half smem[];
    half* Qs = smem;             // [BR][D]
    half* Ks = Qs + BR * D;      // [2][BC][D]
    half* Vs = Ks + 2 * BC * D;  // [2][BC][D]

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;   // mma groupID and thread-in-group
    const int mi = lane >> 3, mr = lane & 7;  // ldmatrix: which 8×8 matrix, which row
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;
    const long base = (long)blockIdx.y * S * D;

    const int kend = causal ? min(S, q0 + BR) : S;
    const int tiles = (kend + BC - 1) / BC;
    load_tile_async(Qs, Q + base, q0, BR, S);
    commit();
    load_tile_async(Ks, K + base, 0, BC, S);
    commit();
    load_tile_async(Vs, V + base, 0, BC, S);
    commit();

    float o[MT][D / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < D / 8; ++i) o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
    // Rows g and g + 8 of each m-tile.
    float m[MT][2], l[MT][2];
    int row[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            m[mt][r] = NEG_INF;
            l[mt][r] = 0.f;
            row[mt][r] = q0 + warp * 32 + mt * 16 + r * 8 + g;
        }
    const int warp_first = q0 + warp * 32, warp_last = warp_first + 31;
    const float c = scale * 1.4426950408889634f;   // scale · log2(e)
    // This lane's ldmatrix rows: Q (A fragments), K (B fragments of key-tile pairs).
    const int qr = warp * 32 + (mi & 1) * 8 + mr;   // + 16 mt
    const int kr = (mi >> 1) * 8 + mr;              // + 16 p

    for (int j = 0; j < tiles; ++j) {
        const int j0 = j * BC;
        const half* Kt = Ks + (j & 1) * BC * D;
        const half* Vt = Vs + (j & 1) * BC * D;
        wait_groups<1>();   // K tile j (and Q) have landed; V tile j may be in flight
        __syncthreads();
        if (j + 1 < tiles) load_tile_async(Ks + ((j + 1) & 1) * BC * D, K + base, j0 + BC, BC, S);
        commit();

        const bool skip = causal && j0 > warp_last;
        float s[MT][BC / 8][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < BC / 8; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.f;
        if (!skip) {
            unsigned kb[2][BC / 16][4];
            unsigned qa[2][MT][4];
#pragma unroll
            for (int p = 0; p < BC / 16; ++p) ldsm_x4(kb[0][p], smem_addr(Kt + swz(kr + 16 * p, mi & 1)));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) ldsm_x4(qa[0][mt], smem_addr(Qs + swz(qr + 16 * mt, mi >> 1)));
#pragma unroll
            for (int ks = 0; ks < D / 16; ++ks) {
                const int cur = ks & 1, nxt = cur ^ 1;
                if (ks + 1 < D / 16) {
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt)
                        ldsm_x4(qa[nxt][mt], smem_addr(Qs + swz(qr + 16 * mt, (ks + 1) * 2 + (mi >> 1))));
#pragma unroll
                    for (int p = 0; p < BC / 16; ++p)
                        ldsm_x4(kb[nxt][p], smem_addr(Kt + swz(kr + 16 * p, (ks + 1) * 2 + (mi & 1))));
                }
#pragma unroll
                for (int p = 0; p < BC / 16; ++p)
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt) {
                        mma16816(s[mt][2 * p], qa[cur][mt], kb[cur][p][0], kb[cur][p][1]);
                        mma16816(s[mt][2 * p + 1], qa[cur][mt], kb[cur][p][2], kb[cur][p][3]);
                    }
            }

            if (j0 + BC > S || (causal && j0 + BC - 1 > warp_first)) {
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            int key = j0 + nt * 8 + t * 2 + (e & 1);
                            if (key >= S || (causal && key > row[mt][e >> 1])) s[mt][nt][e] = NEG_INF;
                        }
            }
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
                for (int nt = 0; nt < BC / 8; ++nt) {
                    mx[0] = fmaxf(mx[0], fmaxf(s[mt][nt][0], s[mt][nt][1]));
                    mx[1] = fmaxf(mx[1], fmaxf(s[mt][nt][2], s[mt][nt][3]));
                }
                float corr[2], mc[2];
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
                    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
                    float mn = fmaxf(m[mt][r], mx[r]);
                    float use = mn == NEG_INF ? 0.f : mn;   // a row with every key masked so far
                    corr[r] = exp2_approx((m[mt][r] - use) * c);
                    m[mt][r] = mn;
                    mc[r] = use * c;
                }
                float sum[2] = {0.f, 0.f};
#pragma unroll
                for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        float p = exp2_approx(fmaf(s[mt][nt][e], c, -mc[e >> 1]));
                        s[mt][nt][e] = p;
                        sum[e >> 1] += p;
                    }
#pragma unroll
                for (int r = 0; r < 2; ++r) l[mt][r] = l[mt][r] * corr[r] + sum[r];
#pragma unroll
                for (int dt = 0; dt < D / 8; ++dt) {
                    o[mt][dt][0] *= corr[0];
                    o[mt][dt][1] *= corr[0];
                    o[mt][dt][2] *= corr[1];
                    o[mt][dt][3] *= corr[1];
                }
            }
        }

        wait_groups<1>();   // V tile j has landed; K tile j + 1 may still be in flight
        __syncthreads();
        if (j + 1 < tiles) load_tile_async(Vs + ((j + 1) & 1) * BC * D, V + base, j0 + BC, BC, S);
        commit();

        // O += P · V: P's A fragments straight from the S accumulators.
        if (skip) continue;
        unsigned pa[MT][BC / 16][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int kk = 0; kk < BC / 16; ++kk) {
                pa[mt][kk][0] = pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                pa[mt][kk][1] = pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                pa[mt][kk][2] = pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                pa[mt][kk][3] = pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
        // Step i = (key slice kk, d-tile pair dp): one ldmatrix.trans feeds 4 MMAs.
        constexpr int STEPS = (BC / 16) * (D / 16);
        const int vr = (mi & 1) * 8 + mr;
        unsigned vb[2][4];
        ldsm_x4_t(vb[0], smem_addr(Vt + swz(vr, mi >> 1)));
#pragma unroll
        for (int i = 0; i < STEPS; ++i) {
            if (i + 1 < STEPS) {
                const int kk = (i + 1) / (D / 16), dp = (i + 1) % (D / 16);
                ldsm_x4_t(vb[(i + 1) & 1], smem_addr(Vt + swz(kk * 16 + vr, 2 * dp + (mi >> 1))));
            }
            const int kk = i / (D / 16), dp = i % (D / 16);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                mma16816(o[mt][2 * dp], pa[mt][kk], vb[i & 1][0], vb[i & 1][1]);
                mma16816(o[mt][2 * dp + 1], pa[mt][kk], vb[i & 1][2], vb[i & 1][3]);
            }
        }
    }

    // Finish the row sums across the 4 lanes of a row, normalize, store.
    half* out = O + base;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float sum = l[mt][r];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            if (row[mt][r] >= S) continue;
            float inv = 1.f / sum;
#pragma unroll
            for (int dt = 0; dt < D / 8; ++dt)
                *reinterpret_cast<__half2*>(out + (long)row[mt][r] * D + dt * 8 + t * 2) =
                    __floats2half2_rn(o[mt][dt][2 * r] * inv, o[mt][dt][2 * r + 1] * inv);
        }
}
