// attn_v36 (v36 lean start), the large-problem kernel; the small-problem kernel,
// attn_v36_small, after it; what changed from v35 at the end of this comment.
//
// Flash-attention forward for each head: O = softmax(scale·Q·Kᵀ)·V, with the causal mask
// when `causal` is set; Q, K, V, O fp16 [B, H, S, D] contiguous, D = HEAD_DIM = 128 only,
// fp32 accumulators. Tiles move by TMA through tensor maps over the whole [B·H·S, D]
// matrix (64×64 boxes, 128-byte swizzle); the pointers Q, K and V go unused, O serves
// only the plain stores of partial output tiles. The last argument, sched, is the launch's
// workspace (recipe.toml's `workspace`, 8 bytes): the schedule's two counters, which the
// host zero-fills once when it allocates them. Launch (recipe.toml): a grid of
// min(SMS, cdiv(S, 128)·B·H) persistent blocks of 384 threads, (2·128·128 + 4·128·128)·2
// + 256 + 1024 bytes of dynamic shared memory (192 KB of tiles, 256 for barriers and item
// numbers, 1024 of alignment slack). Warpgroup 0, the producer, drops to 24 registers
// (setmaxnreg.dec) and all its threads but thread 0 exit; thread 0 issues every copy.
// Warpgroups 1 and 2, consumers 0 and 1, rise to 240 (setmaxnreg.inc); each computes 64
// of an item's 128 query rows.
//
// Work: an item is one 128-row query tile of one head (q_tiles = cdiv(S, 128) a head,
// heads = B·H). Causal with more than a third as many heads as blocks, the heads go in
// sections of as even a size `sec` as the count that keeps each one's K and V within
// L2_SECTION_BYTES allows, else in one section of all: within a section of hs heads, item k is query tile
// q_tiles-1-k/hs of the section's head k % hs (longest first); otherwise item i is head
// i / q_tiles, tile i % q_tiles. The producer decodes an item once, when it begins it. Block
// b starts on item b; at the start of every item its producer draws one number from
// sched[0] (atomicAdd; the next item is gridDim.x + the number), and an empty asm keeps
// the compiler from using it before the item's last key tile. A block that draws past the
// end adds one to sched[1]; the last block to do so sets both back to zero for the next
// launch with the same workspace (so launches in order on one stream need no memset; two
// launches that may overlap need a workspace each). The producer writes each item to
// item_slot[slot], and its head's first row and first query row to item_row[slot] and
// item_q0[slot], before it copies the item's Q; -1 in item_slot means stop.
//
// Shared memory, from a 1 KB-aligned base: two Q slots of 32 KB, item n in slot n % 2
// (consumer c's rows at c·16 KB, two [64][64] d-halves); a K ring and a V ring of two
// 32 KB stages ([128][64] d-halves): tile t of the block's stream of key tiles (all its
// items' in order) sits in stage t % 2 of both. Then the mbarriers, item_slot[2],
// item_row[2] and item_q0[2]:
//   full_k, full_v (count 1): the producer's arrive.expect_tx, completed by the TMA's
//     bytes; the consumers wait. empty_k, empty_v (count 256): every consumer thread
//     arrives once its wgmmas have read the stage; the producer waits before a refill.
//   full_q[slot][c] (count 1): consumer c's 16 KB of Q (a plain arrive for -1); only
//     consumer c waits. empty_q[slot] (count 2): thread 0 of each consumer, after
//     wait_group.read on its output store from the slot; the producer waits before new Q.
// Named barriers: 1 and 2 pass the turn between consumers, 3 and 4 sync one consumer.
//
// Producer (the `wg == 0` branch): consumer 0's Q, K tile 0, consumer 1's Q; then for each
// key tile j the K of tile j + 1 and the V of tile j, so K runs a tile ahead of V. At the
// last tile it takes the drawn number, and the next item comes in place of that K: wait
// empty_q, decode the item and write its slot, consumer 0's Q, its first K, consumer 1's Q
// (for -1: arrive and stop after the last V). Each K or V copy waits for its stage's empty
// barrier first: the rings' depth bounds the lead.
//
// Consumers: at an item's start each warp copies its Q rows into registers (load_q,
// ldmatrix); Q·Kᵀ and P·V are 64×128×16 wgmmas with A in registers (P as fp16) and K or
// V from shared memory. Steady turn j (steady_turn) waits for K of tile j + 1 and V of
// tile j, then for its turn; issues Q·Kᵀ of tile j + 1 (8 wgmmas), commits, issues P·V
// of tile j (8), commits, passes the turn. Then: wait_group 1 (scores in), empty_k,
// the online softmax of tile j + 1 (masked only where a key is past S or the diagonal;
// exp2 with scale·log2 e folded in; new row max, correction, per-thread row sums),
// wait_group 0 (P·V done), empty_v, O *= correction (skipped if all the warp's are 1),
// P packed to fp16. A turn spans only the issue (and the staging below): consumer 0
// hands itself the first (bar.arrive on its own barrier), then the two alternate and each
// one's softmax runs under the other's wgmmas (ping-pong). Both take the same turns: the
// block's first (a Q·Kᵀ alone), then one per key tile; the block's last is a P·V alone,
// after which the output is staged and stored at once and thread 0 waits for its stores.
//
// Item boundary: the consumer waits for its full_q of the next slot, reads item_slot,
// item_row and item_q0 and loads the new Q; one turn pairs the next item's first Q·Kᵀ with
// this item's last P·V; finish() sums the row sums over each quad and inverts them; O
// stays in registers. The next item's first steady turn stages it between the Q·Kᵀ of tile
// 1 and the P·V of tile 0 (which overwrites O): O / l as fp16, st.shared into this
// consumer's 16 KB of the finished item's Q slot (that Q went to registers long ago),
// swizzled as a TMA box. After the P·V: fence.proxy.async, a warpgroup barrier, thread 0
// TMA-stores the two boxes. If the 64 rows run past S, each thread instead copies its own
// staged values of the rows inside the head with plain global stores. Thread 0 releases
// the slot at that item's turn j = 1, or at its boundary if it has one or two tiles (a
// one-tile item, with no steady turn, stages and stores there, before its P·V). At turn j
// = 1 every warp of the warpgroup has passed that turn's turn_wait (a bar.sync all 128 of
// its threads take) since its plain stores read the slot; at the boundary nothing had made
// them wait for each other, so after plain stores the warpgroup first meets at its named
// barrier (3 + cw) and only then does thread 0 release the slot. Keys past S (the next
// head's rows, or the TMA's zero fill) are masked; Q rows past S are computed, never
// stored.
//
// In the file: helpers, then attn_v36: barriers, the producer (begin_item, load_k, ...),
// the consumers' lambdas (softmax, stage_output, steady_turn, ...) and their item loop.
//
// The small-problem kernel, attn_v36_small (recipe.toml's [[version.path]]: it takes the
// launch where 2·cdiv(S, 128)²·B·H ≤ SMS: the 128×128 blocks of scores, query tiles × key
// tiles × heads, number at most half the SMs (few items, and short ones; notes/v32.md says
// why): v12's kernel, unchanged but for its name and argument list (v36's, so that the
// worker binds one set of arguments to either; O's tensor map and the workspace go
// unused). One warpgroup of 128 threads per 64-row query tile, a grid of cdiv(S, 64) ×
// B·H, two blocks an SM ((64·128 + 4·64·128)·2 + 64 + 1024 bytes of shared memory each): K
// and V tiles of 64 keys in a two-stage TMA ring, Q·Kᵀ from shared memory, P·V with P in
// registers, the output stored by plain stores; no producer warpgroup, no persistent
// schedule.
//
// What changed from v35:
// v36 lean start: the section arithmetic only where the sections are taken. v35 computed
// `sec` at every block's start with two chained divisions by run-time values (the
// sections, then their size) at every shape, causal or not, and a third (the heads a
// section may hold, 64-bit) where sections are taken, before the producer's first load;
// at the shapes under 35 us it read 0.6-2.4 % slower than v34, which divides only where
// sections are taken (once). Now `sec` is `heads` unless the causal sections are taken,
// and there the heads a section may hold is a 32-bit division (S * D * 4 bytes a head
// fits in 32 bits for S < 2^23 with D = 128).
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
// Causal order: the bytes of K and V a section of heads may hold in L2 (about a third
// of an H100's or H200's 50 MB, leaving room for the section before it, Q and O).
constexpr long long L2_SECTION_BYTES = 16ll << 20;
constexpr int KST = 2;                       // K ring depth
constexpr int VST = 2;                       // V ring depth
typedef unsigned long long u64;

