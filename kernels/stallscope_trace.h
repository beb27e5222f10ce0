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
// lane[2 + 3i ..]: clock64, %globaltimer, stage | kind << 16 (kind 1 begin, 2 end);
// word 1's bits 32-62 hold the most marks the lane could keep on chip (0: no bound but
// the capacity).
// %globaltimer is stamped on every SS_TRACE_TIMER_EVERY-th mark of a lane (its first
// included) and left 0 on the others: reading it costs the warp a few hundred cycles,
// and the cycle counter alone times the spans within a block.
//
// What a mark costs is what the picture is worth, so a mark stays on chip: the leader
// writes it into its lane's ring in shared memory (8 bytes: the cycle counter's low
// 32 bits and the tag; a static __shared__ array that exists only in the trace build,
// SS_TRACE_RING marks a lane, 4 lanes: 16.5 KB at 512), and when the lane goes out of
// scope (its destructor, so a role's code needs no closing mark) the leader's warp
// writes the ring out in the layout above, its threads sharing coalesced stores. A
// lane keeps its first SS_TRACE_RING marks (word 1 says how many it could hold); the
// count goes on. Stores to global memory at every mark cost 15-80 % of kernel time
// (measured 2026-12-06: the stores, not the clock reads, carried it). The whole warp
// of the leader runs a mark (the branch that skips it is the same for every lane of a
// warp, so no lane waits for another to reconverge, which a warpgroup about to issue
// a wgmma would); on the hot path a lane keeps its count, its role and whether it
// leads in registers, and nothing else.
//
// SS_TRACE_VARIANT takes a mark apart to find what it costs (the experiments recipes'
// `-tN` versions; `stallscope trace --no-capture` times them): 0, the default, is the
// mark above; 1 is the mark before the ring (the leader stores each mark to global
// memory with st.global.cg, and the count at each mark); 2 is 1 without the count
// stored at each mark; 3 reads the cycle counter and stores nothing; 4 does nothing but
// count the mark; 5 is 0 on one block in SS_TRACE_SAMPLE (default 4), the others
// taking the plain path. 0, 1 and 5 write buffers the decoder reads (5's untraced
// blocks leave their lanes unopened).
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

#ifdef STALLSCOPE_TRACE

extern "C" {
__device__ unsigned long long* stallscope_trace_buffer;
__device__ unsigned int stallscope_trace_cap;
}

// Marks a lane holds on chip (its first; later ones are counted, not kept). A kernel
// whose shared memory is short may define it lower (a multiple of 64).
#ifndef SS_TRACE_RING
#define SS_TRACE_RING 512u
#endif
#define SS_TRACE_TIMER_EVERY 64u

// One lane's marks on chip: the low 32 bits of the cycle counter above the tag
// (stage | kind << 16), and %globaltimer at every SS_TRACE_TIMER_EVERY-th mark. The
// lane's cycle counter and timer at its opening give the high bits back.
struct ss_trace_ring {
    unsigned long long mark[SS_TRACE_RING];
    unsigned long long timer[SS_TRACE_RING / SS_TRACE_TIMER_EVERY];
    unsigned long long opened;          // clock64 when the lane was opened
};
#if SS_TRACE_VARIANT == 0 || SS_TRACE_VARIANT == 5
__shared__ ss_trace_ring ss_trace_rings[SS_TRACE_ROLES];
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

struct ss_trace_lane {
    unsigned int role;      // SS_TRACE_ROLES: this warp does not trace
    unsigned int marks;
    bool leader;            // this thread keeps the marks
#if SS_TRACE_VARIANT == 1 || SS_TRACE_VARIANT == 2
    unsigned long long* words;
    unsigned int cap;
#endif

    __device__ ss_trace_lane() : role(SS_TRACE_ROLES), marks(0), leader(false) {}
    ss_trace_lane(const ss_trace_lane&) = delete;
    ss_trace_lane& operator=(const ss_trace_lane&) = delete;
#if SS_TRACE_VARIANT == 0 || SS_TRACE_VARIANT == 5
    __device__ ~ss_trace_lane() { close(); }

