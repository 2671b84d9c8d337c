// Prototype for issue 4's long rows (softmax and layer norm over 256 rows of 262144 floats): what
// limits the cluster row kernels, measured on hand-written kernels before the code generator
// changes (bench/results/2026-11-30/run12-long-rows/README.md). Times, side by side with a 1 GiB
// device copy, in one process:
//   gen    the generated kernel that run 4 found best (cluster 8, 512 threads, 2 rows per cluster,
//          the row in registers, two cluster rounds per row), copied from `stitchcuda generate`;
//   ring   clusters that walk rows with an S-stage ring of shared-memory buffers filled by bulk
//          copies (cp.async.bulk, completion on an mbarrier), the row read from shared memory;
//   reg    the row in registers with ONLINE (max and sum in one cluster round), FAST (exp as
//          ex2.approx of one FMA), MINB blocks per SM, streaming hints, the exchange read by one
//          warp (WARP0) and the next row prefetched by bulk copy into shared memory (PF);
//   split  part of the row in registers, part in shared memory (cp.async), for more blocks per SM;
//   reg_layernorm  layer norm in registers, two rounds or one (Chan's combination), with and
//          without gamma/beta;
//   and, with -DGENERATED_VARIANTS='"file.cuh"' (bench/tools/generated_variants.sh), generated
//   kernels beside them, on random and on zero inputs.
// Every variant is checked against a double-precision reference on sampled rows.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/lrp bench/tools/long_row_proto.cu && /tmp/lrp
#include <algorithm>
#include <cmath>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                             \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

namespace cg = cooperative_groups;

// ---- gen: stitchcuda generate examples/softmax.te --size M=256 --size N=262144 (threads_per_row
// 512, cluster 8, row_steps 2, cache registers), verbatim apart from the name.
extern "C" __global__ void __launch_bounds__(512) __cluster_dims__(8, 1, 1)
    gen_softmax(const float *__restrict__ X, float *__restrict__ Y, int M, int N)
{
    __shared__ float red_[2][2][1][16];
    __shared__ float part_[2][2];
    cg::cluster_group cluster_ = cg::this_cluster();
    const int lane_ = threadIdx.x % 512;
    const int sub_ = threadIdx.x / 512;
    const long long rows_ = 1LL * (long long)(M);
    const long long first_ = (long long)(blockIdx.x / 8) * 2 + sub_;
    const int cols_ = N;
    const int span_ = cols_ / 8;
    const int begin_ = (int)cluster_.block_rank() * span_;
    const int end_ = begin_ + span_;
    float x_X_[64];
#pragma unroll 1
    for (int step_ = 0; step_ < 2; ++step_) {
        const long long row_ = first_ + (long long)step_ * 1;
        const bool active_ = row_ < rows_;
        const long long rowBase_ = row_ * (long long)cols_;
#pragma unroll
        for (int it_ = 0; it_ < 16; ++it_) {
            const int c0_ = begin_ + (it_ * 512 + lane_) * 4;
            if (active_ && c0_ < end_) {
                const float4 ld_ = *reinterpret_cast<const float4 *>(X + rowBase_ + c0_);
                x_X_[it_ * 4 + 0] = ld_.x;
                x_X_[it_ * 4 + 1] = ld_.y;
                x_X_[it_ * 4 + 2] = ld_.z;
                x_X_[it_ * 4 + 3] = ld_.w;
            }
        }
        float p_rowMax_ = __int_as_float(0xff800000);
#pragma unroll
        for (int it_ = 0; it_ < 16; ++it_) {
            const int c0_ = begin_ + (it_ * 512 + lane_) * 4;
            if (active_ && c0_ < end_)
                for (int q = 0; q < 4; ++q)
                    p_rowMax_ = fmaxf(p_rowMax_, x_X_[it_ * 4 + q]);
        }
#pragma unroll
        for (int off_ = 16; off_ > 0; off_ >>= 1)
            p_rowMax_ = fmaxf(p_rowMax_, __shfl_xor_sync(0xffffffffu, p_rowMax_, off_));
        if ((lane_ & 31) == 0)
            red_[step_ & 1][0][sub_][lane_ >> 5] = p_rowMax_;
        __syncthreads();
        p_rowMax_ = red_[step_ & 1][0][sub_][0];
#pragma unroll
        for (int w_ = 1; w_ < 16; ++w_)
            p_rowMax_ = fmaxf(p_rowMax_, red_[step_ & 1][0][sub_][w_]);
        if (threadIdx.x == 0)
            part_[step_ & 1][0] = p_rowMax_;
        cluster_.sync();
        p_rowMax_ = __int_as_float(0xff800000);
#pragma unroll
        for (int b_ = 0; b_ < 8; ++b_)
            p_rowMax_ = fmaxf(p_rowMax_, *cluster_.map_shared_rank(&part_[step_ & 1][0], b_));
        const float s_rowMax_ = p_rowMax_;
        float p_rowSum_ = 0.0f;
#pragma unroll
        for (int it_ = 0; it_ < 16; ++it_) {
            const int c0_ = begin_ + (it_ * 512 + lane_) * 4;
            if (active_ && c0_ < end_)
                for (int q = 0; q < 4; ++q) {
                    x_X_[it_ * 4 + q] = expf(x_X_[it_ * 4 + q] - s_rowMax_);
                    p_rowSum_ += x_X_[it_ * 4 + q];
                }
        }
#pragma unroll
        for (int off_ = 16; off_ > 0; off_ >>= 1)
            p_rowSum_ += __shfl_xor_sync(0xffffffffu, p_rowSum_, off_);
        if ((lane_ & 31) == 0)
            red_[step_ & 1][1][sub_][lane_ >> 5] = p_rowSum_;
        __syncthreads();
        p_rowSum_ = red_[step_ & 1][1][sub_][0];
#pragma unroll
        for (int w_ = 1; w_ < 16; ++w_)
            p_rowSum_ += red_[step_ & 1][1][sub_][w_];
        if (threadIdx.x == 0)
            part_[step_ & 1][1] = p_rowSum_;
        cluster_.sync();
        p_rowSum_ = 0.0f;
#pragma unroll
        for (int b_ = 0; b_ < 8; ++b_)
            p_rowSum_ += *cluster_.map_shared_rank(&part_[step_ & 1][1], b_);
        if (step_ == 1)
            cluster_.barrier_arrive();
        const float s_rowSum_ = p_rowSum_;
#pragma unroll
        for (int it_ = 0; it_ < 16; ++it_) {
            const int c0_ = begin_ + (it_ * 512 + lane_) * 4;
            if (active_ && c0_ < end_) {
                float4 o_Y_;
                o_Y_.x = x_X_[it_ * 4 + 0] * (1.0f / s_rowSum_);
                o_Y_.y = x_X_[it_ * 4 + 1] * (1.0f / s_rowSum_);
                o_Y_.z = x_X_[it_ * 4 + 2] * (1.0f / s_rowSum_);
                o_Y_.w = x_X_[it_ * 4 + 3] * (1.0f / s_rowSum_);
                *reinterpret_cast<float4 *>(Y + rowBase_ + c0_) = o_Y_;
            }
        }
    }
    cluster_.barrier_wait();
}

