// stallscope_trace.h: pipeline markers for `stallscope trace`.
//
// A kernel brackets its stages with begin and end marks, each from one leader thread
// per role (the producer warp, each consumer warpgroup):
//
//     #include "stallscope_trace.h"
//     SS_TRACE_OPEN(lane, /*role*/ 1, threadIdx.x % 128 == 0);   // consumer 0's leader
//     SS_TRACE_BEGIN(lane, /*stage*/ 2);  ... Q·Kᵀ ...  SS_TRACE_END(lane, 2);
//
// Roles and stages are small integers; their names are the recipe's (`trace_roles`,
// `trace_stages`). stallscope hands this header to NVRTC itself: a kernel includes it
// by name wherever its source lives.
//
// By default every mark compiles to nothing, so timed runs and profiles are the
// kernel's own (tests/kernels.rs compares the code built with the marks and without
// them). `stallscope trace` builds the version again with STALLSCOPE_TRACE defined:
// then a leader stamps the SM's cycle counter (clock64, for spans within a block) and
// %globaltimer (nanoseconds, to place blocks against each other) into the buffer the
// runner sets in the module globals below before the launch (the kernel's arguments
// stay the same).
//
// The buffer: lanes of (2 + 3 * stallscope_trace_cap) 64-bit words, lane = block * 4 +
// role (block: the linear block index; at most SS_TRACE_ROLES roles). lane[0] counts
// the marks the leader made (more than the capacity: the lane overflowed, its first
// `cap` kept); lane[1] holds the SM id, bit 63 set once the lane was opened; mark i is
// lane[2 + 3i ..]: clock64, %globaltimer (0: not read at that mark), stage | kind << 16
// (kind 1 begin, 2 end, 3 an anchor: a mark of no stage that only pairs the cycle
// counter with %globaltimer); word 1's bits 32-62 hold the most marks the lane could
// keep on chip (0: no bound but the capacity).
//
// What a mark costs is what the picture is worth, so a mark stays on chip and takes no
// branch. The leader writes it into its lane's ring in shared memory (8 bytes:
// the cycle counter's low 32 bits and the tag; a static __shared__ array that exists
// only in the trace build, SS_TRACE_RING marks a lane, 4 lanes: 8 KB at 256), and when
// the lane goes out of scope (its destructor, so a role's code needs no closing mark)
// the leader's warp writes the ring out in the layout above, its threads sharing
// coalesced stores. A lane keeps its first SS_TRACE_RING - 1 marks; the ring's last
// slot takes every mark after them, so word 0 then says SS_TRACE_RING + 2 ("at least";
// a lane's count includes its two anchors).
// %globaltimer is read twice a lane, when it is opened and when it is closed, and
// written as two anchor marks (kind 3: the cycle counter and the timer, no stage) before
// its first mark and after its last: a block's nanoseconds per cycle and its place
// against the others come from them.
//
// Why no branch: a mark sits between a wgmma's issue and its wait. Where code there
// branches, ptxas cannot follow the accumulator registers across it and injects a
// `warpgroup.arrive` (advisory C7519), which waits for the wgmmas in flight: the
// tensor cores' overlap with the softmax is gone. The mark of 2026-12-07 (a ring too,
// but a branch on the lane's role, one on the ring's end and one for the timer) drew
// those advisories and cost v13 +116 % and v28 +142 % (measured on an H100), more than
// the global stores it replaced; the advisories are the likely reason, to be confirmed
// by timing this mark. So the hot path is straight-line: the clock read, a store
// predicated on the lane being traced (warps that do not trace hold an address no
// ring has), and the next slot (the ring's last slot is where it stops). A lane keeps
// one register across the kernel: its next slot's shared-memory address, which only the
// leader thread holds (the others hold the untraced address), so every lane runs the
// same instructions and only the predicate differs. tests/kernels.rs builds every marked version
// with the marks and refuses a build whose ptxas log has C7519.
//
// SS_TRACE_VARIANT takes a mark apart to find what it costs (the experiments recipes'
// `-tN` versions; `stallscope trace --no-capture` times them): 0, the default, is the
// mark above; 1 is the mark of 2026-12-03 (the leader stores each mark to global
// memory with st.global.cg, and the count at each mark); 2 is 0 without the clock read
// (a constant stored); 3 reads the cycle counter and stores nothing; 4 does nothing but
// count the mark; 5 is 0 on one block in SS_TRACE_SAMPLE (default 4), the others
// holding the untraced address. 0, 1 and 5 write buffers the decoder reads (5's
// untraced blocks leave their lanes unopened).
#pragma once

