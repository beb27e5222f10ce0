// v18 ping-pong: v17 with the two consumer warpgroups taking turns at the tensor cores.
//
// In v17 the two consumer warpgroups run side by side, unordered: both issue their
// products at about the same time, both then compute their softmax at the same time,
// and in that stretch the tensor cores have nothing to do while the special-function
// units are queued by eight warps at once. Now two named barriers (one per consumer)
// hand a token back and forth: a warpgroup waits for its turn, issues its wgmmas (the
// next Q·Kᵀ and the current P·V), and passes the turn on before it computes its softmax.
// The other warpgroup's products then run while this one does its exponentials. Both
// warpgroups take the same number of turns in a block (with BR = BC = 128, a causal
// block's two warpgroups see the same key tiles), so the token never stalls.
#include <cuda_fp16.h>
#include "stallscope_trace.h"  // pipeline markers: nothing unless `stallscope trace`

#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;
#ifndef BC_KEYS
#define BC_KEYS 128
#endif
constexpr int BC = BC_KEYS;
constexpr int CONSUMERS = 2;                 // consumer warpgroups, 64 query rows each
constexpr int BR = 64 * CONSUMERS;
constexpr int THREADS = 128 * (CONSUMERS + 1);
#ifndef STAGES_KV
#define STAGES_KV 2
#endif
constexpr int STAGES = STAGES_KV;            // K and V ring depth
typedef unsigned long long u64;

// Shared-memory layout, bytes from a 1 KB-aligned base.
constexpr unsigned QW_BYTES = 64 * D * 2;              // one consumer's Q tile, 16 KB
constexpr unsigned KV_BYTES = BC * D * 2;               // one K or V stage
constexpr unsigned Q_OFF = 0;
constexpr unsigned K_OFF = Q_OFF + CONSUMERS * QW_BYTES;
constexpr unsigned V_OFF = K_OFF + STAGES * KV_BYTES;
// mbarriers: Q, then per stage K full, V full, K empty, V empty.
constexpr unsigned BAR_OFF = V_OFF + STAGES * KV_BYTES;

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


// D(64×128) += A·B, SS.
__device__ __forceinline__ void wgmma_64x128_ss(float (&d)[64], u64 da, u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
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

// S (64×BC) = Q·Kᵀ over 8 d-slices; the slice is 32 bytes into one d-half's rows.
template <int N>
__device__ __forceinline__ void score(float (&sc)[N / 2], unsigned qt, unsigned kt) {
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
        const unsigned qoff = (ks / 4) * (64 * 128) + (ks % 4) * 32;
        const unsigned koff = (ks / 4) * (N * 128) + (ks % 4) * 32;
        if constexpr (N == 64)
            wgmma_64x64_ss(sc, desc(qt + qoff, 16, 1024), desc(kt + koff, 16, 1024), ks > 0);
        else
            wgmma_64x128_ss(sc, desc(qt + qoff, 16, 1024), desc(kt + koff, 16, 1024), ks > 0);
    }
}

// Pins registers that an asynchronous wgmma writes: code that reads them after a wait
// may not be moved above it.
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// One thread's arrival (consumers release a stage with it).
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
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

// Named barrier `id` (1 and 2; 0 is __syncthreads) counts 256 threads: the 128 of the
// warpgroup waiting for its turn (bar.sync) and the 128 of the other one handing it
// over (bar.arrive, which does not wait).
__device__ __forceinline__ void turn_wait(int id) { asm volatile("bar.sync %0, 256;\n" :: "r"(id) : "memory"); }
__device__ __forceinline__ void turn_pass(int id) { asm volatile("bar.arrive %0, 256;\n" :: "r"(id) : "memory"); }

// One 64×64 box of a 2-D tensor map (column x, row y) into shared memory.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(dst), "l"(reinterpret_cast<u64>(&map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

// Both d-halves of a BC-row K or V tile starting at `row` of the [B·H·S, D] matrix:
// each half is [BC][64], filled by boxes of 64 rows.
__device__ __forceinline__ void load_tile(unsigned dst, const TensorMap& map, int row, unsigned bar) {
    mbar_expect(bar, BC * D * 2);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int rb = 0; rb < BC / 64; ++rb)
            tma_load(dst + h * BC * 128 + rb * 64 * 128, map, 64 * h, row + 64 * rb, bar);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