// ---- ring
__device__ __forceinline__ unsigned smemAddr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void ringWait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// One thread: expect `bytes` on the stage's barrier and start the bulk copies (16 KiB each).
__device__ __forceinline__ void ringIssue(unsigned bar, float *dst, const float *src, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    for (unsigned off = 0; off < bytes; off += 16384u) {
        const unsigned n = min(16384u, bytes - off);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         smemAddr(reinterpret_cast<char *>(dst) + off)),
                     "l"(reinterpret_cast<const char *>(src) + off), "r"(n), "r"(bar)
                     : "memory");
    }
}

template <int T> __device__ __forceinline__ float blockMax(float v, float *red)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
#pragma unroll
    for (int w = 1; w < T / 32; ++w)
        v = fmaxf(v, red[w]);
    return v;
}

template <int T> __device__ __forceinline__ float blockSum(float v, float *red)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
#pragma unroll
    for (int w = 1; w < T / 32; ++w)
        v += red[w];
    return v;
}

template <int C, int T, int S, bool ONLINE, bool STREAM>
__global__ void __launch_bounds__(T, 1) ring_softmax(const float *__restrict__ X, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(128) float4 smem4_[];
    float *const stage = reinterpret_cast<float *>(smem4_);
    __shared__ __align__(8) unsigned long long full[S];
    __shared__ float red[2][2][T / 32];
    __shared__ float part[2][2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int items = span / (4 * T);
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const unsigned bytes = (unsigned)span * 4u;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&full[s])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        for (int s = 0; s < S; ++s) {
            const long long row = cid + (long long)s * nclusters;
            if (row < rows)
                ringIssue(smemAddr(&full[s]), stage + (size_t)s * span, X + row * (long long)cols + (long long)rank * span,
                          bytes);
        }
    }
    __syncthreads();
    int i = 0;
    for (long long row = cid; row < rows; row += nclusters, ++i) {
        const int s = i % S;
        ringWait(smemAddr(&full[s]), (unsigned)(i / S) & 1u);
        const float4 *st = reinterpret_cast<const float4 *>(stage + (size_t)s * span);
        float m = __int_as_float(0xff800000);
        for (int it = 0; it < items; ++it) {
            const float4 v = st[it * T + threadIdx.x];
            m = fmaxf(fmaxf(m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
        }
        float M, Ssum;
        if (ONLINE) {
            float sum = 0.f;
            for (int it = 0; it < items; ++it) {
                const float4 v = st[it * T + threadIdx.x];
                sum += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
            }
            // block: (max, sum) pairs
            const float bm = blockMax<T>(m, red[i & 1][0]);
            sum *= expf(m - bm);
            const float bs = blockSum<T>(sum, red[i & 1][1]);
            if (threadIdx.x == 0) {
                part[i & 1][0] = bm;
                part[i & 1][1] = bs;
            }
            cluster.sync();
            M = __int_as_float(0xff800000);
            float pm[C], ps[C];
#pragma unroll
            for (int b = 0; b < C; ++b) {
                pm[b] = *cluster.map_shared_rank(&part[i & 1][0], b);
                ps[b] = *cluster.map_shared_rank(&part[i & 1][1], b);
                M = fmaxf(M, pm[b]);
            }
            Ssum = 0.f;
#pragma unroll
            for (int b = 0; b < C; ++b)
                Ssum += ps[b] * expf(pm[b] - M);
        } else {
            const float bm = blockMax<T>(m, red[i & 1][0]);
            if (threadIdx.x == 0)
                part[i & 1][0] = bm;
            cluster.sync();
            M = __int_as_float(0xff800000);
#pragma unroll
            for (int b = 0; b < C; ++b)
                M = fmaxf(M, *cluster.map_shared_rank(&part[i & 1][0], b));
            float sum = 0.f;
            for (int it = 0; it < items; ++it) {
                const float4 v = st[it * T + threadIdx.x];
                sum += expf(v.x - M) + expf(v.y - M) + expf(v.z - M) + expf(v.w - M);
            }
            const float bs = blockSum<T>(sum, red[i & 1][1]);
            if (threadIdx.x == 0)
                part[i & 1][1] = bs;
            cluster.sync();
            Ssum = 0.f;
#pragma unroll
            for (int b = 0; b < C; ++b)
                Ssum += *cluster.map_shared_rank(&part[i & 1][1], b);
        }
        const float inv = 1.0f / Ssum;
        float4 *out = reinterpret_cast<float4 *>(Y + row * (long long)cols + (long long)rank * span);
        for (int it = 0; it < items; ++it) {
            const float4 v = st[it * T + threadIdx.x];
            float4 o;
            o.x = expf(v.x - M) * inv;
            o.y = expf(v.y - M) * inv;
            o.z = expf(v.z - M) * inv;
            o.w = expf(v.w - M) * inv;
            if (STREAM)
                __stcs(out + it * T + threadIdx.x, o);
            else
                out[it * T + threadIdx.x] = o;
        }
        __syncthreads(); // every thread is done with stage s
        if (threadIdx.x == 0) {
            const long long next = row + (long long)S * nclusters;
            if (next < rows)
                ringIssue(smemAddr(&full[s]), stage + (size_t)s * span, X + next * (long long)cols + (long long)rank * span,
                          bytes);
        }
    }
    cluster.sync(); // the other blocks' last reads of part
}


// ---- reg: the row in registers like gen, with three changes to test one at a time: ONLINE (max
// and sum in one cluster round: each thread keeps exp(x - its own max) and rescales once), FAST
// (exp(x - m) as ex2.approx of one FMA, 2 instructions instead of expf's ~8) and MINB (blocks per
// SM, so that one block's reductions overlap another's loads and stores).
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

template <bool FAST> __device__ __forceinline__ float expShift(float x, float m)
{
    if (FAST)
        return ex2(fmaf(x, 1.4426950408889634f, -m * 1.4426950408889634f));
    return expf(x - m);
}

template <bool FAST> __device__ __forceinline__ void combinePair(float &m, float &s, float m2, float s2)
{
    const float M = fmaxf(m, m2);
    s = s * expShift<FAST>(m, M) + s2 * expShift<FAST>(m2, M);
    m = M;
}

template <int C, int T, int ITEMS, int MINB, bool ONLINE, bool FAST, bool STREAM = false, bool WARP0 = false, bool PF = false>
__global__ void __launch_bounds__(T, MINB) reg_softmax(const float *__restrict__ X, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(128) float4 pf_[];
    __shared__ __align__(8) unsigned long long pfBar_;
    __shared__ float red[2][2][T / 32];
    __shared__ float part[2][2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C; // = ITEMS * 4 * T
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5;
    if (PF) {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&pfBar_)) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
            if (cid < rows)
                ringIssue(smemAddr(&pfBar_), reinterpret_cast<float *>(pf_), X + (long long)cid * cols + (long long)rank * span,
                          (unsigned)span * 4u);
        }
        __syncthreads();
    }
    int i = 0;
    for (long long row = cid; row < rows; row += nclusters, ++i) {
        const float4 *in = reinterpret_cast<const float4 *>(X + row * (long long)cols + (long long)rank * span);
        float4 *out = reinterpret_cast<float4 *>(Y + row * (long long)cols + (long long)rank * span);
        float4 x[ITEMS];
        if (PF) {
            ringWait(smemAddr(&pfBar_), (unsigned)i & 1u);
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                x[it] = pf_[it * T + threadIdx.x];
            __syncthreads();
            if (threadIdx.x == 0 && row + nclusters < rows) {
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                ringIssue(smemAddr(&pfBar_), reinterpret_cast<float *>(pf_),
                          X + (row + nclusters) * (long long)cols + (long long)rank * span, (unsigned)span * 4u);
            }
        } else {
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                x[it] = STREAM ? __ldcs(in + it * T + threadIdx.x) : in[it * T + threadIdx.x];
        }
        float m = __int_as_float(0xff800000);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
            m = fmaxf(fmaxf(m, fmaxf(x[it].x, x[it].y)), fmaxf(x[it].z, x[it].w));
        float M, S, scale;
        if (ONLINE) {
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                x[it].x = expShift<FAST>(x[it].x, m);
                x[it].y = expShift<FAST>(x[it].y, m);
                x[it].z = expShift<FAST>(x[it].z, m);
                x[it].w = expShift<FAST>(x[it].w, m);
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            }
            float bm = m, bs = s;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                combinePair<FAST>(bm, bs, __shfl_xor_sync(0xffffffffu, bm, o), __shfl_xor_sync(0xffffffffu, bs, o));
            if ((threadIdx.x & 31) == 0) {
                red[i & 1][0][warp] = bm;
                red[i & 1][1][warp] = bs;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                float pm = red[i & 1][0][0], ps = red[i & 1][1][0];
                for (int w = 1; w < T / 32; ++w)
                    combinePair<FAST>(pm, ps, red[i & 1][0][w], red[i & 1][1][w]);
                part[i & 1][0] = pm;
                part[i & 1][1] = ps;
            }
            cluster.sync();
            if (WARP0) {
                // lanes 0..C-1 of warp 0 read one block's part each; the row's (M, S) through shared memory
                if (warp == 0) {
                    const int l = threadIdx.x & 31;
                    float qm = __int_as_float(0xff800000), qs = 0.f;
                    if (l < C) {
                        qm = *cluster.map_shared_rank(&part[i & 1][0], l);
                        qs = *cluster.map_shared_rank(&part[i & 1][1], l);
                    }
#pragma unroll
                    for (int o = C / 2; o > 0; o >>= 1) {
                        const float om = __shfl_xor_sync(0xffffffffu, qm, o), os = __shfl_xor_sync(0xffffffffu, qs, o);
                        const float MM = fmaxf(qm, om);
                        qs = qs * expShift<FAST>(qm, MM) + os * expShift<FAST>(om, MM);
                        qm = MM;
                    }
                    if (l == 0) {
                        red[i & 1][0][0] = qm;
                        red[i & 1][1][0] = qs;
                    }
                }
                __syncthreads();
                M = red[i & 1][0][0];
                S = red[i & 1][1][0];
            } else {
                M = __int_as_float(0xff800000);
                float pm[C], ps[C];
#pragma unroll
                for (int b = 0; b < C; ++b) {
                    pm[b] = *cluster.map_shared_rank(&part[i & 1][0], b);
                    ps[b] = *cluster.map_shared_rank(&part[i & 1][1], b);
                    M = fmaxf(M, pm[b]);
                }
                S = 0.f;
#pragma unroll
                for (int b = 0; b < C; ++b)
                    S += ps[b] * expShift<FAST>(pm[b], M);
            }
            scale = expShift<FAST>(m, M) / S;
        } else {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
            if ((threadIdx.x & 31) == 0)
                red[i & 1][0][warp] = m;
            __syncthreads();
            if (threadIdx.x == 0) {
                float pm = red[i & 1][0][0];
                for (int w = 1; w < T / 32; ++w)
                    pm = fmaxf(pm, red[i & 1][0][w]);
                part[i & 1][0] = pm;
            }
            cluster.sync();
            M = __int_as_float(0xff800000);
#pragma unroll
            for (int b = 0; b < C; ++b)
                M = fmaxf(M, *cluster.map_shared_rank(&part[i & 1][0], b));
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                x[it].x = expShift<FAST>(x[it].x, M);
                x[it].y = expShift<FAST>(x[it].y, M);
                x[it].z = expShift<FAST>(x[it].z, M);
                x[it].w = expShift<FAST>(x[it].w, M);
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                s += __shfl_xor_sync(0xffffffffu, s, o);
            if ((threadIdx.x & 31) == 0)
                red[i & 1][1][warp] = s;
            __syncthreads();
            if (threadIdx.x == 0) {
                float ps = 0.f;
                for (int w = 0; w < T / 32; ++w)
                    ps += red[i & 1][1][w];
                part[i & 1][1] = ps;
            }
            cluster.sync();
            S = 0.f;
#pragma unroll
            for (int b = 0; b < C; ++b)
                S += *cluster.map_shared_rank(&part[i & 1][1], b);
            scale = 1.0f / S;
        }
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
        {
            const float4 o = make_float4(x[it].x * scale, x[it].y * scale, x[it].z * scale, x[it].w * scale);
            if (STREAM)
                __stcs(out + it * T + threadIdx.x, o);
            else
                out[it * T + threadIdx.x] = o;
        }
    }
    cluster.sync(); // the other blocks' last reads of part
}

