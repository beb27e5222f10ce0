// v11 epilogue through shared memory, stored by the producer warpgroup's idle warps.
//
// v10 with the output path taken off the consumers. In v10 both consumer warpgroups,
// once a tile's last wgmma retired, wrote their 64×256 accumulator blocks straight to
// C: 64 four-byte stores a thread, each with a row and column check, while the tensor
// cores idled (the profile at 4096³: tensor pipe active 77 % against cuBLAS's 89 %, and
// 256 F2FP and 347 BRA instructions in the SASS against cuBLAS's 64 and 72).
//
// Here a consumer converts its accumulators to fp16 and writes them into a staging tile
// of 128 × 256 halves in shared memory (rows padded to 264 halves, 528 bytes, so that
// the eight rows a warp writes at once fall in different banks), arrives on the
// "staged" barrier, and goes straight on to the next tile's first K tile, which the
// producer has been loading meanwhile. Warps 1–3 of the producer warpgroup, idle in
// v10, wait on "staged", copy the tile to C with coalesced 16-byte stores (a warp
// writes 512 contiguous bytes of one row; rows past M skipped, columns past N written
// one by one, and wholly one by one where N is not a multiple of 8, whose rows are not
// 16-byte aligned), and arrive on "drained"; a consumer waits on "drained" before it
// writes the staging tile again, one whole tile's main loop later. The global stores
// thus overlap the next tile's wgmmas.
//
// The staging tile takes 66 KB of shared memory, which leaves room for three stages of
// 48 KB (v10 had four): 3 · 48 KB + 66 KB + barriers = 216,128 bytes with alignment.
//
// Edges as in v10 (the copy engine zero-fills loads past M, N and K; K a multiple of 8);
// the storers check rows and columns. Marked for tracing as v10 is, with the storers a
// fourth role (they wait for a staged tile, then copy it out).
//
// Launch: grid 2 · min(CLUSTERS, cdiv(M, 256) · cdiv(N, 256)), block 384, dynamic shared
// memory 216,128 bytes; tensor maps A (box 128 × 64) and Bt (box 128 × 64), 128-byte
// swizzle.
#include <cuda_fp16.h>
#include "stallscope_trace.h"

constexpr int BM = 128, BN = 256, BK = 64;
constexpr int CONSUMERS = 2;                 // consumer warpgroups, 64 rows of the tile each
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int STAGES = 3;                   // what the staging tile leaves room for
constexpr int CLUSTER = 2;                   // blocks of a cluster: tile rows 2p, 2p + 1
constexpr int GROUP_P = 8;                   // pair rows of a group of the tile order

// Shared-memory layout, bytes from a 1 KB-aligned base: stage s holds its A slice at
// s · STAGE_BYTES and its Bt slice right after (rank r's multicast half at r · B_HALF
// into it); then the staging tile of the output; then the full barriers of the stages,
// their empty barriers, "staged" and "drained".
constexpr unsigned A_BYTES = BM * BK * 2;              // 16 KB
constexpr unsigned B_BYTES = BN * BK * 2;              // 32 KB
constexpr unsigned B_HALF = B_BYTES / CLUSTER;         // 16 KB: 128 rows of Bt
constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;    // 48 KB
constexpr int OUT_PITCH = BN + 8;                      // halves a staging row: 528 bytes
constexpr unsigned OUT_OFF = STAGES * STAGE_BYTES;
constexpr unsigned OUT_BYTES = BM * OUT_PITCH * 2;     // 67,584
constexpr unsigned BAR_OFF = OUT_OFF + OUT_BYTES;
constexpr int STORERS = 96;                            // warps 1-3 of the producer warpgroup

typedef unsigned long long u64;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N of this warpgroup's committed wgmma groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }

// Keeps the compiler from moving reads of the accumulators above a wgmma wait (the
// wgmma asm is the only statement it sees writing them).
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// A shared-memory matrix descriptor for a K-major tile in the 128-byte swizzle layout:
// start address, leading byte offset 16 (unused by this layout), stride byte offset
// 1024 (from one 8-row group of 128-byte rows to the next), swizzle mode 128 B (bit 62).
// Addresses and offsets are in 16-byte units.
__device__ __forceinline__ u64 desc(unsigned addr) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(16 >> 4) << 16) | ((u64)(1024 >> 4) << 32) |
           (1ull << 62);
}

// D(64×256) (+)= A(64×16)·B(16×256), both operands in shared memory (SS) and K-major
// (no transpose bits): 128 fp32 accumulators a thread. `accumulate` 0 overwrites D.
__device__ __forceinline__ void wgmma_64x256(float (&d)[128], u64 da, u64 db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(accumulate));
}

// A TMA descriptor as the host encoded it (cuTensorMapEncodeTiled), passed by value.
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