#ifndef SS_TRACE_VARIANT
#define SS_TRACE_VARIANT 0
#endif
#ifndef SS_TRACE_SAMPLE
#define SS_TRACE_SAMPLE 4
#endif

#define SS_TRACE_ROLES 4
#define SS_TRACE_BEGIN_KIND 1u
#define SS_TRACE_END_KIND 2u
#define SS_TRACE_ANCHOR_KIND 3u

#ifdef STALLSCOPE_TRACE

extern "C" {
__device__ unsigned long long* stallscope_trace_buffer;
__device__ unsigned int stallscope_trace_cap;
}

#define SS_TRACE_ON_CHIP (SS_TRACE_VARIANT == 0 || SS_TRACE_VARIANT == 2 || SS_TRACE_VARIANT == 5)

// Marks a lane's ring holds on chip (a power of two; the last slot takes the overflow).
// A kernel whose shared memory is short may define it lower.
#ifndef SS_TRACE_RING
#define SS_TRACE_RING 256u
#endif
#define SS_TRACE_RING_BYTES (SS_TRACE_RING * 8u)
static_assert((SS_TRACE_RING & (SS_TRACE_RING - 1)) == 0 && SS_TRACE_RING >= 8,
              "SS_TRACE_RING is a power of two, at least 8");
// The slot of a warp that does not trace: no ring's, above every shared-memory address,
// and left where it is by the step to the next slot.
#define SS_TRACE_OFF (0x40000000u - 8u)
// Variant 1 stamps %globaltimer on every SS_TRACE_TIMER_EVERY-th mark.
#define SS_TRACE_TIMER_EVERY 64u

#if SS_TRACE_ON_CHIP
// Each lane's ring (aligned to its size, so the step to the next slot finds the ring's
// last slot from the address alone) and its opening: clock64 and %globaltimer.
__shared__ __align__(SS_TRACE_RING_BYTES) unsigned long long ss_trace_rings[SS_TRACE_ROLES][SS_TRACE_RING];
__shared__ unsigned long long ss_trace_opened[SS_TRACE_ROLES][2];
#endif

__device__ __forceinline__ unsigned long long ss_trace_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned long long ss_trace_block() {
    return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}

// The lane's words in the buffer.
__device__ __forceinline__ unsigned long long* ss_trace_words(unsigned int role) {
    const unsigned long long stride = 2ull + 3ull * stallscope_trace_cap;
    return stallscope_trace_buffer + (ss_trace_block() * SS_TRACE_ROLES + role) * stride;
}

__device__ __forceinline__ unsigned int ss_trace_shared_address(const void* p) {
    return (unsigned int)__cvta_generic_to_shared(p);
}

struct ss_trace_lane {
#if SS_TRACE_ON_CHIP
    unsigned int slot;      // the next mark's shared-memory address; SS_TRACE_OFF: not traced
#else
    unsigned int role;      // SS_TRACE_ROLES: this warp does not trace
    unsigned int marks;
    bool leader;            // this thread keeps the marks
#endif
#if SS_TRACE_VARIANT == 1
    unsigned long long* words;
    unsigned int cap;
#endif

#if SS_TRACE_ON_CHIP
    __device__ ss_trace_lane() : slot(SS_TRACE_OFF) {}
#else
    __device__ ss_trace_lane() : role(SS_TRACE_ROLES), marks(0), leader(false) {}
#endif
    ss_trace_lane(const ss_trace_lane&) = delete;
    ss_trace_lane& operator=(const ss_trace_lane&) = delete;
#if SS_TRACE_ON_CHIP
    __device__ ~ss_trace_lane() { close(); }