// ---- layer norm, row in registers, one cluster round: each thread's (mean, M2) about its own
// mean, combined by Chan's formula (equal counts), then y = (x - mean) * rstd * gamma + beta.
__device__ __forceinline__ void chan(float &mean, float &m2, float &n, float mb, float m2b, float nb)
{
    const float t = n + nb;
    const float d = mb - mean;
    mean += d * (nb / t);
    m2 += m2b + d * d * (n * nb / t);
    n = t;
}

// GB: where gamma and beta come from at the output: 0 global (L2) at the output pass, 1 global
// loaded with the row into registers (in flight during the exchanges), 2 shared memory, copied once
// per block (the block keeps its column span for every row it walks).
template <int C, int T, int ITEMS, int MINB, bool ONLINE, bool AFFINE = true, int GB = 0>
__global__ void __launch_bounds__(T, MINB) reg_layernorm(const float *__restrict__ X, const float *__restrict__ G,
                                                          const float *__restrict__ B, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(16) float4 gbShared_[]; // GB == 2: [2][ITEMS * T]
    __shared__ float red[2][3][T / 32];
    __shared__ float part[2][3];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5;
    const float4 *g4 = reinterpret_cast<const float4 *>(G + (long long)rank * span);
    const float4 *b4 = reinterpret_cast<const float4 *>(B + (long long)rank * span);
    if (GB == 2) {
        for (int e = threadIdx.x; e < ITEMS * T; e += T) {
            gbShared_[e] = g4[e];
            gbShared_[ITEMS * T + e] = b4[e];
        }
        __syncthreads();
    }
    int i = 0;
    for (long long row = cid; row < rows; row += nclusters, ++i) {
        const float4 *in = reinterpret_cast<const float4 *>(X + row * (long long)cols + (long long)rank * span);
        float4 *out = reinterpret_cast<float4 *>(Y + row * (long long)cols + (long long)rank * span);
        float4 x[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
            x[it] = in[it * T + threadIdx.x];
        float4 gg[GB == 1 ? ITEMS : 1], bb[GB == 1 ? ITEMS : 1];
        if (GB == 1) {
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                gg[it] = g4[it * T + threadIdx.x];
                bb[it] = b4[it * T + threadIdx.x];
            }
        }
        float mean, rstd;
        if (ONLINE) {
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            float mu = s * (1.0f / (4 * ITEMS)), m2 = 0.f, n = 4.0f * ITEMS;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                const float a = x[it].x - mu, b = x[it].y - mu, c = x[it].z - mu, d = x[it].w - mu;
                m2 += (a * a + b * b) + (c * c + d * d);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                const float om = __shfl_xor_sync(0xffffffffu, mu, o), o2 = __shfl_xor_sync(0xffffffffu, m2, o);
                chan(mu, m2, n, om, o2, n);
            }
            if ((threadIdx.x & 31) == 0) {
                red[i & 1][0][warp] = mu;
                red[i & 1][1][warp] = m2;
                red[i & 1][2][warp] = n;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                float pm = red[i & 1][0][0], p2 = red[i & 1][1][0], pn = red[i & 1][2][0];
                for (int w = 1; w < T / 32; ++w)
                    chan(pm, p2, pn, red[i & 1][0][w], red[i & 1][1][w], red[i & 1][2][w]);
                part[i & 1][0] = pm;
                part[i & 1][1] = p2;
                part[i & 1][2] = pn;
            }
            cluster.sync();
            float pm = *cluster.map_shared_rank(&part[i & 1][0], 0), p2 = *cluster.map_shared_rank(&part[i & 1][1], 0),
                  pn = *cluster.map_shared_rank(&part[i & 1][2], 0);
#pragma unroll
            for (int b = 1; b < C; ++b)
                chan(pm, p2, pn, *cluster.map_shared_rank(&part[i & 1][0], b), *cluster.map_shared_rank(&part[i & 1][1], b),
                     *cluster.map_shared_rank(&part[i & 1][2], b));
            mean = pm;
            rstd = rsqrtf(p2 / (float)cols + 1e-5f);
        } else {
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                s += __shfl_xor_sync(0xffffffffu, s, o);
            if ((threadIdx.x & 31) == 0)
                red[i & 1][0][warp] = s;
            __syncthreads();
            if (threadIdx.x == 0) {
                float p = 0.f;
                for (int w = 0; w < T / 32; ++w)
                    p += red[i & 1][0][w];
                part[i & 1][0] = p;
            }
            cluster.sync();
            s = 0.f;
#pragma unroll
            for (int b = 0; b < C; ++b)
                s += *cluster.map_shared_rank(&part[i & 1][0], b);
            mean = s / (float)cols;
            float v = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                const float a = x[it].x - mean, b = x[it].y - mean, c = x[it].z - mean, d = x[it].w - mean;
                v += (a * a + b * b) + (c * c + d * d);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                v += __shfl_xor_sync(0xffffffffu, v, o);
            if ((threadIdx.x & 31) == 0)
                red[i & 1][1][warp] = v;
            __syncthreads();
            if (threadIdx.x == 0) {
                float p = 0.f;
                for (int w = 0; w < T / 32; ++w)
                    p += red[i & 1][1][w];
                part[i & 1][1] = p;
            }
            cluster.sync();
            v = 0.f;
#pragma unroll
            for (int b = 0; b < C; ++b)
                v += *cluster.map_shared_rank(&part[i & 1][1], b);
            rstd = rsqrtf(v / (float)cols + 1e-5f);
        }
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const float4 g = !AFFINE ? make_float4(1.f, 1.f, 1.f, 1.f)
                             : GB == 1 ? gg[it]
                             : GB == 2 ? gbShared_[it * T + threadIdx.x]
                                       : g4[it * T + threadIdx.x];
            const float4 b = !AFFINE ? make_float4(0.f, 0.f, 0.f, 0.f)
                             : GB == 1 ? bb[it]
                             : GB == 2 ? gbShared_[ITEMS * T + it * T + threadIdx.x]
                                       : b4[it * T + threadIdx.x];
            out[it * T + threadIdx.x] = make_float4((x[it].x - mean) * rstd * g.x + b.x, (x[it].y - mean) * rstd * g.y + b.y,
                                                    (x[it].z - mean) * rstd * g.z + b.z, (x[it].w - mean) * rstd * g.w + b.w);
        }
    }
    cluster.sync();
}