attn_v18(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal,
         const __grid_constant__ TensorMap tmQ, const __grid_constant__ TensorMap tmK,
         const __grid_constant__ TensorMap tmV) {
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    const int wg = threadIdx.x / 128;          // 0: producer, 1..CONSUMERS: consumers
    const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;
    const int kend = causal ? min(S, q0 + BR) : S;
    const int tiles = (kend + BC - 1) / BC;
    const int row0 = blockIdx.y * S;           // this head's first row in the maps

    const unsigned bar_q = base + BAR_OFF;
    auto full_k = [&](int s) { return bar_q + 8 + 32 * s; };
    auto full_v = [&](int s) { return bar_q + 16 + 32 * s; };
    auto empty_k = [&](int s) { return bar_q + 24 + 32 * s; };
    auto empty_v = [&](int s) { return bar_q + 32 + 32 * s; };
    if (threadIdx.x == 0) {
        mbar_init(bar_q, 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_k(s), 1);
            mbar_init(full_v(s), 1);
            mbar_init(empty_k(s), 128 * CONSUMERS);
            mbar_init(empty_v(s), 128 * CONSUMERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // Producer: registers are handed to the consumers; one thread does the copies.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x != 0) return;
        SS_TRACE_OPEN(tr, 0, true);  // role 0: the producer
        SS_TRACE_BEGIN(tr, 6);
        mbar_expect(bar_q, CONSUMERS * QW_BYTES);
        for (int c = 0; c < CONSUMERS; ++c) {
            tma_load(base + Q_OFF + c * QW_BYTES, tmQ, 0, row0 + q0 + 64 * c, bar_q);
            tma_load(base + Q_OFF + c * QW_BYTES + 64 * 128, tmQ, 64, row0 + q0 + 64 * c, bar_q);
        }
        SS_TRACE_END(tr, 6);
        for (int j = 0; j < tiles; ++j) {
            const int s = j % STAGES, use = j / STAGES;
            SS_TRACE_BEGIN(tr, 7);
            if (use > 0) mbar_wait(empty_k(s), (use - 1) & 1);
            SS_TRACE_END(tr, 7);
            SS_TRACE_BEGIN(tr, 6);
            load_tile(base + K_OFF + s * KV_BYTES, tmK, row0 + j * BC, full_k(s));
            SS_TRACE_END(tr, 6);
            SS_TRACE_BEGIN(tr, 7);
            if (use > 0) mbar_wait(empty_v(s), (use - 1) & 1);
            SS_TRACE_END(tr, 7);
            SS_TRACE_BEGIN(tr, 6);
            load_tile(base + V_OFF + s * KV_BYTES, tmV, row0 + j * BC, full_v(s));
            SS_TRACE_END(tr, 6);
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int cw = wg - 1;                      // consumer index
    const int tid = threadIdx.x - 128 * wg;     // thread in the warpgroup
    const int lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const unsigned qt = base + Q_OFF + cw * QW_BYTES;
    const int first = q0 + 64 * cw;             // this warpgroup's first row
    float o[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] = 0.f;
    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.f, 0.f};
    const int row[2] = {first + warp * 16 + g, first + warp * 16 + g + 8};
    const float c = scale * 1.4426950408889634f;
    const int warp_first = first + warp * 16;
    SS_TRACE_OPEN(tr, 1 + cw, tid == 0);  // roles 1 and 2: the consumers
    SS_TRACE_BEGIN(tr, 8);
    mbar_wait(bar_q, 0);
    SS_TRACE_END(tr, 8);

    // Softmax of a score tile in place (scores → probabilities), returning the
    // correction for O; masks only where the tile needs them.
    auto softmax = [&](float (&sc)[BC / 2], int j0, float (&corr)[2]) {
        if (j0 + BC > S || (causal && j0 + BC - 1 > warp_first)) {
#pragma unroll
            for (int i = 0; i < BC / 2; ++i) {
                int key = j0 + (i / 4) * 8 + t * 2 + (i & 1);
                if (key >= S || (causal && key > row[(i >> 1) & 1])) sc[i] = NEG_INF;
            }
        }
        float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int i = 0; i < BC / 2; i += 4) {
            mx[0] = fmaxf(mx[0], fmaxf(sc[i], sc[i + 1]));
            mx[1] = fmaxf(mx[1], fmaxf(sc[i + 2], sc[i + 3]));
        }
        float mc[2];
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
        for (int i = 0; i < BC / 2; ++i) {
            float p = exp2_approx(fmaf(sc[i], c, -mc[(i >> 1) & 1]));
            sc[i] = p;
            sum[(i >> 1) & 1] += p;
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) l[r] = l[r] * corr[r] + sum[r];
    };
    auto pack_p = [&](const float (&sc)[BC / 2], unsigned (&pa)[BC / 16][4]) {
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                __half2 h = __floats2half2_rn(sc[8 * kk + 2 * q], sc[8 * kk + 2 * q + 1]);
                pa[kk][q] = *reinterpret_cast<unsigned*>(&h);
            }
    };
    // With BR = BC = 128 and query tiles aligned to key tiles, both warpgroups of a block
    // need the same key tiles (up to the block's diagonal under a causal mask), so they
    // take the same number of turns: tiles + 1 (the first Q·Kᵀ, one per tile after it,
    // the last P·V).
    static_assert(BR == BC, "equal turns need query tiles as tall as key tiles");
    const int mine = 1 + cw, other = 2 - cw;    // named barrier ids
    if (cw == 0) turn_pass(mine);               // consumer 0 takes the first turn

    float sc[BC / 2];
    unsigned pa[BC / 16][4];
    float corr[2];
    SS_TRACE_BEGIN(tr, 0);
    mbar_wait(full_k(0), 0);
    SS_TRACE_END(tr, 0);
    SS_TRACE_BEGIN(tr, 9);  // the wait for this warpgroup's turn at the tensor cores
    turn_wait(mine);
    SS_TRACE_END(tr, 9);
    SS_TRACE_BEGIN(tr, 2);
    wgmma_fence();
    score<BC>(sc, qt, base + K_OFF);
    wgmma_commit();
    turn_pass(other);
    wgmma_wait<0>();
    SS_TRACE_END(tr, 2);
    fence_regs(sc);
    mbar_arrive(empty_k(0));
    SS_TRACE_BEGIN(tr, 3);
    softmax(sc, 0, corr);
    pack_p(sc, pa);
    SS_TRACE_END(tr, 3);
    // Steady state: every iteration has a next tile (no branch around a wgmma: the
    // compiler would serialize them).
    for (int j = 0; j + 1 < tiles; ++j) {
        const int s = j % STAGES, sn = (j + 1) % STAGES;
        const unsigned parity = (j / STAGES) & 1, parity_n = ((j + 1) / STAGES) & 1;
        // Both waits before the fence: a wait loop between the fence and a wgmma makes
        // the compiler fence again and serialize the wgmmas.
        SS_TRACE_BEGIN(tr, 0);
        mbar_wait(full_k(sn), parity_n);
        SS_TRACE_END(tr, 0);
        SS_TRACE_BEGIN(tr, 1);
        mbar_wait(full_v(s), parity);
        SS_TRACE_END(tr, 1);
        SS_TRACE_BEGIN(tr, 9);
        turn_wait(mine);
        SS_TRACE_END(tr, 9);
        SS_TRACE_BEGIN(tr, 2);
        wgmma_fence();
        score<BC>(sc, qt, base + K_OFF + sn * KV_BYTES);
        wgmma_commit();
        const unsigned vt = base + V_OFF + s * KV_BYTES;
        SS_TRACE_BEGIN(tr, 4);
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk)
            wgmma_64x128_rs_nmajor_b(o, pa[kk], desc(vt + kk * 2048, BC * 128, 1024), 1);
        wgmma_commit();
        turn_pass(other);                  // the other warpgroup's products queue behind
        wgmma_wait<1>();                   // the scores of tile j + 1 are ready
        SS_TRACE_END(tr, 2);
        fence_regs(sc);
        mbar_arrive(empty_k(sn));
        SS_TRACE_BEGIN(tr, 3);
        softmax(sc, (j + 1) * BC, corr);   // overlaps P·V of tile j and the other's turn
        SS_TRACE_END(tr, 3);
        wgmma_wait<0>();                   // P·V of tile j is done with O and V
        SS_TRACE_END(tr, 4);
        fence_regs(o);
        mbar_arrive(empty_v(s));
        SS_TRACE_BEGIN(tr, 3);
        if (__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) {
#pragma unroll
            for (int i = 0; i < 64; ++i) o[i] *= corr[(i >> 1) & 1];
        }
        pack_p(sc, pa);
        SS_TRACE_END(tr, 3);
    }
    // The last tile: only its P·V is left.
    {
        const int j = tiles - 1, s = j % STAGES;
        SS_TRACE_BEGIN(tr, 1);
        mbar_wait(full_v(s), (j / STAGES) & 1);
        SS_TRACE_END(tr, 1);
        SS_TRACE_BEGIN(tr, 9);
        turn_wait(mine);
        SS_TRACE_END(tr, 9);
        SS_TRACE_BEGIN(tr, 4);
        wgmma_fence();
        const unsigned vt = base + V_OFF + s * KV_BYTES;
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk)
            wgmma_64x128_rs_nmajor_b(o, pa[kk], desc(vt + kk * 2048, BC * 128, 1024), 1);
        wgmma_commit();
        turn_pass(other);
        wgmma_wait<0>();
        SS_TRACE_END(tr, 4);
        fence_regs(o);
        mbar_arrive(empty_v(s));
    }

    SS_TRACE_BEGIN(tr, 5);
    half* out = O + (long)blockIdx.y * S * D;
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