// Shared-memory layout, bytes from a 1 KB-aligned base.
constexpr unsigned QW_BYTES = 64 * D * 2;              // one consumer's Q tile, 16 KB
constexpr unsigned KV_BYTES = BC * D * 2;               // one K or V stage
constexpr unsigned Q_OFF = 0;                            // 2 slots
constexpr unsigned QSLOT_BYTES = CONSUMERS * QW_BYTES;
constexpr unsigned K_OFF = Q_OFF + 2 * QSLOT_BYTES;
constexpr unsigned V_OFF = K_OFF + KST * KV_BYTES;
// mbarriers: per K stage full, empty; per V stage full, empty; per Q slot empty, then
// full for each consumer; then, per Q slot, its item number, its head's first row and its
// first query row (item_slot, item_row, item_q0).
constexpr unsigned BAR_OFF = V_OFF + VST * KV_BYTES;
constexpr unsigned ITEM_OFF = BAR_OFF + 16 * (KST + VST) + 2 * 8 * (CONSUMERS + 1);
// item_slot[2], item_row[2], item_q0[2] (ints) must fit in the recipe's 256 bytes.
static_assert(ITEM_OFF + 6 * 4 <= BAR_OFF + 256, "barriers and item slots past 256 bytes");

// The schedule's counters live in the launch's workspace (the last argument):
// sched[0], items handed out past the first grid's worth, and sched[1], blocks that found
// none left. Both return to zero at the end of every launch.
// The producer works them through these, which read the workspace's address from the
// parameter itself (attn_v36_param_13, `sched`: ld.param, a constant-bank load) at each
// use; held in registers across the producer's item loop it would spill there (the
// producer has 24). Parameter 13 is `sched` as long as it is the 14th argument.
#define SCHED_PARAM " ld.param.u64 sp, [attn_v36_param_13];\n"
// Adds one to counter `off` (a byte offset: "0" or "4") and returns what it held.
#define SCHED_ADD(off, out)                                                             \
    asm volatile("{\n .reg .u64 sp;\n" SCHED_PARAM                                     \
                 " atom.global.add.u32 %0, [sp+" off "], 1;\n}\n"                      \
                 : "=r"(out) :: "memory")