    // The lane's kept marks written out in the buffer's layout between its two anchors,
    // the threads of the leader's warp that are here sharing the stores (coalesced:
    // consecutive threads, consecutive words); once, at the role's end. Only the leader
    // holds a ring's address; its warp learns it by a shuffle.
    __device__ __forceinline__ void close() {
        const unsigned int here = __activemask();
        const unsigned int holder = __ballot_sync(here, slot != SS_TRACE_OFF);
        if (holder == 0) return;
        const int src = __ffs(holder) - 1;
        const unsigned int next = __shfl_sync(here, slot, src);
        slot = SS_TRACE_OFF;
        const unsigned int rings = ss_trace_shared_address(ss_trace_rings);
        const unsigned int role = (next - rings) / SS_TRACE_RING_BYTES;
        const unsigned int at = (next - rings) % SS_TRACE_RING_BYTES / 8u;
        // The closing anchor read once, by the holder, for every lane that writes it.
        const unsigned long long closed = __shfl_sync(here, clock64(), src);
        const unsigned long long closed_ns = __shfl_sync(here, ss_trace_globaltimer(), src);
        __syncwarp(here);                               // the ring is written
        const unsigned long long* ring = ss_trace_rings[role];
        // At the last slot the lane kept RING - 1 marks and perhaps overflowed: a
        // nonzero tag there (open cleared it) says a mark went to it, then `at least`.
        const bool over = at == SS_TRACE_RING - 1 && (ring[at] & 0xFFFFFFFFull) != 0;
        const unsigned int kept = at;
        const unsigned long long made = over ? SS_TRACE_RING : at;
        unsigned long long* words = ss_trace_words(role);
        const unsigned int cap = stallscope_trace_cap;
        if (cap < 2) return;    // no room for the anchors: the lane stays unused
        // The anchors take two of the buffer's marks: the ring's marks it has room for.
        const unsigned int room = cap - 2;
        const unsigned int out = kept < room ? kept : room;
        unsigned int me;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(me));
        const unsigned int rank = __popc(here & ((1u << me) - 1)), threads = __popc(here);
        const unsigned long long opened = ss_trace_opened[role][0];
        for (unsigned int j = rank; j < 3 * (out + 2); j += threads) {
            const unsigned int i = j / 3, word = j % 3;
            unsigned long long v;
            if (i == 0)             // the anchor of the opening
                v = word == 0 ? opened : word == 1 ? ss_trace_opened[role][1] : (unsigned long long)SS_TRACE_ANCHOR_KIND << 16;
            else if (i == out + 1)  // the anchor of the closing
                v = word == 0 ? closed : word == 1 ? closed_ns : (unsigned long long)SS_TRACE_ANCHOR_KIND << 16;
            else {
                const unsigned long long m = ring[i - 1];
                if (word == 0)
                    v = opened + (unsigned int)((unsigned int)(m >> 32) - (unsigned int)opened);
                else if (word == 1)
                    v = 0;
                else
                    v = m & 0xFFFFFFFFull;
            }
            words[2 + 3ull * i + word] = v;
        }
        if (rank == 0) {
            words[0] = made + 2;
            unsigned int sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            words[1] = (1ull << 63) | ((unsigned long long)(SS_TRACE_RING - 1 + 2) << 32) | sm;
        }
    }
#endif
};

// Every thread of the role's threads calls it (or only the leader, where the others
// have left); `leader` is true for one of them (the first such lane of a warp leads).
__device__ __forceinline__ void ss_trace_open(ss_trace_lane& lane, unsigned int role, bool leader) {
    const unsigned int leaders = __ballot_sync(__activemask(), leader);
    if (leaders == 0 || stallscope_trace_buffer == nullptr || role >= SS_TRACE_ROLES) return;
#if SS_TRACE_VARIANT == 5
    if (ss_trace_block() % SS_TRACE_SAMPLE != 0) return;
#endif
    unsigned int me;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(me));
    const bool first = me == (unsigned int)(__ffs(leaders) - 1);
