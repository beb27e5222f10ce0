// v04 mma.sync: the tensor cores through PTX's warp-level m16n8k16 MMA (fp16 in, fp32
// accumulation). A block of 4 warps owns a 128×128 tile of C, each warp a 64×64 quarter:
// 4×8 MMA tiles, 128 fp32 accumulators per thread. K is walked in steps of 32, both tiles
// kept as fp16 in shared memory in their global layouts (As[m][k], Bs[n][k]: Bt's rows
// are exactly the "col" operand the MMA wants for B). Fragments are read with plain
// 32-bit shared loads in the MMA's register layout (a lane holds 2 consecutive k of one
// row); rows are padded from 32 to 40 halves so that the 8 rows × 4 lanes of one load
// fall in 32 different banks. No ldmatrix, no swizzle, no pipelining yet.
#include <cuda_fp16.h>

constexpr int BM = 128, BN = 128, BK = 32, PAD = 8, LD = BK + PAD, THREADS = 128;

// Rows r0.. of a [rows, K] matrix, k0..k0+BK, into S[r][k] (zeros outside).
__device__ __forceinline__ void load_tile(const half* __restrict__ G, int rows, int K,
                                          int r0, int k0, half (*S)[LD]) {
#pragma unroll
    for (int i = 0; i < BM * BK / 8 / THREADS; ++i) {
        const int id = threadIdx.x + i * THREADS;
        const int r = id / (BK / 8), c = (id % (BK / 8)) * 8;
        const int row = r0 + r, k = k0 + c;
        if (row < rows && k + 8 <= K && K % 8 == 0) {
            *reinterpret_cast<uint4*>(&S[r][c]) =
                *reinterpret_cast<const uint4*>(G + (long)row * K + k);
        } else {
#pragma unroll
            for (int j = 0; j < 8; ++j)
                S[r][c + j] = (row < rows && k + j < K) ? G[(long)row * K + k + j]
                                                        : __float2half(0.f);
        }
    }
}

__device__ __forceinline__ unsigned u32(const half* p) {
    return *reinterpret_cast<const unsigned*>(p);
}

__device__ __forceinline__ void mma(float* d, const unsigned* a, const unsigned* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// C[m][n..n+1] from two accumulators, as one half2 where it can.
__device__ __forceinline__ void store2(half* C, int M, int N, int m, int n, float x, float y) {
    if (m >= M) return;
    half* p = C + (long)m * N + n;
    if (n + 1 < N && N % 2 == 0) {
        *reinterpret_cast<half2*>(p) = __floats2half2_rn(x, y);
    } else {
        if (n < N) p[0] = __float2half(x);
        if (n + 1 < N) p[1] = __float2half(y);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_v04(const half* __restrict__ A, const half* __restrict__ Bt, half* __restrict__ C,
         int M, int N, int K) {
    __shared__ __align__(16) half As[BM][LD];
    __shared__ __align__(16) half Bs[BN][LD];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t4 = lane % 4;
    const int wm = (warp / 2) * 64, wn = (warp % 2) * 64;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[4][8][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile(A, M, K, m0, k0, As);
        load_tile(Bt, N, K, n0, k0, Bs);
        __syncthreads();
#pragma unroll
        for (int kb = 0; kb < BK; kb += 16) {
            unsigned a[4][4], b[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                const int r = wm + mi * 16 + g;
                a[mi][0] = u32(&As[r][kb + 2 * t4]);
                a[mi][1] = u32(&As[r + 8][kb + 2 * t4]);
                a[mi][2] = u32(&As[r][kb + 2 * t4 + 8]);
                a[mi][3] = u32(&As[r + 8][kb + 2 * t4 + 8]);
            }
#pragma unroll
            for (int ni = 0; ni < 8; ++ni) {
                const int c = wn + ni * 8 + g;
                b[ni][0] = u32(&Bs[c][kb + 2 * t4]);
                b[ni][1] = u32(&Bs[c][kb + 2 * t4 + 8]);
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 8; ++ni) mma(acc[mi][ni], a[mi], b[ni]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) {
            const int m = m0 + wm + mi * 16 + g, n = n0 + wn + ni * 8 + 2 * t4;
            store2(C, M, N, m, n, acc[mi][ni][0], acc[mi][ni][1]);
            store2(C, M, N, m + 8, n, acc[mi][ni][2], acc[mi][ni][3]);
        }
}