// One arrival on a barrier of this block (release at CTA scope: what this thread wrote
// to shared memory before is visible to the thread whose wait sees the phase complete).
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

// One box of a 2-D tensor map (column x, row y) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int x, int y, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(dst), "l"(reinterpret_cast<u64>(&map)), "r"(x), "r"(y), "r"(bar) : "memory");
}

// A consumer warpgroup's 64×256 accumulator block into its 64 rows of the staging
// tile (from row `r0`), as fp16 pairs. wgmma's accumulator layout is mma.sync's repeated
// along N: warp w of the warpgroup holds rows 16w..16w+15; in every 8-column block j,
// lane (g = lane / 4, t = lane % 4) holds d[4j], d[4j+1] at row g, columns 8j+2t and
// 8j+2t+1, and d[4j+2], d[4j+3] at row g + 8. With rows 132 words apart, the 32 lanes'
// words of one store fall in 32 different banks.
__device__ __forceinline__ void stage_block(unsigned char* out, int r0, const float (&d)[128],
                                            int warp, int lane) {
    half2* row_a = reinterpret_cast<half2*>(out + (r0 + warp * 16 + lane / 4) * OUT_PITCH * 2) + lane % 4;
    half2* row_b = row_a + 8 * OUT_PITCH / 2;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        row_a[4 * j] = __floats2half2_rn(d[4 * j], d[4 * j + 1]);
        row_b[4 * j] = __floats2half2_rn(d[4 * j + 2], d[4 * j + 3]);
    }
}

// The staging tile into C at (m0, n0), by the STORERS threads (`id` 0..STORERS-1): each
// warp copies one 512-byte row at a time, 16 bytes a lane. Rows past M are skipped;
// columns past N, and every column where N is not a multiple of 8, one by one.
__device__ __forceinline__ void store_tile(half* C, int M, int N, int m0, int n0,
                                           const unsigned char* out, int id) {
    const bool vec = N % 8 == 0;
    for (int q = id; q < BM * (BN / 8); q += STORERS) {
        const int r = q / (BN / 8), c = (q % (BN / 8)) * 8;
        const int m = m0 + r, n = n0 + c;
        if (m >= M || n >= N) continue;
        const uint4 v = *reinterpret_cast<const uint4*>(out + (r * OUT_PITCH + c) * 2);
        half* p = C + (long)m * N + n;
        if (vec && n + 8 <= N) {
            *reinterpret_cast<uint4*>(p) = v;
        } else {
            const half* h = reinterpret_cast<const half*>(&v);
            for (int i = 0; i < 8 && n + i < N; ++i) p[i] = h[i];
        }
    }
}

// This block's rank in its cluster (0 or 1).
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Every thread of both blocks of the cluster: what each wrote before is visible to the
// other after (release / acquire at cluster scope).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// One arrival on the barrier at the same offset in block `cta` of the cluster (this
// block's own included). The arrival's ordering is the default one, release at CTA
// scope: what it must order is this warp's wgmma reads of the stage, which
// wgmma.wait_group has already retired, before the partner's copy engine overwrites
// it. `.release.cluster` would ask more, and ptxas pays for it with a full fence
// (MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR) before every arrival: the first measured v10
// took 1.6× v09's time with them in its loop.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
        :: "r"(bar), "r"(cta) : "memory");
}

// One box of a 2-D tensor map into the same shared-memory offset of every block in
// `mask` (bit r: rank r), completing bytes on the barrier at `bar`'s offset in each.
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const TensorMap& map, int x, int y,
                                                   unsigned bar, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n"
        :: "r"(dst), "l"(reinterpret_cast<u64>(&map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
        : "memory");
}

