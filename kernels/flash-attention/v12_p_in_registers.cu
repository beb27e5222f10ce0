// v12 P in registers: v11 with the second product reading P from registers.
//
// wgmma takes its A operand from shared memory or from registers (`RS`). The score
// accumulators of the first product have, per 16×16 slice, exactly the register layout of
// an A fragment (as with mma.sync), so P is packed to fp16 in registers and fed to the
// 64×128×16 wgmmas directly: no st.shared of P, no async-proxy fence, and one barrier
// less per tile. B (V) still comes from shared memory through its descriptor.
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
constexpr unsigned KV_BYTES = BC * D * 2;         // 16 KB a stage (the TMA boxes are 64 rows)
constexpr unsigned Q_OFF = 0;
constexpr unsigned K_OFF = Q_OFF + Q_BYTES;       // 2 stages
constexpr unsigned V_OFF = K_OFF + 2 * KV_BYTES;  // 2 stages
constexpr unsigned BAR_OFF = V_OFF + 2 * KV_BYTES;  // mbarriers: Q, K[2], V[2]

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Shared memory written by threads (st.shared) becomes visible to wgmma's async proxy.
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

// D(64×128) += A·B, RS, B N-major.
__device__ __forceinline__ void wgmma_64x128_rs_nmajor_b(float (&d)[64], unsigned const (&a)[4], u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
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

// A TMA descriptor as the host encoded it, passed by value.
struct alignas(64) TensorMap {
    u64 opaque[16];
};

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count));
}

// Arrives on the barrier and tells it how many bytes the copies will deliver.
__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}

// Waits until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

// One 64×64 box of a 2-D tensor map (column x, row y) into shared memory.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(dst), "l"(reinterpret_cast<u64>(&map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

// Both d-halves of a 64-row tile starting at `row` of the [B·H·S, D] matrix.
__device__ __forceinline__ void load_tile(unsigned dst, const TensorMap& map, int row, unsigned bar) {
    mbar_expect(bar, 64 * D * 2);
    tma_load(dst, map, 0, row, bar);
    tma_load(dst + 64 * 128, map, 64, row, bar);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
attn_v12(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal,
         const __grid_constant__ TensorMap tmQ, const __grid_constant__ TensorMap tmK,
         const __grid_constant__ TensorMap tmV) {
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;
    const long head = (long)blockIdx.y * S * D;   // for the output
    const int kend = causal ? min(S, q0 + BR) : S;
    const int tiles = (kend + BC - 1) / BC;

    const unsigned bar_q = base + BAR_OFF, bar_k = bar_q + 8, bar_v = bar_q + 24;
    const int row0 = blockIdx.y * S;   // this head's first row in the [B·H·S, D] maps
    if (threadIdx.x == 0) {
        for (int i = 0; i < 5; ++i) mbar_init(bar_q + 8 * i, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    SS_TRACE_OPEN(tr, 1, threadIdx.x == 0);  // role 1: the one warpgroup, which loads and computes
    if (threadIdx.x == 0) {
        SS_TRACE_BEGIN(tr, 6);
        load_tile(base + Q_OFF, tmQ, row0 + q0, bar_q);
        load_tile(base + K_OFF, tmK, row0, bar_k);
        load_tile(base + V_OFF, tmV, row0, bar_v);
        SS_TRACE_END(tr, 6);
    }
    SS_TRACE_BEGIN(tr, 8);
    mbar_wait(bar_q, 0);
    SS_TRACE_END(tr, 8);

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
        const unsigned stage = j & 1, parity = (j >> 1) & 1;
        // Every warp is done with tile j - 1, whose stages receive tile j + 1.
        SS_TRACE_BEGIN(tr, 7);
        __syncthreads();
        SS_TRACE_END(tr, 7);
        if (threadIdx.x == 0 && j + 1 < tiles) {
            SS_TRACE_BEGIN(tr, 6);
            load_tile(base + K_OFF + (stage ^ 1) * KV_BYTES, tmK, row0 + j0 + BC, bar_k + 8 * (stage ^ 1));
            load_tile(base + V_OFF + (stage ^ 1) * KV_BYTES, tmV, row0 + j0 + BC, bar_v + 8 * (stage ^ 1));
            SS_TRACE_END(tr, 6);
        }
        SS_TRACE_BEGIN(tr, 0);
        mbar_wait(bar_k + 8 * stage, parity);
        SS_TRACE_END(tr, 0);

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

        // P's A fragments: key slice kk is score blocks 2kk (keys 0-7) and 2kk + 1.
        unsigned pa[BC / 16][4];
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
            __half2 h0 = __floats2half2_rn(s[8 * kk], s[8 * kk + 1]);
            __half2 h1 = __floats2half2_rn(s[8 * kk + 2], s[8 * kk + 3]);
            __half2 h2 = __floats2half2_rn(s[8 * kk + 4], s[8 * kk + 5]);
            __half2 h3 = __floats2half2_rn(s[8 * kk + 6], s[8 * kk + 7]);
            pa[kk][0] = *reinterpret_cast<unsigned*>(&h0);
            pa[kk][1] = *reinterpret_cast<unsigned*>(&h1);
            pa[kk][2] = *reinterpret_cast<unsigned*>(&h2);
            pa[kk][3] = *reinterpret_cast<unsigned*>(&h3);
        }
        SS_TRACE_END(tr, 3);
        SS_TRACE_BEGIN(tr, 1);
        mbar_wait(bar_v + 8 * stage, parity);
        SS_TRACE_END(tr, 1);

        // O += P · V over 4 key-slices of 16. P: registers. V: N-major,
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
            wgmma_64x128_rs_nmajor_b(o, pa[kk], dv, 1);
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