// Draws a number: the item gridDim.x + it comes next.
__device__ __forceinline__ unsigned sched_draw() { unsigned r; SCHED_ADD("0", r); return r; }
// Counts a block that found no item left; returns the count before it.
__device__ __forceinline__ unsigned sched_done() { unsigned r; SCHED_ADD("4", r); return r; }
// Both counters back to zero, for the next launch with this workspace.
__device__ __forceinline__ void sched_reset() {
    asm volatile("{\n .reg .u64 sp;\n .reg .b32 old;\n" SCHED_PARAM
                 " atom.global.exch.b32 old, [sp], 0;\n"
                 " atom.global.exch.b32 old, [sp+4], 0;\n}\n" ::: "memory");
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Shared memory written by threads (st.shared) becomes visible to wgmma's async proxy.
__device__ __forceinline__ void fence_async_proxy() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }

// A shared-memory matrix descriptor, 128-byte swizzle, as its two 32-bit words: the low
// word holds the start address (bits 0–13) and the leading byte offset (bits 16–29), the
// high word the stride byte offset and the swizzle mode (bit 62 of the whole), all in
// 16-byte units. Moving the start by a multiple of 16 bytes is one 32-bit add to the low
// word: shared memory ends below 2^18 bytes, so no carry leaves the address field.
struct Desc {
    unsigned lo, hi;
};
__device__ __forceinline__ Desc make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return {((addr & 0x3FFFF) >> 4) | (((lbo >> 4) & 0x3FFF) << 16), ((sbo >> 4) & 0x3FFF) | (1u << 30)};
}
__device__ __forceinline__ Desc shifted(Desc d, unsigned bytes) { return {d.lo + (bytes >> 4), d.hi}; }
__device__ __forceinline__ u64 desc_at(Desc d, unsigned bytes) {
    return ((u64)d.hi << 32) | (d.lo + (bytes >> 4));
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


// D(64×128) += A·B, RS, B K-major.
__device__ __forceinline__ void wgmma_64x128_rs(float (&d)[64], unsigned const (&a)[4], u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
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

// S (64×BC) = Q·Kᵀ over 8 d-slices, Q from registers; a slice of K is 32 bytes into
// one d-half's rows.
__device__ __forceinline__ void score(float (&sc)[BC / 2], const unsigned (&qa)[D / 16][4], Desc k) {
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
        const unsigned koff = (ks / 4) * (BC * 128) + (ks % 4) * 32;
        wgmma_64x128_rs(sc, qa[ks], desc_at(k, koff), ks > 0);
    }
}

// This warp's 16 rows of a 64×128 Q tile (128-byte swizzled, d-halves of [64][64]) as
// wgmma A fragments: for slice ks, matrix l/8 of ldmatrix.x4 is rows (l mod 8) + 8·((l/8)
// mod 2) and the 16-byte chunk 2·(ks mod 4) + l/16 of d-half ks/4, found at chunk
// position c ^ (row mod 8).
__device__ __forceinline__ void load_q(unsigned (&qa)[D / 16][4], unsigned qt, int warp, int lane) {
    const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
        const int chunk = (ks % 4) * 2 + (lane >> 4);
        const unsigned addr = qt + (ks / 4) * (64 * 128) + r * 128 + ((chunk ^ (r & 7)) << 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(qa[ks][0]), "=r"(qa[ks][1]), "=r"(qa[ks][2]), "=r"(qa[ks][3])
                     : "r"(addr));
    }
}