// ---- split: IR float4 per thread in registers and IS in shared memory (cp.async), so that more
// blocks (rows) fit an SM than the registers alone hold: online combine, fast exp.
template <int C, int T, int IR, int IS, int MINB>
__global__ void __launch_bounds__(T, MINB) split_softmax(const float *__restrict__ X, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(16) float4 held_[]; // [IS][T]
    __shared__ float red[2][T / 32];
    __shared__ float part[2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C; // = (IR + IS) * 4 * T
    const int cid = blockIdx.x / C;
    const int nclusters = gridDim.x / C;
    const int warp = threadIdx.x >> 5;
    for (long long row = cid; row < rows; row += nclusters) {
    const float4 *in = reinterpret_cast<const float4 *>(X + row * (long long)cols + (long long)rank * span);
    float4 *out = reinterpret_cast<float4 *>(Y + row * (long long)cols + (long long)rank * span);
#pragma unroll
    for (int it = 0; it < IS; ++it)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smemAddr(&held_[it * T + threadIdx.x])),
                     "l"(in + (IR + it) * T + threadIdx.x)
                     : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    float4 x[IR];
#pragma unroll
    for (int it = 0; it < IR; ++it)
        x[it] = in[it * T + threadIdx.x];
    float m = __int_as_float(0xff800000);
#pragma unroll
    for (int it = 0; it < IR; ++it)
        m = fmaxf(fmaxf(m, fmaxf(x[it].x, x[it].y)), fmaxf(x[it].z, x[it].w));
    asm volatile("cp.async.wait_all;\n" ::: "memory"); // only this thread's own slots are read
#pragma unroll 2
    for (int it = 0; it < IS; ++it) {
        const float4 v = held_[it * T + threadIdx.x];
        m = fmaxf(fmaxf(m, fmaxf(v.x, v.y)), fmaxf(v.z, v.w));
    }
    float s = 0.f;
#pragma unroll
    for (int it = 0; it < IR; ++it) {
        x[it].x = expShift<true>(x[it].x, m);
        x[it].y = expShift<true>(x[it].y, m);
        x[it].z = expShift<true>(x[it].z, m);
        x[it].w = expShift<true>(x[it].w, m);
        s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
    }
#pragma unroll 2
    for (int it = 0; it < IS; ++it) {
        float4 v = held_[it * T + threadIdx.x];
        v.x = expShift<true>(v.x, m);
        v.y = expShift<true>(v.y, m);
        v.z = expShift<true>(v.z, m);
        v.w = expShift<true>(v.w, m);
        s += (v.x + v.y) + (v.z + v.w);
        held_[it * T + threadIdx.x] = v;
    }
    float bm = m, bs = s;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        combinePair<true>(bm, bs, __shfl_xor_sync(0xffffffffu, bm, o), __shfl_xor_sync(0xffffffffu, bs, o));
    if ((threadIdx.x & 31) == 0) {
        red[0][warp] = bm;
        red[1][warp] = bs;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float pm = red[0][0], ps = red[1][0];
        for (int w = 1; w < T / 32; ++w)
            combinePair<true>(pm, ps, red[0][w], red[1][w]);
        part[0] = pm;
        part[1] = ps;
    }
    cluster.sync();
    float qm = __int_as_float(0xff800000), qs = 0.f;
    const int l = threadIdx.x & 31;
    if (l < C) {
        qm = *cluster.map_shared_rank(&part[0], l);
        qs = *cluster.map_shared_rank(&part[1], l);
    }
#pragma unroll
    for (int o = C / 2; o > 0; o >>= 1)
        combinePair<true>(qm, qs, __shfl_xor_sync(0xffffffffu, qm, o), __shfl_xor_sync(0xffffffffu, qs, o));
    const float M = __shfl_sync(0xffffffffu, qm, 0), S = __shfl_sync(0xffffffffu, qs, 0);
    const float scale = expShift<true>(m, M) / S;
#pragma unroll
    for (int it = 0; it < IR; ++it)
        out[it * T + threadIdx.x] = make_float4(x[it].x * scale, x[it].y * scale, x[it].z * scale, x[it].w * scale);
#pragma unroll 2
    for (int it = 0; it < IS; ++it) {
        const float4 v = held_[it * T + threadIdx.x];
        out[(IR + it) * T + threadIdx.x] = make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale);
    }
    cluster.sync(); // the parts and red are reused by the next row
    }
}

