// v02 tiled: a block of 256 threads owns 64 query rows and walks over K and V in tiles
// of 32 keys staged in shared memory, so each K/V element read from global memory serves
// 64 queries instead of one. Scores, softmax and the output update stay in fp32 on the
// SIMT pipes (FFMA). Shared memory, all fp32:
//   Qt[D][64]  the query tile, transposed and pre-scaled
//   Kt[D][32]  the key tile, transposed (a thread reads 2 consecutive keys per d)
//   Vs[32][D]  the value tile
//   Ps[64][33] scores, then probabilities (padded against bank conflicts)
//   m, l, corr per row: running max, running sum, and this tile's rescale factor
#include <cuda_fp16.h>

// NVRTC has no <math.h>: minus infinity, spelled by its bits.
#define NEG_INF __int_as_float(0xff800000)

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
constexpr int D = HEAD_DIM;
constexpr int BR = 64, BC = 32, THREADS = 256;

extern "C" __global__ void __launch_bounds__(THREADS)
attn_v02(const half* __restrict__ Q, const half* __restrict__ K,
         const half* __restrict__ V, half* __restrict__ O,
         int B, int H, int S, float scale, int causal) {
    extern __shared__ float smem[];
    float* Qt = smem;                 // [D][BR]
    float* Kt = Qt + D * BR;          // [D][BC]
    float* Vs = Kt + D * BC;          // [BC][D]
    float* Ps = Vs + BC * D;          // [BR][BC + 1]
    float* m_s = Ps + BR * (BC + 1);  // [BR]
    float* l_s = m_s + BR;            // [BR]
    float* c_s = l_s + BR;            // [BR]

    const int tid = threadIdx.x;
    const int q0 = blockIdx.x * BR;
    const long base = (long)blockIdx.y * S * D;
    const half* q = Q + base;
    const half* k = K + base;
    const half* v = V + base;

    // Query tile, 8 halves (16 bytes) per load.
    for (int c = tid; c < BR * D / 8; c += THREADS) {
        int r = c / (D / 8), d0 = (c % (D / 8)) * 8;
        int row = q0 + r;
        int4 raw = row < S ? *reinterpret_cast<const int4*>(q + (long)row * D + d0) : make_int4(0, 0, 0, 0);
        const half* h = reinterpret_cast<const half*>(&raw);
        for (int e = 0; e < 8; ++e) Qt[(d0 + e) * BR + r] = __half2float(h[e]) * scale;
    }
    if (tid < BR) {
        m_s[tid] = NEG_INF;
        l_s[tid] = 0.f;
    }

    // Score tile: thread (ty, tx) computes rows ty*4..+3, keys tx*2..+1.
    const int ty = tid / 16, tx = tid % 16;
    // Output: rows ty*4..+3, dims tx*8..+7.
    float o[4][8];
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c) o[r][c] = 0.f;

    const int kend = causal ? min(S, q0 + BR) : S;
    for (int j0 = 0; j0 < kend; j0 += BC) {
        __syncthreads();
        for (int c = tid; c < BC * D / 8; c += THREADS) {
            int r = c / (D / 8), d0 = (c % (D / 8)) * 8;
            int key = j0 + r;
            int4 kr = key < S ? *reinterpret_cast<const int4*>(k + (long)key * D + d0) : make_int4(0, 0, 0, 0);
            int4 vr = key < S ? *reinterpret_cast<const int4*>(v + (long)key * D + d0) : make_int4(0, 0, 0, 0);
            const half* kh = reinterpret_cast<const half*>(&kr);
            const half* vh = reinterpret_cast<const half*>(&vr);
            for (int e = 0; e < 8; ++e) {
                Kt[(d0 + e) * BC + r] = __half2float(kh[e]);
                Vs[r * D + d0 + e] = __half2float(vh[e]);
            }
        }
        __syncthreads();

        float s[4][2] = {};
        for (int d = 0; d < D; ++d) {
            float4 a = *reinterpret_cast<const float4*>(&Qt[d * BR + ty * 4]);
            float2 b = *reinterpret_cast<const float2*>(&Kt[d * BC + tx * 2]);
            float av[4] = {a.x, a.y, a.z, a.w};
            for (int r = 0; r < 4; ++r) {
                s[r][0] += av[r] * b.x;
                s[r][1] += av[r] * b.y;
            }
        }
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 2; ++c) {
                int row = q0 + ty * 4 + r, key = j0 + tx * 2 + c;
                bool masked = key >= S || (causal && key > row);
                Ps[(ty * 4 + r) * (BC + 1) + tx * 2 + c] = masked ? NEG_INF : s[r][c];
            }
        __syncthreads();

        // Online softmax: 4 threads per row, 8 keys each.
        {
            int row = tid / 4, part = tid % 4;
            float* p = &Ps[row * (BC + 1) + part * 8];
            float mx = NEG_INF;
            for (int c = 0; c < 8; ++c) mx = fmaxf(mx, p[c]);
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            float m_old = m_s[row];
            float m_new = fmaxf(m_old, mx);
            // A row with every key masked so far keeps m = -inf: use 0 to avoid NaN.
            float m_use = m_new == NEG_INF ? 0.f : m_new;
            float sum = 0.f;
            for (int c = 0; c < 8; ++c) {
                float e = __expf(p[c] - m_use);
                p[c] = e;
                sum += e;
            }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            __syncwarp();
            if (part == 0) {
                float corr = __expf(m_old - m_use);
                c_s[row] = corr;
                l_s[row] = l_s[row] * corr + sum;
                m_s[row] = m_new;
            }
        }
        __syncthreads();

        for (int r = 0; r < 4; ++r) {
            float corr = c_s[ty * 4 + r];
            for (int c = 0; c < 8; ++c) o[r][c] *= corr;
        }
        for (int j = 0; j < BC; ++j) {
            float4 v0 = *reinterpret_cast<const float4*>(&Vs[j * D + tx * 8]);
            float4 v1 = *reinterpret_cast<const float4*>(&Vs[j * D + tx * 8 + 4]);
            float vv[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
            for (int r = 0; r < 4; ++r) {
                float p = Ps[(ty * 4 + r) * (BC + 1) + j];
                for (int c = 0; c < 8; ++c) o[r][c] += p * vv[c];
            }
        }
    }
    __syncthreads();
    for (int r = 0; r < 4; ++r) {
        int row = q0 + ty * 4 + r;
        if (row >= S) continue;
        float inv = 1.f / l_s[ty * 4 + r];
        half out[8];
        for (int c = 0; c < 8; ++c) out[c] = __float2half(o[r][c] * inv);
        *reinterpret_cast<int4*>(O + base + (long)row * D + tx * 8) = *reinterpret_cast<int4*>(out);
    }
}