// Pair `p` of the grouped order: groups of GROUP_P pair rows (the last group may have
// fewer), each walked column by column, the pair row fastest.
__device__ __forceinline__ void pair_of(int p, int pair_rows, int cols, int& pm, int& tn) {
    const int per_group = GROUP_P * cols;
    const int first = (p / per_group) * GROUP_P;
    const int height = min(pair_rows - first, GROUP_P);
    const int in_group = p % per_group;
    pm = first + in_group % height;
    tn = in_group / height;
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
gemm_v11(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K,
         const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB) {
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    const int wg = threadIdx.x / 128;          // 0: producer, 1..CONSUMERS: consumers
    const unsigned rank = cluster_rank();
    const int rows = (M + BM - 1) / BM, cols = (N + BN - 1) / BN;
    const int pair_rows = (rows + 1) / 2;
    const int pairs = pair_rows * cols;
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int ktiles = (K + BK - 1) / BK;
    auto full = [&](int s) { return base + BAR_OFF + 8 * s; };
    auto empty = [&](int s) { return base + BAR_OFF + 8 * (STAGES + s); };
    const unsigned staged = base + BAR_OFF + 16 * STAGES, drained = staged + 8;
    unsigned char* const out = smem_raw + (base - smem_addr(smem_raw)) + OUT_OFF;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), CLUSTER * 4 * CONSUMERS);  // every consumer warp of both blocks
        }
        mbar_init(staged, 128 * CONSUMERS);   // every consumer thread, once a tile
        mbar_init(drained, STORERS);          // every storer thread, once a tile
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    cluster_sync();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            SS_TRACE_OPEN(tr, 0, true);  // role 0: the producer, one lane across its pairs
            int it = 0;   // K tiles loaded so far: stage it % STAGES, use it / STAGES
            for (int p = cluster; p < pairs; p += clusters) {
                int pm, tn;
                pair_of(p, pair_rows, cols, pm, tn);
                const int a_row = min(2 * pm + (int)rank, rows - 1) * BM;
                const int b_half = tn * BN + (int)rank * (BN / CLUSTER);
                const int b_row = b_half < N ? b_half : tn * BN;
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    const int s = it % STAGES, use = it / STAGES;
                    const unsigned st = base + s * STAGE_BYTES;
                    SS_TRACE_BEGIN(tr, 4);
                    if (use > 0) mbar_wait(empty(s), (use - 1) & 1);
                    SS_TRACE_END(tr, 4);
                    SS_TRACE_BEGIN(tr, 5);
                    mbar_expect(full(s), STAGE_BYTES);
                    tma_load(st, tmA, kt * BK, a_row, full(s));
                    tma_load_multicast(st + A_BYTES + rank * B_HALF, tmB, kt * BK, b_row, full(s),
                                       (unsigned short)((1u << CLUSTER) - 1));
                    SS_TRACE_END(tr, 5);
                }
            }
        } else if (threadIdx.x >= 32) {
            // Warps 1-3: the storers. Tile t of this block's schedule is staged once
            // "staged" completes its phase t; "drained" completes phase t once all of
            // them have copied it out.
            SS_TRACE_OPEN(tr, 3, threadIdx.x == 32);  // role 3: the storers, their first warp
            int t = 0;
            for (int p = cluster; p < pairs; p += clusters, ++t) {
                int pm, tn;
                pair_of(p, pair_rows, cols, pm, tn);
                const int tm = 2 * pm + (int)rank;
                SS_TRACE_BEGIN(tr, 7);
                mbar_wait(staged, t & 1);
                SS_TRACE_END(tr, 7);
                SS_TRACE_BEGIN(tr, 8);
                store_tile(C, M, N, tm * BM, tn * BN, out, threadIdx.x - 32);
                mbar_arrive(drained);
                SS_TRACE_END(tr, 8);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int cw = wg - 1;                  // consumer index: rows 64·cw of the tile
        const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
        const unsigned a_rows = cw * 64 * 128; // this warpgroup's 64 rows of the A slice
        // A stage is released to the producers of both blocks.
        auto release = [&](int s) {
            if (lane == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty(s), (unsigned)r);
        };
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.f;
        SS_TRACE_OPEN(tr, 1 + cw, threadIdx.x % 128 == 0);  // roles 1 and 2: the consumers

        int it = 0, t = 0;
        for (int p = cluster; p < pairs; p += clusters, ++t) {
            for (int kt = 0; kt < ktiles; ++kt, ++it) {
                const int s = it % STAGES;
                const unsigned st = base + s * STAGE_BYTES;
                SS_TRACE_BEGIN(tr, 0);
                mbar_wait(full(s), (it / STAGES) & 1);
                SS_TRACE_END(tr, 0);
                SS_TRACE_BEGIN(tr, 1);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks)
                    wgmma_64x256(acc, desc(st + a_rows + ks * 32), desc(st + A_BYTES + ks * 32),
                                 (kt | ks) != 0);
                wgmma_commit();
                wgmma_wait<1>();
                SS_TRACE_END(tr, 1);
                if (kt > 0) release((it - 1) % STAGES);
            }
            SS_TRACE_BEGIN(tr, 2);
            wgmma_wait<0>();
            fence_regs(acc);
            SS_TRACE_END(tr, 2);
            release((it - 1) % STAGES);
            // The storers have copied out the last tile staged (t - 1) before this one
            // overwrites it; then this warpgroup's 64 rows, and on to the next tile.
            SS_TRACE_BEGIN(tr, 6);
            if (t > 0) mbar_wait(drained, (t - 1) & 1);
            SS_TRACE_END(tr, 6);
            SS_TRACE_BEGIN(tr, 3);
            stage_block(out, cw * 64, acc, warp, lane);
            mbar_arrive(staged);
            SS_TRACE_END(tr, 3);
        }
    }
    // Neither block leaves while its partner may still arrive on its barriers.
    cluster_sync();
}