// Two halves to and from shared memory by 32-bit shared address (a generic pointer would
// cost 64-bit address arithmetic and registers).
__device__ __forceinline__ void st_shared(unsigned addr, __half2 v) {
    asm volatile("st.shared.b32 [%0], %1;\n" :: "r"(addr), "r"(*reinterpret_cast<unsigned*>(&v)) : "memory");
}
__device__ __forceinline__ __half2 ld_shared(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return *reinterpret_cast<__half2*>(&v);
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

// One 64×64 box of shared memory (128-byte swizzled) to a 2-D tensor map, tracked by
// the issuing thread's bulk-async groups.
__device__ __forceinline__ void tma_store(const TensorMap& map, unsigned src, int x, int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
        :: "l"(reinterpret_cast<u64>(&map)), "r"(x), "r"(y), "r"(src) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// The copy engine has read the shared memory of every committed store.
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Every committed store is complete.
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// The 128 threads of one warpgroup (ids 3 and 4).
__device__ __forceinline__ void warpgroup_sync(int id) { asm volatile("bar.sync %0, 128;\n" :: "r"(id) : "memory"); }

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
attn_v36(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal,
         const __grid_constant__ TensorMap tmQ, const __grid_constant__ TensorMap tmK,
         const __grid_constant__ TensorMap tmV, const __grid_constant__ TensorMap tmO,
         unsigned* __restrict__ sched) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char* base_ptr = smem_raw + (((smem_addr(smem_raw) + 1023) & ~1023u) - smem_addr(smem_raw));
    const unsigned base = smem_addr(base_ptr);
    volatile int* item_slot = reinterpret_cast<volatile int*>(base_ptr + ITEM_OFF);
    volatile int* item_row = item_slot + 2;    // the item's head · S: its head's first row
    volatile int* item_q0 = item_slot + 4;     // the item's first query row in its head
    const int wg = threadIdx.x / 128;          // 0: producer, 1..CONSUMERS: consumers
    const int q_tiles = (S + BR - 1) / BR;
    const int heads = B * H;
    const int items = q_tiles * heads;
    // Under a causal mask with more than a third as many heads as blocks (at most
    // gridDim.x = SMS items at work at once, so fewer than three of a head), the heads go
    // in sections: as few as keep each one's K and V (S·D·4 bytes a head) within
    // L2_SECTION_BYTES, of as even a size `sec` as that count allows, so the last one is
    // not left a few heads whose longest items would be drawn last. The blocks at work
    // share a section's K and V in L2. Otherwise all heads are one section. Within a section of hs heads (the last may have fewer),
    // item k is query tile q_tiles - 1 - k / hs (the longest first, so the draw ends
    // balanced) of the section's head k % hs. Without a mask all items are equally long,
    // and item i is head i / q_tiles, query tile i % q_tiles: heads vary slowest, so the
    // blocks at work share a few heads' K and V already.
    int sec = heads;
    if (causal && 3 * heads > (int)gridDim.x) {
        const unsigned head_bytes = (unsigned)S * D * 4;
        const int most = max(1, min(heads, (int)((unsigned)L2_SECTION_BYTES / head_bytes)));
        const int sections = (heads + most - 1) / most;
        sec = (heads + sections - 1) / sections;   // at most `most`
    }
    const int sec_items = sec * q_tiles;
    // Item i's head's first row (head · S) and its first query row (the producer's only).
    auto decode = [&](int i, int& row, int& q0) {
        int head, qt;
        if (causal) {
            const int h0 = i / sec_items * sec, hs = min(sec, heads - h0), k = i - h0 * q_tiles;
            head = h0 + k % hs;
            qt = q_tiles - 1 - k / hs;
        } else {
            head = i / q_tiles;
            qt = i - head * q_tiles;
        }
        row = head * S;
        q0 = qt * BR;
    };
    // The key tiles of an item whose first query row is q0.
    auto tiles_from = [&](int q0) {
        const int kend = causal ? min(S, q0 + BR) : S;
        return (kend + BC - 1) / BC;
    };

    // Tile t of the block's stream (all its items' key tiles in order) sits in K stage
    // t % KST and V stage t % VST.
    const unsigned bars = base + BAR_OFF;
    auto full_k = [&](int s) { return bars + 16 * s; };
    auto empty_k = [&](int s) { return bars + 8 + 16 * s; };
    auto full_v = [&](int s) { return bars + 16 * KST + 16 * s; };
    auto empty_v = [&](int s) { return bars + 16 * KST + 8 + 16 * s; };
    auto empty_q = [&](int q) { return bars + 16 * (KST + VST) + 8 * (CONSUMERS + 1) * q; };
    auto full_q = [&](int q, int c) { return empty_q(q) + 8 + 8 * c; };
    if (threadIdx.x == 0) {
        for (int s = 0; s < KST; ++s) {
            mbar_init(full_k(s), 1);
            mbar_init(empty_k(s), 128 * CONSUMERS);
        }
        for (int s = 0; s < VST; ++s) {
            mbar_init(full_v(s), 1);
            mbar_init(empty_v(s), 128 * CONSUMERS);
        }
        for (int q = 0; q < 2; ++q) {
            for (int c = 0; c < CONSUMERS; ++c) mbar_init(full_q(q, c), 1);
            mbar_init(empty_q(q), CONSUMERS);   // one thread a warpgroup, after its store
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x != 0) return;
        SS_TRACE_OPEN(tr, 0, true);  // role 0: the producer, one lane across its items
        // Consumer c's 64 rows of the Q of the item in slot n % 2.
        auto load_q_rows = [&](int n, int c) {
            const int qs = n % 2, row = item_row[qs] + item_q0[qs] + 64 * c;
            const unsigned qdst = base + Q_OFF + qs * QSLOT_BYTES + c * QW_BYTES;
            SS_TRACE_BEGIN(tr, 6);
            mbar_expect(full_q(qs, c), QW_BYTES);
            tma_load(qdst, tmQ, 0, row, full_q(qs, c));
            tma_load(qdst + 64 * 128, tmQ, 64, row, full_q(qs, c));
            SS_TRACE_END(tr, 6);
        };
        // Puts item `it` in Q slot n % 2, decoded, and loads consumer 0's Q rows; false
        // when there is none (-1).
        auto begin_item = [&](int it, int n) {
            const int qs = n % 2, quse = n / 2;
            SS_TRACE_BEGIN(tr, 7);
            if (quse > 0) mbar_wait(empty_q(qs), (quse - 1) & 1);
            SS_TRACE_END(tr, 7);
            item_slot[qs] = it;
            if (it < 0) {        // no more work: the consumers see -1 and stop
                for (int c = 0; c < CONSUMERS; ++c) mbar_arrive(full_q(qs, c));
                return false;
            }
            int row, q0;
            decode(it, row, q0);
            item_row[qs] = row;
            item_q0[qs] = q0;
            load_q_rows(n, 0);
            return true;
        };
        // The rest of the item's Q, after its first K tile.
        auto finish_q = [&](int n) {
            for (int c = 1; c < CONSUMERS; ++c) load_q_rows(n, c);
        };
        auto load_k = [&](int t, int row) {
            const int s = t % KST, use = t / KST;
            SS_TRACE_BEGIN(tr, 7);
            if (use > 0) mbar_wait(empty_k(s), (use - 1) & 1);
            SS_TRACE_END(tr, 7);
            SS_TRACE_BEGIN(tr, 6);
            load_tile(base + K_OFF + s * KV_BYTES, tmK, row, full_k(s));
            SS_TRACE_END(tr, 6);
        };
        auto load_v = [&](int t, int row) {
            const int s = t % VST, use = t / VST;
            SS_TRACE_BEGIN(tr, 7);
            if (use > 0) mbar_wait(empty_v(s), (use - 1) & 1);
            SS_TRACE_END(tr, 7);
            SS_TRACE_BEGIN(tr, 6);
            load_tile(base + V_OFF + s * KV_BYTES, tmV, row, full_v(s));
            SS_TRACE_END(tr, 6);
        };
        int item = blockIdx.x;
        int n = 0;       // items begun: Q slot n % 2
        int tile = 0;    // first stream tile of the current item
        if (!begin_item(item, n)) return;
        load_k(0, item_row[0]);
        finish_q(n);
        for (;;) {
            const int row0 = item_row[n % 2], tiles = tiles_from(item_q0[n % 2]);
            // The next item, asked for now: the answer is needed only at this item's last
            // tile. (The empty asm keeps the compiler from using the result, and so
            // waiting for the atomic, before then: with 132 blocks drawing from one
            // counter its answer can take microseconds, and a producer waiting for it
            // copies nothing.)
            unsigned drawn = sched_draw();
            int next = -1;
            for (int j = 0; j < tiles; ++j) {
                // K one tile ahead of V: this item's next K, or the next item's Q and first K.
                if (j + 1 < tiles) {
                    load_k(tile + j + 1, row0 + (j + 1) * BC);
                } else {
                    asm volatile("" : "+r"(drawn));
                    next = gridDim.x + (int)drawn;
                    if (next >= items) {
                        next = -1;
                        __threadfence();   // the last draw is ordered before the count of blocks done
                        // The last block to run out: every other block has drawn its last
                        // number, so nobody touches the counters again in this launch.
                        if (sched_done() == gridDim.x - 1) sched_reset();
                    }
                    if (begin_item(next, ++n)) {
                        load_k(tile + tiles, item_row[n % 2]);
                        finish_q(n);
                    }
                }
                load_v(tile + j, row0 + j * BC);
            }
            if (next < 0) return;
            tile += tiles;
        }
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int cw = wg - 1;                      // consumer index
    const int tid = threadIdx.x - 128 * wg;     // thread in the warpgroup
    const int lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const float c = scale * 1.4426950408889634f;
    // Both warpgroups of a block take the same items and the same turns: one to start the
    // first item, one per key tile (the last pairs with the next item's start).
    const int mine = 1 + cw, other = 2 - cw;    // named barrier ids
    if (cw == 0) turn_pass(mine);               // consumer 0 takes the first turn

    // The K and V tiles of stage 0; a stage's are these shifted by its offset.
    const Desc k_desc = make_desc(base + K_OFF, 16, 1024);
    const Desc v_desc = make_desc(base + V_OFF, BC * 128, 1024);
    SS_TRACE_OPEN(tr, 1 + cw, tid == 0);  // roles 1 and 2: the consumers, one lane across their items

    // The item in hand: its slot, rows (for the mask), key tiles and softmax state.
    int qs = 0, tiles = 0, first = 0, head_row = 0;
    float m[2], l[2];
    auto enter = [&](int slot) {
        qs = slot;
        const int q0 = item_q0[slot];
        tiles = tiles_from(q0);
        first = q0 + 64 * cw;                   // this warpgroup's first row
        head_row = item_row[slot];
        m[0] = m[1] = NEG_INF;
        l[0] = l[1] = 0.f;
    };

    // Softmax of a score tile in place (scores → probabilities), returning the
    // correction for O; masks only where the tile needs them.
    auto softmax = [&](float (&sc)[BC / 2], int j0, float (&corr)[2]) {
        const int warp_first = first + warp * 16, row[2] = {warp_first + g, warp_first + g + 8};
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

    float o[64];
    float sc[BC / 2];
    unsigned qa[D / 16][4];
    unsigned pa[BC / 16][4];
    float corr[2];

    // A finished item whose output is still in O: its first row, head, Q slot (where the
    // output is staged for the TMA store) and the inverses of its row sums.
    int done_first = 0, done_head_row = 0, done_slot = 0;
    float done_inv[2] = {1.f, 1.f};
    // This thread's place in the slot: row lr = 16·warp + g + 8r of a d-half at lr·128
    // bytes, its 16-byte chunk c at position c ^ (lr mod 8) = c ^ g, as TMA boxes with the
    // 128-byte swizzle expect. Row and chunk bits do not overlap, so the chunk goes in
    // with one XOR: stage_at(r, jd) = (done_stage ^ (c << 4)) + r·1024 + (d-half)·8192.
    unsigned done_stage = 0;
    auto finish = [&]() {
        done_first = first;
        done_head_row = head_row;
        done_slot = qs;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float sum = l[r];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            done_inv[r] = __fdividef(1.f, sum);
        }
        done_stage = (Q_OFF + qs * QSLOT_BYTES + cw * QW_BYTES + (warp * 16 + g) * 128 + t * 4) ^ (g << 4);
    };
    auto stage_at = [&](int r, int jd) { return base + (done_stage ^ ((jd % 8) << 4)) + r * 1024 + (jd / 8) * 8192; };
    // Normalizes O and writes it, as fp16, into the finished item's Q slot (every warp
    // copied its Q rows to registers long ago). No branch: it runs while a wgmma is in
    // flight, and a branch there makes the compiler serialize the wgmmas.
    auto stage_output = [&]() {
        SS_TRACE_BEGIN(tr, 5);  // staging the finished output, marked wherever it is called
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
            for (int jd = 0; jd < D / 8; ++jd)
                st_shared(stage_at(r, jd),
                          __floats2half2_rn(o[4 * jd + 2 * r] * done_inv[r], o[4 * jd + 2 * r + 1] * done_inv[r]));
        SS_TRACE_END(tr, 5);
    };
    // Sends the staged output out with the TMA or, for a tile that runs past the end of
    // the head (the tensor map spans all heads), copies this thread's own staged values
    // of the rows inside the head with plain stores.
    bool pending = false;                       // a stored output still occupies its slot
    auto store_output = [&]() {
        SS_TRACE_BEGIN(tr, 5);  // storing the staged output, marked wherever it is called
        if (done_first + 64 <= S) {
            const unsigned st = base + Q_OFF + done_slot * QSLOT_BYTES + cw * QW_BYTES;
            fence_async_proxy();
            warpgroup_sync(3 + cw);
            if (tid == 0) {
                tma_store(tmO, st, 0, done_head_row + done_first);
                tma_store(tmO, st + 64 * 128, 64, done_head_row + done_first);
                bulk_commit();
            }
        } else {
            half* out = O + (long)done_head_row * D;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int rw = done_first + warp * 16 + g + 8 * r;
                if (rw >= S) continue;
#pragma unroll
                for (int jd = 0; jd < D / 8; ++jd)
                    *reinterpret_cast<__half2*>(out + (long)rw * D + jd * 8 + t * 2) = ld_shared(stage_at(r, jd));
            }
        }
        pending = true;
        SS_TRACE_END(tr, 5);
    };
    // The Q slot of a stored output returns to the producer once the copy has read it.
    auto release_slot = [&]() {
        if (pending && tid == 0) {
            SS_TRACE_BEGIN(tr, 12);  // the previous item's TMA store, finishing under this turn
            bulk_wait_read();
            mbar_arrive(empty_q(done_slot));
            SS_TRACE_END(tr, 12);
        }
        pending = false;
    };
    // P·V of stream tile gt into O; the item's first overwrites O.
    auto pv = [&](int gt, bool first_tile) {
        const Desc vd = shifted(v_desc, (gt % VST) * KV_BYTES);
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk)
            wgmma_64x128_rs_nmajor_b(o, pa[kk], desc_at(vd, kk * 2048), !first_tile || kk > 0);
    };
    int tile_base = 0;                          // the item's first stream tile
    // Steady turn j of the item: the Q·Kᵀ of tile j + 1, the P·V of tile j. With
    // `staging` (a constant at each call), the finished item's output, still in O, is
    // staged between the two (the item's first P·V overwrites O).
    auto steady_turn = [&](int j, bool staging) {
        const int gj = tile_base + j, gn = gj + 1;  // stream tiles of this P·V and next Q·Kᵀ
        // Both waits before the fence: a wait loop between the fence and a wgmma makes
        // the compiler fence again and serialize the wgmmas.
        SS_TRACE_BEGIN(tr, 0);
        mbar_wait(full_k(gn % KST), (gn / KST) & 1);
        SS_TRACE_END(tr, 0);
        SS_TRACE_BEGIN(tr, 1);
        mbar_wait(full_v(gj % VST), (gj / VST) & 1);
        SS_TRACE_END(tr, 1);
        SS_TRACE_BEGIN(tr, 9);  // the wait for this warpgroup's turn at the tensor cores
        turn_wait(mine);
        SS_TRACE_END(tr, 9);
        SS_TRACE_BEGIN(tr, 2);
        wgmma_fence();
        score(sc, qa, shifted(k_desc, (gn % KST) * KV_BYTES));
        wgmma_commit();
        if (staging) {
            stage_output();
            wgmma_fence();                      // the registers of O, read, go back to the tensor cores
        }
        SS_TRACE_BEGIN(tr, 4);
        pv(gj, j == 0);
        wgmma_commit();
        turn_pass(other);
        // The output stored in the turn before has been read by now; its slot must go
        // back well before the item's last tile, when the producer loads the next Q.
        if (j == 1) release_slot();
        wgmma_wait<1>();                        // the scores of tile j + 1 are ready
        SS_TRACE_END(tr, 2);
        fence_regs(sc);
        mbar_arrive(empty_k(gn % KST));
        SS_TRACE_BEGIN(tr, 3);
        softmax(sc, (j + 1) * BC, corr);        // overlaps P·V of tile j and the other's turn
        SS_TRACE_END(tr, 3);
        wgmma_wait<0>();                        // P·V of tile j is done with O and V
        SS_TRACE_END(tr, 4);
        fence_regs(o);
        mbar_arrive(empty_v(gj % VST));
        if (staging) store_output();
        SS_TRACE_BEGIN(tr, 3);
        if (__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) {
#pragma unroll
            for (int i = 0; i < 64; ++i) o[i] *= corr[(i >> 1) & 1];
        }
        pack_p(sc, pa);
        SS_TRACE_END(tr, 3);
    };

    int n = 0;                                  // items so far: Q slot n % 2
    SS_TRACE_BEGIN(tr, 8);
    mbar_wait(full_q(0, cw), 0);
    SS_TRACE_END(tr, 8);
    int item = item_slot[0];
    if (item < 0) return;
    enter(0);
    SS_TRACE_BEGIN(tr, 10);  // the item's Q tile into registers (ldmatrix)
    load_q(qa, base + Q_OFF + cw * QW_BYTES, warp, lane);
    SS_TRACE_END(tr, 10);
    // The block's first turn: a Q·Kᵀ alone.
    SS_TRACE_BEGIN(tr, 0);
    mbar_wait(full_k(0), 0);
    SS_TRACE_END(tr, 0);
    SS_TRACE_BEGIN(tr, 9);
    turn_wait(mine);
    SS_TRACE_END(tr, 9);
    SS_TRACE_BEGIN(tr, 2);
    wgmma_fence();
    score(sc, qa, k_desc);
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
    bool unstaged = false;                      // O holds a finished item's output
    for (;;) {
        if (tiles > 1) {
            // Two inlined copies: `staging` is a constant in each.
            if (unstaged) steady_turn(0, true);
            else steady_turn(0, false);
            unstaged = false;
        }
        for (int j = 1; j + 1 < tiles; ++j) steady_turn(j, false);

        // The boundary: the next item's first Q·Kᵀ, paired with this item's last P·V.
        const int gl = tile_base + tiles - 1, gn = tile_base + tiles;
        if (unstaged) {                         // (a one-tile item had no steady turn)
            stage_output();
            store_output();
        }
        // (nor has an item of two). After plain stores each thread read its own staged
        // values back from the slot, and no turn_wait has made the warps meet since: the
        // warpgroup meets first, so the producer cannot load the next Q over output
        // another warp still reads. (No wgmma is in flight here.)
        if (pending && done_first + 64 > S) warpgroup_sync(3 + cw);
        release_slot();
        ++n;
        SS_TRACE_BEGIN(tr, 8);
        mbar_wait(full_q(n % 2, cw), (n / 2) & 1);
        SS_TRACE_END(tr, 8);
        const int next = item_slot[n % 2];
        if (next < 0) {
            // The block's last turn: the P·V alone, then the output.
            SS_TRACE_BEGIN(tr, 1);
            mbar_wait(full_v(gl % VST), (gl / VST) & 1);
            SS_TRACE_END(tr, 1);
            SS_TRACE_BEGIN(tr, 9);
            turn_wait(mine);
            SS_TRACE_END(tr, 9);
            SS_TRACE_BEGIN(tr, 4);
            wgmma_fence();
            pv(gl, tiles == 1);
            wgmma_commit();
            turn_pass(other);
            wgmma_wait<0>();
            SS_TRACE_END(tr, 4);
            fence_regs(o);
            mbar_arrive(empty_v(gl % VST));
            SS_TRACE_BEGIN(tr, 5);
            finish();
            SS_TRACE_END(tr, 5);
            stage_output();
            store_output();
            break;
        }
        SS_TRACE_BEGIN(tr, 10);  // the next item's Q tile into registers (ldmatrix)
        load_q(qa, base + Q_OFF + (n % 2) * QSLOT_BYTES + cw * QW_BYTES, warp, lane);
        SS_TRACE_END(tr, 10);
        SS_TRACE_BEGIN(tr, 0);
        mbar_wait(full_k(gn % KST), (gn / KST) & 1);
        SS_TRACE_END(tr, 0);
        SS_TRACE_BEGIN(tr, 1);
        mbar_wait(full_v(gl % VST), (gl / VST) & 1);
        SS_TRACE_END(tr, 1);
        SS_TRACE_BEGIN(tr, 9);
        turn_wait(mine);
        SS_TRACE_END(tr, 9);
        SS_TRACE_BEGIN(tr, 2);
        wgmma_fence();
        score(sc, qa, shifted(k_desc, (gn % KST) * KV_BYTES));
        wgmma_commit();
        SS_TRACE_BEGIN(tr, 4);
        pv(gl, tiles == 1);
        wgmma_commit();
        turn_pass(other);
        SS_TRACE_BEGIN(tr, 5);  // the finished item's row sums inverted (finish), under both products
        finish();
        SS_TRACE_END(tr, 5);
        enter(n % 2);
        tile_base = gn;
        wgmma_wait<1>();                        // the next item's first scores are ready
        SS_TRACE_END(tr, 2);
        fence_regs(sc);
        mbar_arrive(empty_k(gn % KST));
        SS_TRACE_BEGIN(tr, 3);
        softmax(sc, 0, corr);                   // overlaps the last P·V
        SS_TRACE_END(tr, 3);
        wgmma_wait<0>();                        // O is final
        SS_TRACE_END(tr, 4);
        fence_regs(o);
        mbar_arrive(empty_v(gl % VST));
        unstaged = true;
        SS_TRACE_BEGIN(tr, 3);
        pack_p(sc, pa);
        SS_TRACE_END(tr, 3);
    }
    SS_TRACE_BEGIN(tr, 5);
    if (tid == 0) bulk_wait();                  // the last output is written
    SS_TRACE_END(tr, 5);
}

