// v10 wgmma: the two products on Hopper's warpgroup MMA, operands in shared memory.
//
// `wgmma.mma_async` is issued by a whole warpgroup (4 warps, 128 threads) and computes a
// 64×N tile per instruction, asynchronously: it reads both operands from shared memory
// through matrix descriptors (address, strides, swizzle mode), runs on the tensor cores
// while the warps go on, and is waited for with `wgmma.commit_group` / `wait_group`.
// One 64×64×16 wgmma replaces 32 warp-level m16n8k16 MMAs and needs no ldmatrix.
//
// A block is one warpgroup owning 64 query rows. Tiles live in shared memory in the
// 128-byte swizzle layout wgmma reads: a [rows][128] fp16 tile is two [rows][64] halves
// (128 bytes a row), and 16-byte chunk c of row r sits at chunk c ^ (r mod 8); 8 rows
// form a 1 KB swizzle atom. Per tile of 64 keys:
//   S (64×64)   = Q · Kᵀ   8 wgmma m64n64k16, A = Q and B = K both K-major
//   softmax on S in registers (the accumulator layout is mma.sync's, 16 rows a warp)
//   P → shared memory as fp16 in the same swizzled layout, fenced for the async proxy
//   O (64×128) += P · V    4 wgmma m64n128k16, B = V N-major (V is [key][d])
// Copies stay cp.async, double-buffered as in v09.
#include <cuda_fp16.h>
#include "stallscope_trace.h"  // pipeline markers: nothing unless `stallscope trace`

#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;
constexpr int BR = 64, BC = 64, THREADS = 128;
typedef unsigned long long u64;

// Shared-memory layout, bytes from a 1 KB-aligned base.
constexpr unsigned Q_BYTES = BR * D * 2;          // 16 KB
constexpr unsigned KV_BYTES = BC * D * 2;         // 16 KB a stage
constexpr unsigned Q_OFF = 0;
constexpr unsigned K_OFF = Q_OFF + Q_BYTES;       // 2 stages
constexpr unsigned V_OFF = K_OFF + 2 * KV_BYTES;  // 2 stages
constexpr unsigned P_OFF = V_OFF + 2 * KV_BYTES;  // [BR][BC] fp16, one swizzled half

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

// Copies written by threads (cp.async, st.shared) become visible to wgmma's async proxy.
__device__ __forceinline__ void fence_async_proxy() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }

// A shared-memory matrix descriptor, 128-byte swizzle: start address, leading and
// stride byte offsets (all in 16-byte units).
__device__ __forceinline__ u64 desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)((lbo >> 4) & 0x3FFF) << 16) |
           ((u64)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// D(64×64) += A·B, SS.
__device__ __forceinline__ void wgmma_64x64_ss(float (&d)[32], u64 da, u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(accumulate));
}

// D(64×128) += A·B, SS, B N-major.
__device__ __forceinline__ void wgmma_64x128_ss_nmajor_b(float (&d)[64], u64 da, u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(accumulate));
}