#ifdef GENERATED_VARIANTS // -DGENERATED_VARIANTS='"path"': generated kernels to time beside the prototypes
#include GENERATED_VARIANTS
#endif

// ---- harness
struct Timer {
    cudaEvent_t a, b;
    Timer() { cudaEventCreate(&a), cudaEventCreate(&b); }
};

static float *g_flush = nullptr;
static size_t g_flushBytes = 0;
// How timeIt empties L2 before each timed run: 0 writes the flush buffer (cudaMemsetAsync: leaves L2
// full of dirty lines, which the timed kernel then writes back to DRAM beside its own traffic);
// 1 reads it (flushRead: clean lines, the dirty ones written back before the start event).
static int g_flushMode = 1; // reads from run 21 on (calls before it wrote)

__global__ void flushRead(const float4 *__restrict__ p, size_t n, float *sink)
{
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = p[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) // never (the buffer holds bytes 0x01): keeps the loads
        *sink = acc;
}

// The larger relative error; a NaN (an output never written: the buffers are poisoned with 0xff)
// sticks, where std::max would drop it.
static double worse(double worst, double e) { return (e > worst || std::isnan(e)) ? e : worst; }

static double timeIt(const std::function<void()> &launch, int reps = 30)
{
    Timer t;
    for (int w = 0; w < 3; ++w)
        launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
        if (g_flushMode == 0)
            CK(cudaMemsetAsync(g_flush, r & 0xff, g_flushBytes));
        else
            flushRead<<<132 * 8, 512>>>(reinterpret_cast<const float4 *>(g_flush), g_flushBytes / 16, g_flush);
        cudaEventRecord(t.a);
        launch();
        cudaEventRecord(t.b);
        CK(cudaEventSynchronize(t.b));
        float x = 0;
        cudaEventElapsedTime(&x, t.a, t.b);
        ms.push_back(x);
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

#ifndef LONG_ROW_PROTO_NO_MAIN // bench/tools/long_row_l2.cu includes the kernels above
int main()
{
    const int rows = 256, cols = 262144;
    const size_t n = (size_t)rows * cols;
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    g_flushBytes = (size_t)prop.l2CacheSize * 2;
    CK(cudaMalloc(&g_flush, g_flushBytes));
    std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);

    std::vector<float> hx(n);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 3.f);
    for (auto &v : hx)
        v = nd(rng);
    float *X, *Y;
    CK(cudaMalloc(&X, n * 4));
    CK(cudaMalloc(&Y, n * 4));
    CK(cudaMemcpy(X, hx.data(), n * 4, cudaMemcpyHostToDevice));

    // copy bandwidth: 1 GiB device to device, bytes read + written
    {
        const size_t cb = size_t(1) << 30;
        void *a, *b;
        CK(cudaMalloc(&a, cb));
        CK(cudaMalloc(&b, cb));
        CK(cudaMemset(a, 1, cb));
        const double ms = timeIt([&] { cudaMemcpyAsync(b, a, cb, cudaMemcpyDeviceToDevice); }, 10);
        std::printf("copy 1 GiB: %.4f ms, %.0f GB/s\n", ms, 2.0 * cb / ms / 1e6);
        cudaFree(a);
        cudaFree(b);
    }
    const double bytes = 2.0 * n * 4;
    const int sampleRows[] = {0, 1, 7, 100, 128, 200, 254, 255};
    auto verify = [&](const char *name) {
        std::vector<float> hy((size_t)cols);
        double worst = 0;
        for (int r : sampleRows) {
            CK(cudaMemcpy(hy.data(), Y + (size_t)r * cols, (size_t)cols * 4, cudaMemcpyDeviceToHost));
            double m = -1e300, s = 0;
            for (int j = 0; j < cols; ++j)
                m = std::max(m, (double)hx[(size_t)r * cols + j]);
            for (int j = 0; j < cols; ++j)
                s += std::exp((double)hx[(size_t)r * cols + j] - m);
            for (int j = 0; j < cols; ++j) {
                const double ref = std::exp((double)hx[(size_t)r * cols + j] - m) / s;
                worst = worse(worst, std::fabs(hy[j] - ref) / std::max(ref, 1e-30));
            }
        }
        std::printf("  %-34s max rel err %.2e %s\n", name, worst, worst < 1e-4 ? "ok" : "WRONG");
    };
    auto report = [&](const char *name, double ms) {
        std::printf("%-36s %.4f ms  %6.0f GB/s\n", name, ms, bytes / ms / 1e6);
    };

    CK(cudaMemset(Y, 0xff, n * 4));
    {
        const double ms = timeIt([&] { gen_softmax<<<(rows + 1) / 2 * 8, 512>>>(X, Y, rows, cols); });
        report("gen cluster8 t512 steps2", ms);
        verify("gen");
    }

    auto ring = [&](auto kernel, int C, int T, int S, const char *name) {
        const int span = cols / C;
        const size_t smem = (size_t)S * span * 4;
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchConfig_t cfg{};
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = C;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        cfg.blockDim = dim3(T);
        cfg.dynamicSmemBytes = smem;
        cfg.gridDim = dim3(C * 64);
        int active = 0;
        CK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
        if (active < 1) {
            std::printf("%-36s not launchable\n", name);
            return;
        }
        for (int clusters : {active, std::min(rows, 2 * active)}) {
            cfg.gridDim = dim3(C * clusters);
            CK(cudaMemset(Y, 0xff, n * 4));
            const double ms = timeIt([&] { CK(cudaLaunchKernelEx(&cfg, kernel, (const float *)X, Y, rows, cols)); });
            const std::string label = std::string(name) + " x" + std::to_string(clusters);
            report(label.c_str(), ms);
            verify(label.c_str());
        }
    };

    auto regRun = [&](auto kernel, int C, int T, const char *name, int dynamicShared = 0) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchConfig_t cfg{};
        cfg.dynamicSmemBytes = dynamicShared < 0 ? (size_t)cols / C * 4 : (size_t)dynamicShared;
        if (cfg.dynamicSmemBytes)
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cfg.dynamicSmemBytes));
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = C;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        cfg.blockDim = dim3(T);
        cfg.gridDim = dim3(C * 64);
        int active = 0;
        CK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
        cudaFuncAttributes fa{};
        CK(cudaFuncGetAttributes(&fa, kernel));
        if (active < 1) {
            std::printf("%-36s not launchable\n", name);
            return;
        }
        for (int clusters : {rows, active, std::min(rows, 2 * active)}) {
            cfg.gridDim = dim3(C * clusters);
            CK(cudaMemset(Y, 0xff, n * 4));
            const double ms = timeIt([&] { CK(cudaLaunchKernelEx(&cfg, kernel, (const float *)X, Y, rows, cols)); });
            const std::string label = std::string(name) + " x" + std::to_string(clusters) + " (" +
                                      std::to_string(fa.numRegs) + " regs, " + std::to_string(active) + " res)";
            report(label.c_str(), ms);
            verify(label.c_str());
        }
    };
    ring(ring_softmax<16, 256, 3, true, false>, 16, 256, 3, "ring c16 t256 s3 online");
    regRun(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg c16 t128 mb3 online fast warp0");
    regRun(split_softmax<16, 128, 16, 16, 4>, 16, 128, "split c16 t128 16+16 mb4", 16 * 128 * 16);
    regRun(split_softmax<16, 128, 16, 16, 5>, 16, 128, "split c16 t128 16+16 mb5", 16 * 128 * 16);
    regRun(split_softmax<16, 128, 8, 24, 4>, 16, 128, "split c16 t128 8+24 mb4", 24 * 128 * 16);
    regRun(split_softmax<16, 128, 24, 8, 3>, 16, 128, "split c16 t128 24+8 mb3", 8 * 128 * 16);
    regRun(split_softmax<16, 256, 8, 8, 4>, 16, 256, "split c16 t256 8+8 mb4", 8 * 256 * 16);
    regRun(split_softmax<16, 256, 8, 8, 3>, 16, 256, "split c16 t256 8+8 mb3", 8 * 256 * 16);
    regRun(split_softmax<8, 256, 16, 16, 2>, 8, 256, "split c8 t256 16+16 mb2", 16 * 256 * 16);
    regRun(reg_softmax<16, 128, 32, 3, false, false>, 16, 128, "reg c16 t128 mb3 2rounds expf");
    regRun(reg_softmax<16, 128, 32, 3, true, false, false, true>, 16, 128, "reg c16 t128 mb3 online expf warp0");
    regRun(reg_softmax<16, 128, 32, 3, false, true>, 16, 128, "reg c16 t128 mb3 2rounds fast");
    // layer norm
    {
        std::vector<float> hg((size_t)cols), hb((size_t)cols);
        for (int j = 0; j < cols; ++j) {
            hg[j] = 1.0f + 0.01f * (j % 17);
            hb[j] = 0.001f * (j % 13);
        }
        float *G, *B;
        CK(cudaMalloc(&G, cols * 4));
        CK(cudaMalloc(&B, cols * 4));
        CK(cudaMemcpy(G, hg.data(), cols * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hb.data(), cols * 4, cudaMemcpyHostToDevice));
        auto verifyLn = [&](const char *name, bool affine) {
            std::vector<float> hy((size_t)cols);
            double worst = 0;
            for (int r : sampleRows) {
                CK(cudaMemcpy(hy.data(), Y + (size_t)r * cols, (size_t)cols * 4, cudaMemcpyDeviceToHost));
                double mu = 0, v = 0;
                for (int j = 0; j < cols; ++j)
                    mu += hx[(size_t)r * cols + j];
                mu /= cols;
                for (int j = 0; j < cols; ++j)
                    v += (hx[(size_t)r * cols + j] - mu) * (hx[(size_t)r * cols + j] - mu);
                v /= cols;
                for (int j = 0; j < cols; ++j) {
                    const double norm = (hx[(size_t)r * cols + j] - mu) / std::sqrt(v + 1e-5);
                    const double ref = affine ? norm * hg[j] + hb[j] : norm;
                    worst = worse(worst, std::fabs(hy[j] - ref) / std::max(std::fabs(ref), 1e-3));
                }
            }
            std::printf("  %-34s max rel err %.2e %s\n", name, worst, worst < 1e-4 ? "ok" : "WRONG");
        };
        auto lnRun = [&](auto kernel, int C, int T, const char *name, bool affine = true, int dynamicShared = 0) {
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            cudaLaunchConfig_t cfg{};
            cfg.dynamicSmemBytes = (size_t)dynamicShared;
            if (dynamicShared)
                CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamicShared));
            cudaLaunchAttribute attr{};
            attr.id = cudaLaunchAttributeClusterDimension;
            attr.val.clusterDim.x = C;
            attr.val.clusterDim.y = 1;
            attr.val.clusterDim.z = 1;
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
            cfg.blockDim = dim3(T);
            cfg.gridDim = dim3(C * 64);
            int active = 0;
            CK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
            cudaFuncAttributes fa{};
            CK(cudaFuncGetAttributes(&fa, kernel));
            if (active < 1) {
                std::printf("%-36s not launchable\n", name);
                return;
            }
            for (int clusters : {rows, active}) {
                cfg.gridDim = dim3(C * clusters);
                CK(cudaMemset(Y, 0xff, n * 4));
                const double ms = timeIt([&] {
                    CK(cudaLaunchKernelEx(&cfg, kernel, (const float *)X, (const float *)G, (const float *)B, Y, rows, cols));
                });
                const std::string label = std::string(name) + " x" + std::to_string(clusters) + " (" +
                                          std::to_string(fa.numRegs) + " regs, " + std::to_string(active) + " res)";
                report(label.c_str(), ms);
                verifyLn(label.c_str(), affine);
            }
        };
        lnRun(reg_layernorm<8, 512, 16, 1, false>, 8, 512, "LN reg c8 t512 2rounds");
        lnRun(reg_layernorm<8, 512, 16, 1, false, false>, 8, 512, "LN reg c8 t512 2rounds no-affine", false);
        lnRun(reg_layernorm<16, 128, 32, 3, false>, 16, 128, "LN reg c16 t128 mb3 2rounds");
        lnRun(reg_layernorm<16, 128, 32, 3, true>, 16, 128, "LN reg c16 t128 mb3 online");
        lnRun(reg_layernorm<16, 512, 8, 1, false, true, 0>, 16, 512, "LN reg c16 t512 2rounds gb=global");
        lnRun(reg_layernorm<16, 512, 8, 1, false, true, 1>, 16, 512, "LN reg c16 t512 2rounds gb=early");
        lnRun(reg_layernorm<16, 512, 8, 1, false, true, 2>, 16, 512, "LN reg c16 t512 2rounds gb=shared", true,
              2 * 8 * 512 * 16);
        lnRun(reg_layernorm<16, 256, 16, 1, false, true, 2>, 16, 256, "LN reg c16 t256 2rounds gb=shared", true,
              2 * 16 * 256 * 16);
        lnRun(reg_layernorm<16, 256, 16, 1, false, true, 1>, 16, 256, "LN reg c16 t256 2rounds gb=early");
        lnRun(reg_layernorm<8, 512, 16, 1, false, true, 1>, 8, 512, "LN reg c8 t512 2rounds gb=early");
    }
#ifdef GENERATED_VARIANTS
    // The generated kernels: one row per cluster of 16 blocks of 128 threads.
    auto genRun = [&](auto kernel, const char *name) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaFuncAttributes fa{};
        CK(cudaFuncGetAttributes(&fa, kernel));
        CK(cudaMemset(Y, 0xff, n * 4));
        const double ms = timeIt([&] { kernel<<<rows * 16, 128>>>(X, Y, rows, cols); });
        const std::string label = std::string(name) + " (" + std::to_string(fa.numRegs) + " regs)";
        report(label.c_str(), ms);
        verify(label.c_str());
    };
#define STITCH_GEN_RUN(k) genRun(k, #k);
    GENERATED_KERNELS(STITCH_GEN_RUN)
    // The bench's sweep ranks candidates on zero-filled inputs: two of them on zeros too.
    CK(cudaMemset(X, 0, n * 4));
#define STITCH_GEN_ZEROS(k) report("zeros: " #k, timeIt([&] { k<<<rows * 16, 128>>>(X, Y, rows, cols); }));
    GENERATED_ZEROS(STITCH_GEN_ZEROS)
#endif
    return 0;
}
#endif
