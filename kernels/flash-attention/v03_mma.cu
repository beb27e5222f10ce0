// v03 mma.sync: the two matrix products run on the tensor cores with the warp-level
// instruction mma.sync.m16n8k16 (fp16 operands, fp32 accumulators).
//
// A block of 4 warps owns 64 query rows; each warp owns 16 of them for the whole kernel
// (the FlashAttention-2 split: no other warp needs its rows, so the softmax needs no
// shared memory and no block barrier). Per tile of 64 keys a warp computes
//   S (16×64) = Q (16×128) · Kᵀ     8 key-tiles × 8 d-slices = 64 mma
//   online softmax on S in registers (4 lanes share a row: shuffles)
//   O (16×128) += P (16×64) · V     16 d-tiles × 4 key-slices = 64 mma
// The accumulator layout of S is, pair by pair, the A-operand layout of P: P goes from
// the S registers to the second product without touching memory.
//
// Fragments come from shared memory with plain 32-bit (K) and 16-bit (V) loads from
// row-major tiles whose rows are 256 bytes apart: eight lanes of a warp hit the same
// bank. That is this version's known weakness.
#include <cuda_fp16.h>

#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;
constexpr int BR = 64, BC = 64, WARPS = 4, THREADS = WARPS * 32;

__device__ __forceinline__ void mma16816(float* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
}

__device__ __forceinline__ unsigned ld32(const half* p) { return *reinterpret_cast<const unsigned*>(p); }

__device__ __forceinline__ unsigned pair(half lo, half hi) {
    __half2 h = __halves2half2(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
}

// Copies a [rows][D] fp16 tile from global (rows from `first`, up to S) into shared.
__device__ __forceinline__ void load_tile(half* dst, const half* src, int first, int rows, int S) {
    for (int c = threadIdx.x; c < rows * D / 8; c += THREADS) {
        int r = c / (D / 8), d0 = (c % (D / 8)) * 8;
        int4 v = first + r < S ? *reinterpret_cast<const int4*>(src + (long)(first + r) * D + d0)
                               : make_int4(0, 0, 0, 0);
        *reinterpret_cast<int4*>(dst + r * D + d0) = v;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
attn_v03(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal) {
    extern __shared__ __align__(16) half smem[];
    half* Qs = smem;             // [BR][D]
    half* Ks = Qs + BR * D;      // [BC][D]
    half* Vs = Ks + BC * D;      // [BC][D]

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;   // mma groupID and thread-in-group
    const int q0 = blockIdx.x * BR;
    const long base = (long)blockIdx.y * S * D;

    load_tile(Qs, Q + base, q0, BR, S);
    __syncthreads();
    // Q fragments for this warp's 16 rows, all 8 d-slices: kept in registers.
    unsigned qa[D / 16][4];
    {
        const half* r0 = Qs + (warp * 16 + g) * D;
        const half* r8 = r0 + 8 * D;
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            qa[ks][0] = ld32(r0 + ks * 16 + t * 2);
            qa[ks][1] = ld32(r8 + ks * 16 + t * 2);
            qa[ks][2] = ld32(r0 + ks * 16 + 8 + t * 2);
            qa[ks][3] = ld32(r8 + ks * 16 + 8 + t * 2);
        }
    }

    float o[D / 8][4];
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.f, 0.f};   // rows g and g + 8
    const int row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};

    const int kend = causal ? min(S, q0 + BR) : S;
    for (int j0 = 0; j0 < kend; j0 += BC) {
        __syncthreads();
        load_tile(Ks, K + base, j0, BC, S);
        load_tile(Vs, V + base, j0, BC, S);
        __syncthreads();

        float s[BC / 8][4];
#pragma unroll
        for (int nt = 0; nt < BC / 8; ++nt) {
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
            const half* krow = Ks + (nt * 8 + g) * D;
#pragma unroll
            for (int ks = 0; ks < D / 16; ++ks)
                mma16816(s[nt], qa[ks], ld32(krow + ks * 16 + t * 2), ld32(krow + ks * 16 + 8 + t * 2));
        }

        // Scale, mask, and the running row maximum.
        float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                int key = j0 + nt * 8 + t * 2 + (e & 1);
                int r = e >> 1;
                float x = s[nt][e] * scale;
                if (key >= S || (causal && key > row[r])) x = NEG_INF;
                s[nt][e] = x;
                mx[r] = fmaxf(mx[r], x);
            }
        float corr[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            float mn = fmaxf(m[r], mx[r]);
            float use = mn == NEG_INF ? 0.f : mn;   // a row with every key masked so far
            corr[r] = __expf(m[r] - use);
            m[r] = mn;
            mx[r] = use;
        }
        float sum[2] = {0.f, 0.f};
#pragma unroll
        for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float p = __expf(s[nt][e] - mx[e >> 1]);
                s[nt][e] = p;
                sum[e >> 1] += p;
            }
#pragma unroll
        for (int r = 0; r < 2; ++r) l[r] = l[r] * corr[r] + sum[r];
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt) {
            o[dt][0] *= corr[0];
            o[dt][1] *= corr[0];
            o[dt][2] *= corr[1];
            o[dt][3] *= corr[1];
        }

        // O += P · V: P's A fragments straight from the S accumulators.
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
            unsigned pa[4] = {pack(s[2 * kk][0], s[2 * kk][1]), pack(s[2 * kk][2], s[2 * kk][3]),
                              pack(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
            const half* v0 = Vs + (kk * 16 + t * 2) * D;
            const half* v8 = v0 + 8 * D;
#pragma unroll
            for (int dt = 0; dt < D / 8; ++dt) {
                int d = dt * 8 + g;
                unsigned b0 = pair(v0[d], v0[D + d]);
                unsigned b1 = pair(v8[d], v8[D + d]);
                mma16816(o[dt], pa, b0, b1);
            }
        }
    }

    // Finish the row sums across the 4 lanes of a row, normalize, store.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
    half* out = O + base;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        if (row[r] >= S) continue;
        float inv = 1.f / l[r];
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt)
            *reinterpret_cast<__half2*>(out + (long)row[r] * D + dt * 8 + t * 2) =
                __floats2half2_rn(o[dt][2 * r] * inv, o[dt][2 * r + 1] * inv);
    }
}