// ---------------------------------------------------------------------------------
// The small-problem kernel (v12's): its tile sizes and layout, and the helpers it has
// that the large kernel's differ from.
namespace small {
constexpr int BR = 64, BC = 64, THREADS = 128;
// Shared-memory layout, bytes from a 1 KB-aligned base.
constexpr unsigned Q_BYTES = BR * D * 2;          // 16 KB
constexpr unsigned KV_BYTES = BC * D * 2;         // 16 KB a stage (the TMA boxes are 64 rows)
constexpr unsigned Q_OFF = 0;
constexpr unsigned K_OFF = Q_OFF + Q_BYTES;       // 2 stages
constexpr unsigned V_OFF = K_OFF + 2 * KV_BYTES;  // 2 stages
constexpr unsigned BAR_OFF = V_OFF + 2 * KV_BYTES;  // mbarriers: Q, K[2], V[2]

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

// Both d-halves of a 64-row tile starting at `row` of the [B·H·S, D] matrix.
__device__ __forceinline__ void load_tile(unsigned dst, const TensorMap& map, int row, unsigned bar) {
    mbar_expect(bar, 64 * D * 2);
    tma_load(dst, map, 0, row, bar);
    tma_load(dst + 64 * 128, map, 64, row, bar);
}
}  // namespace small

