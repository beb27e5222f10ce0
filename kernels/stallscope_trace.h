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
// lane[2 + 3i ..]: clock64, %globaltimer, stage | kind << 16 (kind 1 begin, 2 end).
// %globaltimer is stamped on every SS_TRACE_TIMER_EVERY-th mark of a lane (its first
// included) and left 0 on the others: reading it costs the warp a few hundred cycles,
// and the cycle counter alone times the spans within a block.
//
// What a mark costs is what the picture is worth, so a mark is cheap: the whole warp
// of the leader runs it (the branch that skips it is the same for every lane of a
// warp, so no lane waits for another to reconverge, which a warpgroup about to issue a
// wgmma would), the leader's stores are predicated, and the lane's address, count and
// capacity stay in registers (the capacity is read from its module global once).
//
// SS_TRACE_VARIANT takes a mark apart to find what it costs (the experiments recipes'
// `-tN` versions; `stallscope trace --no-capture` times them): 0, the default, is the
// mark above, the only one whose buffer the decoder reads; 1 stores with weak
// st.global instead of st.global.cg (ptxas makes those STG.STRONG.GPU); 2 does not store
// the lane's count at each mark; 3 reads the cycle counter and stores nothing; 4 does
// nothing but count the mark.
#pragma once

#ifndef SS_TRACE_VARIANT
#define SS_TRACE_VARIANT 0
#endif

#define SS_TRACE_ROLES 4
#define SS_TRACE_BEGIN_KIND 1u
#define SS_TRACE_END_KIND 2u

#ifdef STALLSCOPE_TRACE

extern "C" {
__device__ unsigned long long* stallscope_trace_buffer;
__device__ unsigned int stallscope_trace_cap;
}

#define SS_TRACE_TIMER_EVERY 64u

struct ss_trace_lane {
    unsigned long long* words;  // null: no lane of this warp traces
    unsigned int marks;
    unsigned int cap;
    bool leader;                // this thread stores
};

__device__ __forceinline__ unsigned long long ss_trace_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Every thread of the role's threads calls it (or only the leader, where the others
// have left); `leader` is true for one of them. The leader's whole warp then marks.
__device__ __forceinline__ ss_trace_lane ss_trace_open(unsigned int role, bool leader) {
    ss_trace_lane lane = {nullptr, 0, 0, false};
    const unsigned int leaders = __ballot_sync(__activemask(), leader);
    if (leaders == 0 || stallscope_trace_buffer == nullptr || role >= SS_TRACE_ROLES) return lane;
    unsigned int me;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(me));
    lane.leader = me == (unsigned int)(__ffs(leaders) - 1);
    const unsigned long long block =
        blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    lane.cap = stallscope_trace_cap;
    const unsigned long long stride = 2ull + 3ull * lane.cap;
    lane.words = stallscope_trace_buffer + (block * SS_TRACE_ROLES + role) * stride;
    if (lane.leader) {
        unsigned int sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        lane.words[0] = 0;
        lane.words[1] = (1ull << 63) | sm;
    }
    return lane;
}

// One store of a mark's word (weak under SS_TRACE_VARIANT 1).
__device__ __forceinline__ void ss_trace_store(unsigned long long* at, unsigned long long v) {
#if SS_TRACE_VARIANT == 1
    asm volatile("st.global.u64 [%0], %1;" :: "l"(at), "l"(v) : "memory");
#else
    __stcg(at, v);
#endif
}

__device__ __forceinline__ void ss_trace_mark(ss_trace_lane& lane, unsigned int stage, unsigned int kind) {
    if (lane.words == nullptr) return;
    const unsigned int i = lane.marks++;
#if SS_TRACE_VARIANT == 4
    (void)i; (void)stage; (void)kind;
#elif SS_TRACE_VARIANT == 3
    (void)i; (void)stage; (void)kind;
    (void)clock64();
#else
    const bool keep = lane.leader && i < lane.cap;
    unsigned long long* m = lane.words + 2 + 3ull * i;
    const unsigned long long clock = clock64();
    if (keep) {
        ss_trace_store(m, clock);
        ss_trace_store(m + 2, (unsigned long long)((stage & 0xFFFFu) | (kind << 16)));
    }
    if (i % SS_TRACE_TIMER_EVERY == 0) {
        const unsigned long long now = ss_trace_globaltimer();
        if (keep) ss_trace_store(m + 1, now);
    }
#if SS_TRACE_VARIANT != 2
    if (lane.leader) ss_trace_store(lane.words, (unsigned long long)lane.marks);
#endif
#endif
}

#define SS_TRACE_OPEN(lane, role, leader) ss_trace_lane lane = ss_trace_open((role), (leader))
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
