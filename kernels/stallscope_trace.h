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
#pragma once

#define SS_TRACE_ROLES 4
#define SS_TRACE_BEGIN_KIND 1u
#define SS_TRACE_END_KIND 2u

#ifdef STALLSCOPE_TRACE

extern "C" {
__device__ unsigned long long* stallscope_trace_buffer;
__device__ unsigned int stallscope_trace_cap;
}

// Everything a mark needs is in the leader's registers: the lane's address, the marks
// made and the capacity (read from the module global once, at the open). A mark then
// costs two counter reads and four stores the SM does not wait for; a global load per
// mark would put a round trip to L2 on the critical path of every stage.
struct ss_trace_lane {
    unsigned long long* words;  // null: this thread does not trace
    unsigned int marks;
    unsigned int cap;
};

__device__ __forceinline__ unsigned long long ss_trace_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ ss_trace_lane ss_trace_open(unsigned int role, bool leader) {
    ss_trace_lane lane = {nullptr, 0, 0};
    if (!leader || stallscope_trace_buffer == nullptr || role >= SS_TRACE_ROLES) return lane;
    const unsigned long long block =
        blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    lane.cap = stallscope_trace_cap;
    const unsigned long long stride = 2ull + 3ull * lane.cap;
    lane.words = stallscope_trace_buffer + (block * SS_TRACE_ROLES + role) * stride;
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    lane.words[0] = 0;
    lane.words[1] = (1ull << 63) | sm;
    return lane;
}

__device__ __forceinline__ void ss_trace_mark(ss_trace_lane& lane, unsigned int stage, unsigned int kind) {
    if (lane.words == nullptr) return;
    const unsigned int i = lane.marks++;
    if (i < lane.cap) {
        unsigned long long* m = lane.words + 2 + 3ull * i;
        __stcg(m, (unsigned long long)clock64());
        __stcg(m + 1, ss_trace_globaltimer());
        __stcg(m + 2, (unsigned long long)((stage & 0xFFFFu) | (kind << 16)));
    }
    __stcg(lane.words, (unsigned long long)lane.marks);
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