#if SS_TRACE_ON_CHIP
    // The leader alone holds the ring's address: a mark that only some lanes of its warp
    // make (one elected thread, say) still lands in the next slot where the leader is
    // among them (a mark the leader does not make is not kept).
    // The step to the next slot needs the ring aligned to its size in the shared
    // window; were it not, the lane stays unused rather than marking out of its ring.
    const unsigned int ring = ss_trace_shared_address(ss_trace_rings[role]);
    if (ring % SS_TRACE_RING_BYTES != 0) return;
    if (first) lane.slot = ring;
    if (first) {
        ss_trace_rings[role][SS_TRACE_RING - 1] = 0;
        // The counter, then the timer: the order the closing anchor reads them in, so a
        // delay between the two reads does not stretch the lane's ns per cycle.
        ss_trace_opened[role][0] = clock64();
        ss_trace_opened[role][1] = ss_trace_globaltimer();
    }
    __syncwarp(__activemask());
#else
    lane.leader = first;
    lane.role = role;
#if SS_TRACE_VARIANT == 1
    lane.cap = stallscope_trace_cap;
    lane.words = ss_trace_words(role);
    if (lane.leader) {
        unsigned int sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        lane.words[0] = 0;
        lane.words[1] = (1ull << 63) | sm;
    }
#endif
#endif
}

__device__ __forceinline__ void ss_trace_mark(ss_trace_lane& lane, unsigned int stage, unsigned int kind) {
#if SS_TRACE_ON_CHIP
    const unsigned int tag = (stage & 0xFFFFu) | (kind << 16);
#if SS_TRACE_VARIANT == 2
    const unsigned int clock = 0x5eed;
#else
    unsigned int clock;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(clock));
#endif
    // Straight-line: the store predicated on a ring's address, then the next slot (the
    // ring's last slot is as far as it goes; SS_TRACE_OFF stays where it is).
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.lt.u32 p, %0, %3;\n\t"
        "@p st.shared.v2.u32 [%0], {%1, %2};\n\t}"
        :: "r"(lane.slot), "r"(tag), "r"(clock), "n"(SS_TRACE_OFF));
    lane.slot = min(lane.slot + 8u, lane.slot | (SS_TRACE_RING_BYTES - 8u));
#else
    if (lane.role >= SS_TRACE_ROLES) return;
    const unsigned int i = lane.marks++;
#if SS_TRACE_VARIANT == 4
    (void)i; (void)stage; (void)kind;
#elif SS_TRACE_VARIANT == 3
    (void)i; (void)stage; (void)kind;
    (void)clock64();
#elif SS_TRACE_VARIANT == 1
    const bool keep = lane.leader && i < lane.cap;
    unsigned long long* m = lane.words + 2 + 3ull * i;
    const unsigned long long clock = clock64();
    if (keep) {
        __stcg(m, clock);
        __stcg(m + 2, (unsigned long long)((stage & 0xFFFFu) | (kind << 16)));
    }
    if (i % SS_TRACE_TIMER_EVERY == 0) {
        const unsigned long long now = ss_trace_globaltimer();
        if (keep) __stcg(m + 1, now);
    }
    if (lane.leader) __stcg(lane.words, (unsigned long long)lane.marks);
#endif
#endif
}

#define SS_TRACE_OPEN(lane, role, leader) \
    ss_trace_lane lane;                   \
    ss_trace_open(lane, (role), (leader))
#define SS_TRACE_BEGIN(lane, stage) ss_trace_mark((lane), (stage), SS_TRACE_BEGIN_KIND)
#define SS_TRACE_END(lane, stage) ss_trace_mark((lane), (stage), SS_TRACE_END_KIND)

// The finest step %globaltimer takes on this GPU: thread 0 reads it until it has seen
// `samples` steps and writes the smallest (ns) to out[0].
extern "C" __global__ void stallscope_timer_resolution(unsigned long long* out, int samples) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long last = ss_trace_globaltimer(), finest = ~0ull;
    for (int seen = 0; seen < samples;) {
        const unsigned long long now = ss_trace_globaltimer();
        if (now != last) {
            if (now - last < finest) finest = now - last;
            last = now;
            ++seen;
        }
    }
    out[0] = finest;
}

#else

#define SS_TRACE_OPEN(lane, role, leader) ((void)0)
#define SS_TRACE_BEGIN(lane, stage) ((void)0)
#define SS_TRACE_END(lane, stage) ((void)0)

#endif