__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// A thread's share of the tile copies into the swizzled layout: 16-byte chunk `ch` of
// rows r0 + 8i (rows 8 apart share a swizzle).
struct Copier {
    unsigned soff;
    int r0, ch;
    __device__ Copier() {
        r0 = threadIdx.x / 16;
        ch = threadIdx.x % 16;
        const int half = ch / 8, c = ch % 8;
        soff = half * (BC * 128) + r0 * 128 + ((c ^ r0) << 4);
    }
    // Rows [first, first + 64) of src (zero-filled past S); both tiles have 64 rows.
    __device__ __forceinline__ void load(unsigned dst, const half* src, int first, int S) const {
        const half* from = src + (long)(first + r0) * D + ch * 8;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            bool in = first + r0 + 8 * i < S;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                         :: "r"(dst + soff + i * 8 * 128), "l"(in ? from + i * 8 * D : src), "r"(in ? 16 : 0));
        }
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 2)
attn_v10(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal) {
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    unsigned char* base_ptr = smem_raw + (base - smem_addr(smem_raw));

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;
    const long head = (long)blockIdx.y * S * D;
    const int kend = causal ? min(S, q0 + BR) : S;
    const int tiles = (kend + BC - 1) / BC;

    const Copier copier;
    SS_TRACE_OPEN(tr, 1, threadIdx.x == 0);  // role 1: the one warpgroup, which loads and computes
    SS_TRACE_BEGIN(tr, 6);
    copier.load(base + Q_OFF, Q + head, q0, S);
    commit();
    copier.load(base + K_OFF, K + head, 0, S);
    commit();
    copier.load(base + V_OFF, V + head, 0, S);
    commit();
    SS_TRACE_END(tr, 6);

    float o[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] = 0.f;
    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.f, 0.f};
    const int row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
    const float c = scale * 1.4426950408889634f;
    const int warp_first = q0 + warp * 16;

    for (int j = 0; j < tiles; ++j) {
        const int j0 = j * BC;
        const unsigned kt = base + K_OFF + (j & 1) * KV_BYTES;
        const unsigned vt = base + V_OFF + (j & 1) * KV_BYTES;
        SS_TRACE_BEGIN(tr, 0);
        wait_groups<1>();   // Q and K tile j have landed
        fence_async_proxy();
        __syncthreads();
        SS_TRACE_END(tr, 0);
        SS_TRACE_BEGIN(tr, 6);
        if (j + 1 < tiles) copier.load(base + K_OFF + ((j + 1) & 1) * KV_BYTES, K + head, j0 + BC, S);
        commit();
        SS_TRACE_END(tr, 6);

        // S = Q · Kᵀ over 8 d-slices of 16: a slice is 32 bytes into the 128-byte rows
        // of one tile half (d 0-63, then 64-127).
        float s[32];
        SS_TRACE_BEGIN(tr, 2);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
            const unsigned off = (ks / 4) * (BR * 128) + (ks % 4) * 32;
            const unsigned koff = (ks / 4) * (BC * 128) + (ks % 4) * 32;
            wgmma_64x64_ss(s, desc(base + Q_OFF + off, 16, 1024), desc(kt + koff, 16, 1024), ks > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        SS_TRACE_END(tr, 2);

        SS_TRACE_BEGIN(tr, 3);
        if (j0 + BC > S || (causal && j0 + BC - 1 > warp_first)) {
#pragma unroll
            for (int i = 0; i < 32; ++i) {
                int key = j0 + (i / 4) * 8 + t * 2 + (i & 1);
                if (key >= S || (causal && key > row[(i >> 1) & 1])) s[i] = NEG_INF;
            }
        }
        float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int i = 0; i < 32; i += 4) {
            mx[0] = fmaxf(mx[0], fmaxf(s[i], s[i + 1]));
            mx[1] = fmaxf(mx[1], fmaxf(s[i + 2], s[i + 3]));
        }
        float corr[2], mc[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            float mn = fmaxf(m[r], mx[r]);
            float use = mn == NEG_INF ? 0.f : mn;
            corr[r] = exp2_approx((m[r] - use) * c);
            m[r] = mn;
            mc[r] = use * c;
        }
        float sum[2] = {0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            float p = exp2_approx(fmaf(s[i], c, -mc[(i >> 1) & 1]));
            s[i] = p;
            sum[(i >> 1) & 1] += p;
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) l[r] = l[r] * corr[r] + sum[r];
#pragma unroll
        for (int i = 0; i < 64; ++i) o[i] *= corr[(i >> 1) & 1];

        // P as fp16 into the swizzled [64][64] tile: row r, key column 8j + 2t.
#pragma unroll
        for (int jb = 0; jb < BC / 8; ++jb)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int pr = warp * 16 + g + 8 * r;
                __half2 h = __floats2half2_rn(s[4 * jb + 2 * r], s[4 * jb + 2 * r + 1]);
                unsigned* dst = reinterpret_cast<unsigned*>(base_ptr + P_OFF + pr * 128 + ((jb ^ (pr & 7)) << 4) + 4 * t);
                *dst = *reinterpret_cast<unsigned*>(&h);
            }
        fence_async_proxy();
        SS_TRACE_END(tr, 3);

        SS_TRACE_BEGIN(tr, 1);
        wait_groups<1>();   // V tile j has landed
        fence_async_proxy();
        __syncthreads();    // and every warp's part of P is written
        SS_TRACE_END(tr, 1);
        SS_TRACE_BEGIN(tr, 6);
        if (j + 1 < tiles) copier.load(base + V_OFF + ((j + 1) & 1) * KV_BYTES, V + head, j0 + BC, S);
        commit();
        SS_TRACE_END(tr, 6);

        // O += P · V over 4 key-slices of 16. P: K-major, 32 bytes a slice. V: N-major,
        // a slice is 16 keys = 2 swizzle atoms (2 KB); the d-halves are a tile-half apart.
        SS_TRACE_BEGIN(tr, 4);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
#ifdef SWAP_V_STRIDES
            const u64 dv = desc(vt + kk * 2048, 1024, BC * 128);
#else
            const u64 dv = desc(vt + kk * 2048, BC * 128, 1024);
#endif
            wgmma_64x128_ss_nmajor_b(o, desc(base + P_OFF + kk * 32, 16, 1024), dv, 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
        SS_TRACE_END(tr, 4);
    }

    SS_TRACE_BEGIN(tr, 5);
    half* out = O + head;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float sum = l[r];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        if (row[r] >= S) continue;
        float inv = 1.f / sum;
#pragma unroll
        for (int jd = 0; jd < D / 8; ++jd)
            *reinterpret_cast<__half2*>(out + (long)row[r] * D + jd * 8 + t * 2) =
                __floats2half2_rn(o[4 * jd + 2 * r] * inv, o[4 * jd + 2 * r + 1] * inv);
    }
    SS_TRACE_END(tr, 5);
}
