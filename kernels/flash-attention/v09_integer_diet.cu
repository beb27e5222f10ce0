// v09 integer diet: v08 with the address arithmetic taken out of the inner loops.
//
// v08 executed about 6.2 instructions per HMMA, FlashAttention-2 about 5.0; the
// difference was integer work (IMAD, LEA, LOP3: ~2.5 per HMMA against ~0.2), spent on
// addresses recomputed for every copy and every ldmatrix.
//  * Copies: a thread always copies the same 16-byte column chunk `ch = tid % 16` of
//    rows `tid / 16 + 8 i`. Row r and row r + 8 have the same swizzle, so the shared
//    offsets of all its chunks are one per-thread base plus constants, and the global
//    addresses one pointer plus constants. Bounds checks only on a partial last tile.
//  * ldmatrix: chunk (2k + b) of a lane's row lands at (2k + b) ^ mr. Writing
//    y = b ^ mr, that is 8·(k >> 2) + 2·((k & 3) ^ (y >> 1)) + (y & 1): four per-thread
//    offsets (k & 3 = 0..3) plus a constant. Q and V share theirs; K has its own.
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

// A thread's share of the tile copies: column chunk `ch` of rows r0 + 8i.
struct Copier {
    unsigned soff;   // shared byte offset of (r0, ch) in a swizzled tile
    int r0, ch;

    __device__ Copier() {
        r0 = threadIdx.x / (D / 8);
        ch = threadIdx.x % (D / 8);
        // Rows r0 + 8i keep r0's swizzle (their low 3 bits are equal).
        soff = (r0 * D + ((ch ^ (r0 & 7)) << 3)) * 2;
    }

    // Starts copying rows [first, first + ROWS) of src (zero-filled past S) to dst.
    template <int ROWS>
    __device__ __forceinline__ void load(unsigned dst, const half* src, int first, int S) const {
        constexpr int STEP = THREADS / (D / 8);   // rows between a thread's chunks
        const half* from = src + (long)(first + r0) * D + ch * 8;
        unsigned to = dst + soff;
        if (first + ROWS <= S) {
#pragma unroll
            for (int i = 0; i < ROWS / STEP; ++i)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                             :: "r"(to + i * STEP * D * 2), "l"(from + i * STEP * D));
        } else {
#pragma unroll
            for (int i = 0; i < ROWS / STEP; ++i) {
                bool in = first + r0 + i * STEP < S;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                             :: "r"(to + i * STEP * D * 2), "l"(in ? from + i * STEP * D : src), "r"(in ? 16 : 0));
            }
        }
    }
};

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of the committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attn_v09(const half* __restrict__ Q, const half* __restrict__ K,
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
    const Copier copier;
    const unsigned qs = smem_addr(Qs), ks0 = smem_addr(Ks), vs0 = smem_addr(Vs);
    constexpr unsigned TILE = BC * D * 2;   // bytes of one K or V buffer
    copier.load<BR>(qs, Q + base, q0, S);
    commit();
    copier.load<BC>(ks0, K + base, 0, S);
    commit();
    copier.load<BC>(vs0, V + base, 0, S);
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
    // ldmatrix addresses. Rows: Q (A fragments), K (B fragments of key-tile pairs), V.
    // Chunk (2k + b) of a row lands at 8·(k >> 2) + 2·((k & 3) ^ (y >> 1)) + (y & 1),
    // y = b ^ mr: four offsets per operand for k & 3, the rest is constant.
    const unsigned q_row = qs + (warp * 32 + (mi & 1) * 8 + mr) * D * 2;   // + 16 mt rows
    const unsigned k_row = ((mi >> 1) * 8 + mr) * D * 2;                    // + 16 p rows
    const unsigned v_row = ((mi & 1) * 8 + mr) * D * 2;                     // + 16 kk rows
    unsigned qv_off[4], k_off[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int yq = (mi >> 1) ^ mr, yk = (mi & 1) ^ mr;
        qv_off[k] = (2 * (k ^ (yq >> 1)) + (yq & 1)) * 16;
        k_off[k] = (2 * (k ^ (yk >> 1)) + (yk & 1)) * 16;
    }

    for (int j = 0; j < tiles; ++j) {
        const int j0 = j * BC;
        const unsigned kt = ks0 + (j & 1) * TILE + k_row;
        const unsigned vt = vs0 + (j & 1) * TILE + v_row;
        wait_groups<1>();   // K tile j (and Q) have landed; V tile j may be in flight
        __syncthreads();
        if (j + 1 < tiles) copier.load<BC>(ks0 + ((j + 1) & 1) * TILE, K + base, j0 + BC, S);
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
            for (int p = 0; p < BC / 16; ++p) ldsm_x4(kb[0][p], kt + p * 16 * D * 2 + k_off[0]);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) ldsm_x4(qa[0][mt], q_row + mt * 16 * D * 2 + qv_off[0]);
#pragma unroll
            for (int ks = 0; ks < D / 16; ++ks) {
                const int cur = ks & 1, nxt = cur ^ 1;
                if (ks + 1 < D / 16) {
                    const int k = ks + 1;
                    const unsigned hi = (k >> 2) * 128;
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt)
                        ldsm_x4(qa[nxt][mt], q_row + mt * 16 * D * 2 + hi + qv_off[k & 3]);
#pragma unroll
                    for (int p = 0; p < BC / 16; ++p) ldsm_x4(kb[nxt][p], kt + p * 16 * D * 2 + hi + k_off[k & 3]);
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
        if (j + 1 < tiles) copier.load<BC>(vs0 + ((j + 1) & 1) * TILE, V + base, j0 + BC, S);
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
        unsigned vb[2][4];
        ldsm_x4_t(vb[0], vt + qv_off[0]);
#pragma unroll
        for (int i = 0; i < STEPS; ++i) {
            if (i + 1 < STEPS) {
                const int kk = (i + 1) / (D / 16), dp = (i + 1) % (D / 16);
                ldsm_x4_t(vb[(i + 1) & 1], vt + kk * 16 * D * 2 + (dp >> 2) * 128 + qv_off[dp & 3]);
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