    // The lane's kept marks written out in the buffer's layout, the threads of the
    // leader's warp that are here sharing the stores (coalesced: consecutive threads,
    // consecutive words); only the leader's warp gets here, once, at the role's end.
    __device__ __forceinline__ void close() {
        if (role >= SS_TRACE_ROLES) return;
        const unsigned int here = __activemask();
        if (__ballot_sync(here, leader) == 0) return;   // the leader writes its own
        __syncwarp(here);                               // the leader's ring is written
        const ss_trace_ring& ring = ss_trace_rings[role];
        unsigned long long* words = ss_trace_words(role);
        const unsigned int cap = stallscope_trace_cap;
        const unsigned int held = cap < SS_TRACE_RING ? cap : SS_TRACE_RING;
        const unsigned int kept = marks < held ? marks : held;
        unsigned int me;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(me));
        const unsigned int rank = __popc(here & ((1u << me) - 1)), threads = __popc(here);
        const unsigned long long opened = ring.opened;
        for (unsigned int j = rank; j < 3 * kept; j += threads) {
            const unsigned int i = j / 3, word = j % 3;
            const unsigned long long m = ring.mark[i];
            unsigned long long v;
            if (word == 0)
                v = opened + (unsigned int)((unsigned int)(m >> 32) - (unsigned int)opened);
            else if (word == 1)
                v = i % SS_TRACE_TIMER_EVERY == 0 ? ring.timer[i / SS_TRACE_TIMER_EVERY] : 0ull;
            else
                v = m & 0xFFFFFFFFull;
            words[2 + 3ull * i + word] = v;
        }
        if (leader) {
            words[0] = marks;
            unsigned int sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            words[1] = (1ull << 63) | ((unsigned long long)SS_TRACE_RING << 32) | sm;
        }
        role = SS_TRACE_ROLES;
    }
#endif
};

// Every thread of the role's threads calls it (or only the leader, where the others
// have left); `leader` is true for one of them. The leader's whole warp then marks.
__device__ __forceinline__ void ss_trace_open(ss_trace_lane& lane, unsigned int role, bool leader) {
    const unsigned int leaders = __ballot_sync(__activemask(), leader);
    if (leaders == 0 || stallscope_trace_buffer == nullptr || role >= SS_TRACE_ROLES) return;
#if SS_TRACE_VARIANT == 5
    if (ss_trace_block() % SS_TRACE_SAMPLE != 0) return;
#endif
    unsigned int me;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(me));
    lane.leader = me == (unsigned int)(__ffs(leaders) - 1);
    lane.role = role;
#if SS_TRACE_VARIANT == 1 || SS_TRACE_VARIANT == 2
    lane.cap = stallscope_trace_cap;
    lane.words = ss_trace_words(role);
    if (lane.leader) {
        unsigned int sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        lane.words[0] = 0;
        lane.words[1] = (1ull << 63) | sm;
    }
#elif SS_TRACE_VARIANT == 0 || SS_TRACE_VARIANT == 5
    if (lane.leader) ss_trace_rings[role].opened = clock64();
#endif
}

__device__ __forceinline__ void ss_trace_mark(ss_trace_lane& lane, unsigned int stage, unsigned int kind) {
    if (lane.role >= SS_TRACE_ROLES) return;
    const unsigned int i = lane.marks++;
#if SS_TRACE_VARIANT == 4
    (void)i; (void)stage; (void)kind;
#elif SS_TRACE_VARIANT == 3
    (void)i; (void)stage; (void)kind;
    (void)clock64();
#elif SS_TRACE_VARIANT == 1 || SS_TRACE_VARIANT == 2
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
#if SS_TRACE_VARIANT == 1
    if (lane.leader) __stcg(lane.words, (unsigned long long)lane.marks);
#endif
#else
    unsigned int clock;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(clock));
    if (i < SS_TRACE_RING) {
        ss_trace_ring& ring = ss_trace_rings[lane.role];
        if (lane.leader) ring.mark[i] = ((unsigned long long)clock << 32) | (stage & 0xFFFFu) | (kind << 16);
        if (i % SS_TRACE_TIMER_EVERY == 0) {
            const unsigned long long now = ss_trace_globaltimer();
            if (lane.leader) ring.timer[i / SS_TRACE_TIMER_EVERY] = now;
        }
    }
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