extern "C" __global__ void __launch_bounds__(small::THREADS, 2)
attn_v36_small(const half* __restrict__ Q, const half* __restrict__ K,
               const half* __restrict__ V, half* __restrict__ O,
               int B, int H, int S, float scale, int causal,
               const __grid_constant__ TensorMap tmQ, const __grid_constant__ TensorMap tmK,
               const __grid_constant__ TensorMap tmV, const __grid_constant__ TensorMap tmO,
               unsigned* __restrict__ sched) {
    // v12's names for its tiles (the large kernel's BR and BC differ).
    using small::BR;
    using small::BC;
    using small::Q_BYTES;
    using small::KV_BYTES;
    using small::Q_OFF;
    using small::K_OFF;
    using small::V_OFF;
    using small::BAR_OFF;
    using small::desc;
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
        small::load_tile(base + Q_OFF, tmQ, row0 + q0, bar_q);
        small::load_tile(base + K_OFF, tmK, row0, bar_k);
        small::load_tile(base + V_OFF, tmV, row0, bar_v);
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
            small::load_tile(base + K_OFF + (stage ^ 1) * KV_BYTES, tmK, row0 + j0 + BC, bar_k + 8 * (stage ^ 1));
            small::load_tile(base + V_OFF + (stage ^ 1) * KV_BYTES, tmV, row0 + j0 + BC, bar_v + 8 * (stage ^ 1));
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
            small::wgmma_64x64_ss(s, desc(base + Q_OFF + off, 16, 1024), desc(kt + koff, 16, 1024), ks > 0);
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
            const u64 dv = desc(vt + kk * 2048, BC * 128, 1024);
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
