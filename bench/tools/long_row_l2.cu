// Prototype for issue 4's long rows (softmax and layer norm over 256 rows of 262144 floats), session
// 17: the row read twice, the second time from L2, instead of held on chip.
//
// The kernels of bench/tools/long_row_proto.cu keep a cluster's row in registers, so an SM holds
// at most three 128-thread blocks and Nsight Compute reads them as latency-bound (run 12). Here a
// cluster of C blocks walks rows; each block streams its span twice:
//   pass 1  loads the span (kept in L2 with an evict_last policy when HINT), reduces it (softmax:
//           online max and sum of exp; layer norm: shifted sums, combined by Chan's formula);
//   exchange  one cluster barrier per row (split arrive / wait: the first loads of pass 2 are
//           issued between them);
//   pass 2  reloads the span (L2 hits; evict_first when HINT), writes the output (streaming
//           stores when HINT).
// Nothing of the row stays in registers, so blocks are small and many per SM. DRAM traffic is a
// copy's (the row once in, once out); L2 serves the second read.
// Further modes (run 19's README):
//   diag   the register kernels' memory pattern alone (load a block's span, optionally meet the
//          cluster, store it) on 256, 252, 231 and 210 rows;
//   bulk   the row in registers and the outputs through a shared-memory stage written to global
//          memory by the copy engine (cp.async.bulk), in 1-16 pieces; layer norm too; an exchange
//          by st.async pushes instead of a cluster barrier;
//   split  part of the row in registers, part in shared memory loaded by bulk copies;
//   ln     layer norm with row groups that share one copy of gamma and beta in shared memory
//          (long_row_ln.cuh, session 18);
//   lngen  with -DGENERATED_PROGRAM='"file.cu"' (`stitchcuda generate examples/layernorm.te --size
//          M=256 --size N=262144 --out DIR`), the generated layer-norm program's own launcher beside
//          the row-group prototype (session 18), after a flush by writes and by reads in turn (run 21);
//   gen    with -DGENERATED_VARIANTS='"file.cuh"' (bench/tools/generated_variants.sh ... resident on),
//          the generator's resident-grid kernels beside the prototypes.
// Times, side by side with a 1 GiB copy and the register kernels of long_row_proto.cu, in one
// process; every variant is checked against a double-precision reference on sampled rows:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/lrl2 bench/tools/long_row_l2.cu && /tmp/lrl2 [MODE]
#define LONG_ROW_PROTO_NO_MAIN
#include "long_row_proto.cu"

namespace l2proto {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float4 loadKeep(const float4 *p, unsigned long long policy)
{
    float4 v;
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(policy));
    return v;
}

template <int HINT> __device__ __forceinline__ float4 loadFirst(const float4 *p, unsigned long long policy)
{
    return HINT ? loadKeep(p, policy) : *p;
}

template <int HINT> __device__ __forceinline__ float4 loadSecond(const float4 *p)
{
    return HINT ? __ldcs(p) : *p;
}

template <int HINT> __device__ __forceinline__ void store(float4 *p, float4 v)
{
    if (HINT)
        __stcs(p, v);
    else
        *p = v;
}

__device__ __forceinline__ void clusterArrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void clusterWait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

// (m, s): the maximum in log2 units and the sum of 2^(x log2e - m).
__device__ __forceinline__ void combineMaxSum(float &m, float &s, float m2, float s2)
{
    const float M = fmaxf(m, m2);
    s = s * ex2(m - M) + s2 * ex2(m2 - M);
    m = M;
}

// Walks the cluster's rows: pass1(j) reduces row j into the block's slot j % 3 of `part`, pass2(j)
// combines the cluster's parts of row j and writes it. In order (PIPE false): pass 1, arrive,
// the first loads of pass 2, wait, pass 2, row after row. Pipelined (PIPE true): the next row's
// pass 1 runs between the arrive and the wait of this row, so a block always has loads to issue
// while the cluster meets. Three slots: a block writes slot (j + 1) % 3 after the barrier of row
// j - 1, when every block has read slot (j - 2) % 3.
template <bool PIPE, typename Pass1, typename Pass2>
__device__ __forceinline__ void walkRows(int nrows, Pass1 &&pass1, Pass2 &&pass2)
{
    if (nrows <= 0)
        return;
    pass1(0);
    clusterArrive();
    for (int j = 0; j < nrows; ++j) {
        if (PIPE && j + 1 < nrows)
            pass1(j + 1);
        clusterWait();
        pass2(j);
        if (j + 1 < nrows) {
            if (!PIPE)
                pass1(j + 1);
            clusterArrive();
        }
    }
    clusterArrive(); // the other blocks' last reads of part
    clusterWait();
}

// PER float4 per thread per row, U of them in flight per step.
template <int C, int T, int PER, int U, int MINB, int HINT, bool PIPE = false>
__global__ void __launch_bounds__(T, MINB) softmax2(const float *__restrict__ X, float *__restrict__ Y, int rows, int cols)
{
    static_assert(PER % U == 0, "steps");
    __shared__ float red[3][2][T / 32];
    __shared__ float part[3][2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C; // = PER * 4 * T
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned long long policy = 0;
    if (HINT)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    auto rowIn = [&](int j) {
        const long long row = cid + (long long)j * nclusters;
        return reinterpret_cast<const float4 *>(X + row * cols + (long long)rank * span) + threadIdx.x;
    };
    auto rowOut = [&](int j) {
        const long long row = cid + (long long)j * nclusters;
        return reinterpret_cast<float4 *>(Y + row * cols + (long long)rank * span) + threadIdx.x;
    };
    auto pass1 = [&](int j) {
        const float4 *in = rowIn(j);
        float m = __int_as_float(0xff800000), s = 0.f;
#pragma unroll 1
        for (int k = 0; k < PER; k += U) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                v[u] = loadFirst<HINT>(in + (k + u) * T, policy);
            float cm = m;
#pragma unroll
            for (int u = 0; u < U; ++u)
                cm = fmaxf(cm, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)) * kLog2e);
            float acc = 0.f;
#pragma unroll
            for (int u = 0; u < U; ++u)
                acc += (ex2(fmaf(v[u].x, kLog2e, -cm)) + ex2(fmaf(v[u].y, kLog2e, -cm))) +
                       (ex2(fmaf(v[u].z, kLog2e, -cm)) + ex2(fmaf(v[u].w, kLog2e, -cm)));
            s = s * ex2(m - cm) + acc;
            m = cm;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            combineMaxSum(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
        const int slot = j % 3;
        if (lane == 0) {
            red[slot][0][warp] = m;
            red[slot][1][warp] = s;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            float pm = red[slot][0][0], ps = red[slot][1][0];
            for (int w = 1; w < T / 32; ++w)
                combineMaxSum(pm, ps, red[slot][0][w], red[slot][1][w]);
            part[slot][0] = pm;
            part[slot][1] = ps;
        }
    };
    auto pass2 = [&](int j) {
        const float4 *in = rowIn(j);
        float4 *out = rowOut(j);
        const int slot = j % 3;
        // lanes 0..C-1 read one block's part each
        float qm = __int_as_float(0xff800000), qs = 0.f;
        if (lane < C) {
            qm = *cluster.map_shared_rank(&part[slot][0], lane);
            qs = *cluster.map_shared_rank(&part[slot][1], lane);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            combineMaxSum(qm, qs, __shfl_xor_sync(0xffffffffu, qm, o), __shfl_xor_sync(0xffffffffu, qs, o));
        const float M = qm, inv = 1.0f / qs;
#pragma unroll 1
        for (int k = 0; k < PER; k += U) {
            float4 w[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                w[u] = loadSecond<HINT>(in + (k + u) * T);
#pragma unroll
            for (int u = 0; u < U; ++u)
                store<HINT>(out + (k + u) * T,
                            make_float4(ex2(fmaf(w[u].x, kLog2e, -M)) * inv, ex2(fmaf(w[u].y, kLog2e, -M)) * inv,
                                        ex2(fmaf(w[u].z, kLog2e, -M)) * inv, ex2(fmaf(w[u].w, kLog2e, -M)) * inv));
        }
    };
    walkRows<PIPE>(cid < rows ? (rows - cid + nclusters - 1) / nclusters : 0, pass1, pass2);
}

// Layer norm: each thread's sums shifted by its first element, (mean, M2, n) combined by Chan's
// formula, then y = (x - mean) rstd gamma + beta with the second read.
template <int C, int T, int PER, int U, int MINB, int HINT, bool PIPE = false>
__global__ void __launch_bounds__(T, MINB) layernorm2(const float *__restrict__ X, const float *__restrict__ G,
                                                       const float *__restrict__ B, float *__restrict__ Y, int rows, int cols)
{
    static_assert(PER % U == 0, "steps");
    __shared__ float red[3][3][T / 32];
    __shared__ float part[3][3];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const float4 *g4 = reinterpret_cast<const float4 *>(G + (long long)rank * span) + threadIdx.x;
    const float4 *b4 = reinterpret_cast<const float4 *>(B + (long long)rank * span) + threadIdx.x;
    unsigned long long policy = 0;
    if (HINT)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    auto rowIn = [&](int j) {
        const long long row = cid + (long long)j * nclusters;
        return reinterpret_cast<const float4 *>(X + row * cols + (long long)rank * span) + threadIdx.x;
    };
    auto rowOut = [&](int j) {
        const long long row = cid + (long long)j * nclusters;
        return reinterpret_cast<float4 *>(Y + row * cols + (long long)rank * span) + threadIdx.x;
    };
    auto pass1 = [&](int j) {
        const float4 *in = rowIn(j);
        float shift = 0.f, s1 = 0.f, s2 = 0.f;
#pragma unroll 1
        for (int k = 0; k < PER; k += U) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                v[u] = loadFirst<HINT>(in + (k + u) * T, policy);
            if (k == 0)
                shift = v[0].x;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const float a = v[u].x - shift, b = v[u].y - shift, c = v[u].z - shift, d = v[u].w - shift;
                s1 += (a + b) + (c + d);
                s2 += (a * a + b * b) + (c * c + d * d);
            }
        }
        float n = 4.0f * PER, mu = shift + s1 / n, m2 = fmaxf(s2 - s1 * s1 / n, 0.f);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float om = __shfl_xor_sync(0xffffffffu, mu, o), o2 = __shfl_xor_sync(0xffffffffu, m2, o);
            chan(mu, m2, n, om, o2, n);
        }
        const int slot = j % 3;
        if (lane == 0) {
            red[slot][0][warp] = mu;
            red[slot][1][warp] = m2;
            red[slot][2][warp] = n;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            float pm = red[slot][0][0], p2 = red[slot][1][0], pn = red[slot][2][0];
            for (int w = 1; w < T / 32; ++w)
                chan(pm, p2, pn, red[slot][0][w], red[slot][1][w], red[slot][2][w]);
            part[slot][0] = pm;
            part[slot][1] = p2;
            part[slot][2] = pn;
        }
    };
    auto pass2 = [&](int j) {
        const float4 *in = rowIn(j);
        float4 *out = rowOut(j);
        const int slot = j % 3;
        float qm = 0.f, q2 = 0.f, qn = 0.f;
        if (lane < C) {
            qm = *cluster.map_shared_rank(&part[slot][0], lane);
            q2 = *cluster.map_shared_rank(&part[slot][1], lane);
            qn = *cluster.map_shared_rank(&part[slot][2], lane);
        }
        // equal counts: pairwise Chan over lanes 0..C-1 (C a power of two)
#pragma unroll
        for (int o = C / 2; o > 0; o >>= 1) {
            const float om = __shfl_xor_sync(0xffffffffu, qm, o), o2 = __shfl_xor_sync(0xffffffffu, q2, o),
                        on = __shfl_xor_sync(0xffffffffu, qn, o);
            chan(qm, q2, qn, om, o2, on);
        }
        const float mean = __shfl_sync(0xffffffffu, qm, 0);
        const float rstd = rsqrtf(__shfl_sync(0xffffffffu, q2, 0) / (float)cols + 1e-5f);
#pragma unroll 1
        for (int k = 0; k < PER; k += U) {
            float4 w[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                w[u] = loadSecond<HINT>(in + (k + u) * T);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const float4 g = g4[(k + u) * T], b = b4[(k + u) * T];
                store<HINT>(out + (k + u) * T,
                            make_float4((w[u].x - mean) * rstd * g.x + b.x, (w[u].y - mean) * rstd * g.y + b.y,
                                        (w[u].z - mean) * rstd * g.z + b.z, (w[u].w - mean) * rstd * g.w + b.w));
            }
        }
    };
    walkRows<PIPE>(cid < rows ? (rows - cid + nclusters - 1) / nclusters : 0, pass1, pass2);
}

// Diagnostics: the register kernels' memory pattern alone. Each cluster block loads its span of a
// row into registers (ITEMS float4 per thread), optionally meets its cluster, and stores it.
template <int C, int T, int ITEMS, int MINB, bool SYNC>
__global__ void __launch_bounds__(T, MINB) rowCopy(const float *__restrict__ X, float *__restrict__ Y, int rows, int cols)
{
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int nclusters = gridDim.x / C;
    for (long long row = blockIdx.x / C; row < rows; row += nclusters) {
        const float4 *in = reinterpret_cast<const float4 *>(X + row * cols + (long long)rank * span) + threadIdx.x;
        float4 *out = reinterpret_cast<float4 *>(Y + row * cols + (long long)rank * span) + threadIdx.x;
        float4 x[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
            x[it] = in[it * T];
        if (SYNC)
            cluster.sync();
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
            out[it * T] = x[it];
    }
}

// Bulk stores: the row in registers as in reg_softmax (online, fast exp, the exchange read by one
// warp), but the output goes to a shared-memory copy of the block's span and one thread hands it
// to the copy engine (cp.async.bulk shared -> global). The registers are free as soon as the span
// is in shared memory, so the block loads its next row while the copy engine writes this one.
// SYNC_OUT false and OP 0 (rowCopy) measure the pattern alone.
__device__ __forceinline__ void bulkStore(float *dst, const void *src, unsigned bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(smemAddr(src)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void bulkWaitRead() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ float4 loadNoAllocate(const float4 *p)
{
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
}

// OP 0: copy, 1: softmax, 2: layer norm (gamma and beta read at the output).
// PUSH (softmax): no cluster barrier per row. Warp 0's lanes 0..C-1 store the block's (max, sum) into
// every block's slot for this rank with st.async, which counts the bytes on that block's mbarrier;
// a block waits on its own mbarrier for the C parts of the row (two buffers by row parity).
__device__ __forceinline__ unsigned mapRank(const void *p, int rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smemAddr(p)), "r"(rank));
    return r;
}

template <int C, int T, int ITEMS, int MINB, int OP, int PIECES = 1, int LDHINT = 0, int PUSH = 0>
__global__ void __launch_bounds__(T, MINB) bulkRow(const float *__restrict__ X, const float *__restrict__ G,
                                                    const float *__restrict__ Bt, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(128) float4 stage_[]; // ITEMS * T
    __shared__ float red[2][3][T / 32];
    __shared__ float part[2][3];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const float4 *g4 = reinterpret_cast<const float4 *>(G + (long long)rank * span);
    const float4 *b4 = reinterpret_cast<const float4 *>(Bt + (long long)rank * span);
    __shared__ __align__(8) unsigned long long xbar_[2];
    __shared__ __align__(8) float2 slots_[2][C];
    if (PUSH) {
        if (threadIdx.x == 0) {
            for (int b = 0; b < 2; ++b)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&xbar_[b])) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        }
        cluster.sync(); // every block's barriers exist before the first push
    }
    int i = 0;
    for (long long row = cid; row < rows; row += nclusters, ++i) {
        const float4 *in = reinterpret_cast<const float4 *>(X + row * (long long)cols + (long long)rank * span);
        float *out = Y + row * (long long)cols + (long long)rank * span;
        float4 x[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it)
            x[it] = LDHINT ? loadNoAllocate(in + it * T + threadIdx.x) : in[it * T + threadIdx.x];
        float M = 0.f, inv = 1.f;
        if (OP == 2) {
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            float n = 4.0f * ITEMS, mu = s * (1.0f / (4 * ITEMS)), m2 = 0.f;
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
            if (lane == 0) {
                red[i & 1][0][warp] = mu;
                red[i & 1][1][warp] = m2;
                red[i & 1][2][warp] = n;
            }
            if (threadIdx.x == 0)
                bulkWaitRead();
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
            if (warp == 0) {
                float qm = 0.f, q2 = 0.f, qn = 0.f;
                if (lane < C) {
                    qm = *cluster.map_shared_rank(&part[i & 1][0], lane);
                    q2 = *cluster.map_shared_rank(&part[i & 1][1], lane);
                    qn = *cluster.map_shared_rank(&part[i & 1][2], lane);
                }
#pragma unroll
                for (int o = C / 2; o > 0; o >>= 1) {
                    const float om = __shfl_xor_sync(0xffffffffu, qm, o), o2 = __shfl_xor_sync(0xffffffffu, q2, o),
                                on = __shfl_xor_sync(0xffffffffu, qn, o);
                    chan(qm, q2, qn, om, o2, on);
                }
                if (lane == 0) {
                    red[i & 1][0][0] = qm;
                    red[i & 1][1][0] = rsqrtf(q2 / (float)cols + 1e-5f);
                }
            }
            __syncthreads();
            M = red[i & 1][0][0];
            inv = red[i & 1][1][0];
        } else if (OP == 1) {
            float m = __int_as_float(0xff800000);
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                m = fmaxf(fmaxf(m, fmaxf(x[it].x, x[it].y)), fmaxf(x[it].z, x[it].w));
            float s = 0.f;
            m *= kLog2e;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                x[it].x = ex2(fmaf(x[it].x, kLog2e, -m));
                x[it].y = ex2(fmaf(x[it].y, kLog2e, -m));
                x[it].z = ex2(fmaf(x[it].z, kLog2e, -m));
                x[it].w = ex2(fmaf(x[it].w, kLog2e, -m));
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            }
            float bm = m, bs = s;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                combineMaxSum(bm, bs, __shfl_xor_sync(0xffffffffu, bm, o), __shfl_xor_sync(0xffffffffu, bs, o));
            if (lane == 0) {
                red[i & 1][0][warp] = bm;
                red[i & 1][1][warp] = bs;
            }
            if (threadIdx.x == 0)
                bulkWaitRead(); // the previous row's copy has read the stage
            __syncthreads();
            if (PUSH) {
                if (warp == 0) {
                    float pm = red[i & 1][0][0], ps = red[i & 1][1][0];
                    for (int w = 1; w < T / 32; ++w)
                        combineMaxSum(pm, ps, red[i & 1][0][w], red[i & 1][1][w]);
                    const unsigned bar = smemAddr(&xbar_[i & 1]);
                    if (lane == 0)
                        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(C * 8)
                                     : "memory");
                    if (lane < C)
                        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(
                                         mapRank(&slots_[i & 1][rank], lane)),
                                     "f"(pm), "f"(ps), "r"(mapRank(&xbar_[i & 1], lane))
                                     : "memory");
                    asm volatile("{\n.reg .pred p;\nWAITX:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
                                 "@!p bra WAITX;\n}\n" ::"r"(bar),
                                 "r"((unsigned)(i >> 1) & 1u)
                                 : "memory");
                }
            } else {
                if (threadIdx.x == 0) {
                    float pm = red[i & 1][0][0], ps = red[i & 1][1][0];
                    for (int w = 1; w < T / 32; ++w)
                        combineMaxSum(pm, ps, red[i & 1][0][w], red[i & 1][1][w]);
                    part[i & 1][0] = pm;
                    part[i & 1][1] = ps;
                }
                cluster.sync();
            }
            if (warp == 0) {
                float qm = __int_as_float(0xff800000), qs = 0.f;
                if (lane < C) {
                    if (PUSH) {
                        const float2 q = slots_[i & 1][lane];
                        qm = q.x;
                        qs = q.y;
                    } else {
                        qm = *cluster.map_shared_rank(&part[i & 1][0], lane);
                        qs = *cluster.map_shared_rank(&part[i & 1][1], lane);
                    }
                }
#pragma unroll
                for (int o = C / 2; o > 0; o >>= 1)
                    combineMaxSum(qm, qs, __shfl_xor_sync(0xffffffffu, qm, o), __shfl_xor_sync(0xffffffffu, qs, o));
                if (lane == 0) {
                    red[i & 1][0][0] = qm;
                    red[i & 1][1][0] = qs;
                }
            }
            __syncthreads();
            M = red[i & 1][0][0];
            inv = ex2(m - M) / red[i & 1][1][0];
        } else {
            if (threadIdx.x == 0)
                bulkWaitRead();
            __syncthreads();
        }
        constexpr int PER_PIECE = ITEMS / PIECES;
#pragma unroll
        for (int p = 0; p < PIECES; ++p) {
#pragma unroll
            for (int it = p * PER_PIECE; it < (p + 1) * PER_PIECE; ++it) {
                if (OP == 2) {
                    const float4 g = g4[it * T + threadIdx.x], b = b4[it * T + threadIdx.x];
                    stage_[it * T + threadIdx.x] =
                        make_float4((x[it].x - M) * inv * g.x + b.x, (x[it].y - M) * inv * g.y + b.y,
                                    (x[it].z - M) * inv * g.z + b.z, (x[it].w - M) * inv * g.w + b.w);
                } else {
                    stage_[it * T + threadIdx.x] = make_float4(x[it].x * inv, x[it].y * inv, x[it].z * inv, x[it].w * inv);
                }
            }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            __syncthreads();
            if (threadIdx.x == 0)
                bulkStore(out + p * PER_PIECE * T * 4, stage_ + p * PER_PIECE * T, PER_PIECE * T * 16u);
        }
    }
    // The stage must outlive the copy engine's reads of it; its writes to global memory complete
    // on their own (as CUTLASS's TMA store epilogues end).
    if (threadIdx.x == 0)
        bulkWaitRead();
    cluster.sync(); // the other blocks' last reads of part
}

// Split rows: RI float4 per thread in registers (loaded and stored by the threads), SI float4 per
// thread in shared memory, loaded by one bulk copy per row (an mbarrier counts its bytes), turned
// into the output in place and written back by one bulk store. NBUF 2: two shared buffers, the next
// row's part is loaded while this row is reduced; NBUF 1: the next row's part is loaded once this
// row's bulk store has read the buffer. Fewer registers per block: four or five blocks per SM.
template <int C, int T, int RI, int SI, int MINB, int NBUF>
__global__ void __launch_bounds__(T, MINB) splitBulk(const float *__restrict__ X, const float *__restrict__ G,
                                                      const float *__restrict__ Bt, float *__restrict__ Y, int rows, int cols)
{
    extern __shared__ __align__(128) float4 inbuf_[]; // [NBUF][SI * T]
    __shared__ __align__(8) unsigned long long bar_[2];
    __shared__ float red[2][2][T / 32];
    __shared__ float part[2][2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C; // (RI + SI) * 4 * T
    const int nclusters = gridDim.x / C;
    const int cid = blockIdx.x / C;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const unsigned bytes = SI * T * 16u;
    const int nrows = cid < rows ? (rows - cid + nclusters - 1) / nclusters : 0;
    auto rowAt = [&](int j) { return (cid + (long long)j * nclusters) * cols + (long long)rank * span; };
    auto issue = [&](int j) {
        const int b = NBUF == 2 ? (j & 1) : 0;
        ringIssue(smemAddr(&bar_[b]), reinterpret_cast<float *>(inbuf_ + b * SI * T), X + rowAt(j) + RI * T * 4, bytes);
    };
    if (threadIdx.x == 0) {
        for (int b = 0; b < NBUF; ++b)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&bar_[b])) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        if (nrows > 0)
            issue(0);
    }
    __syncthreads();
    for (int j = 0; j < nrows; ++j) {
        const float4 *in = reinterpret_cast<const float4 *>(X + rowAt(j));
        float4 *out = reinterpret_cast<float4 *>(Y + rowAt(j));
        const int b = NBUF == 2 ? (j & 1) : 0;
        float4 *buf = inbuf_ + b * SI * T;
        if (NBUF == 2 && threadIdx.x == 0 && j + 1 < nrows) {
            bulkWaitRead(); // row j - 1's bulk store has read the other buffer
            issue(j + 1);
        }
        float4 x[RI];
#pragma unroll
        for (int it = 0; it < RI; ++it)
            x[it] = in[it * T + threadIdx.x];
        ringWait(smemAddr(&bar_[b]), NBUF == 2 ? ((j >> 1) & 1) : (j & 1));
        float m = __int_as_float(0xff800000);
#pragma unroll
        for (int it = 0; it < RI; ++it)
            m = fmaxf(fmaxf(m, fmaxf(x[it].x, x[it].y)), fmaxf(x[it].z, x[it].w));
#pragma unroll 4
        for (int it = 0; it < SI; ++it) {
            const float4 y = buf[it * T + threadIdx.x];
            m = fmaxf(fmaxf(m, fmaxf(y.x, y.y)), fmaxf(y.z, y.w));
        }
        m *= kLog2e;
        float s = 0.f;
#pragma unroll
        for (int it = 0; it < RI; ++it) {
            x[it] = make_float4(ex2(fmaf(x[it].x, kLog2e, -m)), ex2(fmaf(x[it].y, kLog2e, -m)), ex2(fmaf(x[it].z, kLog2e, -m)),
                                ex2(fmaf(x[it].w, kLog2e, -m)));
            s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
        }
#pragma unroll 4
        for (int it = 0; it < SI; ++it) {
            float4 y = buf[it * T + threadIdx.x];
            y = make_float4(ex2(fmaf(y.x, kLog2e, -m)), ex2(fmaf(y.y, kLog2e, -m)), ex2(fmaf(y.z, kLog2e, -m)),
                            ex2(fmaf(y.w, kLog2e, -m)));
            buf[it * T + threadIdx.x] = y;
            s += (y.x + y.y) + (y.z + y.w);
        }
        float bm = m, bs = s;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            combineMaxSum(bm, bs, __shfl_xor_sync(0xffffffffu, bm, o), __shfl_xor_sync(0xffffffffu, bs, o));
        if (lane == 0) {
            red[j & 1][0][warp] = bm;
            red[j & 1][1][warp] = bs;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            float pm = red[j & 1][0][0], ps = red[j & 1][1][0];
            for (int w = 1; w < T / 32; ++w)
                combineMaxSum(pm, ps, red[j & 1][0][w], red[j & 1][1][w]);
            part[j & 1][0] = pm;
            part[j & 1][1] = ps;
        }
        cluster.sync();
        if (warp == 0) {
            float qm = __int_as_float(0xff800000), qs = 0.f;
            if (lane < C) {
                qm = *cluster.map_shared_rank(&part[j & 1][0], lane);
                qs = *cluster.map_shared_rank(&part[j & 1][1], lane);
            }
#pragma unroll
            for (int o = C / 2; o > 0; o >>= 1)
                combineMaxSum(qm, qs, __shfl_xor_sync(0xffffffffu, qm, o), __shfl_xor_sync(0xffffffffu, qs, o));
            if (lane == 0) {
                red[j & 1][0][0] = qm;
                red[j & 1][1][0] = qs;
            }
        }
        __syncthreads();
        const float inv = ex2(m - red[j & 1][0][0]) / red[j & 1][1][0];
#pragma unroll 4
        for (int it = 0; it < SI; ++it) {
            const float4 y = buf[it * T + threadIdx.x];
            buf[it * T + threadIdx.x] = make_float4(y.x * inv, y.y * inv, y.z * inv, y.w * inv);
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            bulkStore(reinterpret_cast<float *>(out) + RI * T * 4, buf, bytes);
            if (NBUF == 1 && j + 1 < nrows) {
                bulkWaitRead();
                issue(j + 1);
            }
        }
#pragma unroll
        for (int it = 0; it < RI; ++it)
            out[it * T + threadIdx.x] = make_float4(x[it].x * inv, x[it].y * inv, x[it].z * inv, x[it].w * inv);
    }
    // The stage must outlive the copy engine's reads of it; its writes to global memory complete
    // on their own (as CUTLASS's TMA store epilogues end).
    if (threadIdx.x == 0)
        bulkWaitRead();
    cluster.sync(); // the other blocks' last reads of part
}

} // namespace l2proto

#include "long_row_ln.cuh"
#ifdef GENERATED_PROGRAM
#include GENERATED_PROGRAM
#endif

static size_t g_dynamicShared = 0; // of the next launches

int main(int argc, char **argv)
{
    bool diag = argc > 1 && std::string(argv[1]) == "diag";
    int rows = 256;
    const int cols = 262144;
    const size_t n = (size_t)rows * cols;
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    g_flushBytes = (size_t)prop.l2CacheSize * 2;
    CK(cudaMalloc(&g_flush, g_flushBytes));
    CK(cudaMemset(g_flush, 1, g_flushBytes));
    std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);

    std::vector<float> hx(n);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 3.f);
    for (auto &v : hx)
        v = nd(rng);
    std::vector<float> hg((size_t)cols), hb((size_t)cols);
    for (int j = 0; j < cols; ++j) {
        hg[j] = 1.0f + 0.01f * (j % 17);
        hb[j] = 0.001f * (j % 13);
    }
    float *X, *Y, *G, *B;
    CK(cudaMalloc(&X, n * 4));
    CK(cudaMalloc(&Y, n * 4));
    CK(cudaMalloc(&G, cols * 4));
    CK(cudaMalloc(&B, cols * 4));
    CK(cudaMemcpy(X, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(G, hg.data(), cols * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb.data(), cols * 4, cudaMemcpyHostToDevice));

    const size_t cb = size_t(1) << 30;
    void *ca, *cbuf;
    CK(cudaMalloc(&ca, cb));
    CK(cudaMalloc(&cbuf, cb));
    CK(cudaMemset(ca, 1, cb));
    auto copyRef = [&] {
        const double ms = timeIt([&] { cudaMemcpyAsync(cbuf, ca, cb, cudaMemcpyDeviceToDevice); }, 10);
        std::printf("copy 1 GiB: %.4f ms, %.0f GB/s\n", ms, 2.0 * cb / ms / 1e6);
    };
    copyRef();

    const double bytes = 2.0 * n * 4;
    const int sampleRows[] = {0, 1, 7, 100, 128, 200, 254, 255};
    auto check = [&](bool layerNorm) {
        std::vector<float> hy((size_t)cols);
        double worst = 0;
        for (int r : sampleRows) {
            CK(cudaMemcpy(hy.data(), Y + (size_t)r * cols, (size_t)cols * 4, cudaMemcpyDeviceToHost));
            const float *x = hx.data() + (size_t)r * cols;
            if (layerNorm) {
                double mu = 0, v = 0;
                for (int j = 0; j < cols; ++j)
                    mu += x[j];
                mu /= cols;
                for (int j = 0; j < cols; ++j)
                    v += (x[j] - mu) * (x[j] - mu);
                v /= cols;
                for (int j = 0; j < cols; ++j) {
                    const double ref = (x[j] - mu) / std::sqrt(v + 1e-5) * hg[j] + hb[j];
                    worst = worse(worst, std::fabs(hy[j] - ref) / std::max(std::fabs(ref), 1e-3));
                }
            } else {
                double m = -1e300, s = 0;
                for (int j = 0; j < cols; ++j)
                    m = std::max(m, (double)x[j]);
                for (int j = 0; j < cols; ++j)
                    s += std::exp((double)x[j] - m);
                for (int j = 0; j < cols; ++j) {
                    const double ref = std::exp((double)x[j] - m) / s;
                    worst = worse(worst, std::fabs(hy[j] - ref) / std::max(ref, 1e-30));
                }
            }
        }
        return worst;
    };
    // Launches kernel over `clusters` clusters of C blocks (0: as many as are resident), times it,
    // checks it.
    auto run = [&](auto kernel, int C, int T, const char *name, bool layerNorm, auto... args) {
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
        cfg.gridDim = dim3(C * 64);
        cfg.dynamicSmemBytes = g_dynamicShared;
        if (g_dynamicShared)
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g_dynamicShared));
        int active = 0;
        CK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
        cudaFuncAttributes fa{};
        CK(cudaFuncGetAttributes(&fa, kernel));
        if (active < 1) {
            std::printf("%-44s not launchable\n", name);
            return;
        }
        for (int clusters : {rows, active, active * 3 / 4, active / 2}) {
            if (clusters < 1)
                continue;
            cfg.gridDim = dim3(C * clusters);
            CK(cudaMemset(Y, 0xff, n * 4));
            const double ms = timeIt([&] { CK(cudaLaunchKernelEx(&cfg, kernel, args...)); });
            if (diag) { // fewer rows than the reference checks; per-row time instead
                std::printf("%-44s x%-3d %.4f ms %5.0f GB/s  %.3f us per row (%d regs, %d res)\n", name, clusters, ms,
                            2.0 * rows * cols * 4 / ms / 1e6, ms * 1e3 / rows, fa.numRegs, active);
                continue;
            }
            const double err = check(layerNorm);
            std::printf("%-44s x%-3d %.4f ms %5.0f GB/s  (%d regs, %d res) err %.1e %s\n", name, clusters, ms,
                        bytes / ms / 1e6, fa.numRegs, active, err, err < 1e-4 ? "ok" : "WRONG");
        }
    };
    const float *cx = X, *cg_ = G, *cbb = B;
    if (argc > 1 && std::string(argv[1]) == "gen") {
        // Generated kernels on a resident grid (bench/tools/generated_variants.sh "... resident on|off"):
        // 21 clusters of 16 x 128, 64 KiB of dynamic shared memory, beside the prototypes.
        run(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg softmax c16 t128 mb3 online fast", false, cx,
            Y, rows, cols);
        g_dynamicShared = 32 * 128 * 16;
        run(l2proto::bulkRow<16, 128, 32, 3, 1, 16, 0>, 16, 128, "bulk softmax c16 t128 mb3 16 pieces", false, cx, cg_, cbb,
            Y, rows, cols);
#ifdef GENERATED_VARIANTS
        auto genRun = [&](auto kernel, const char *name) {
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
            cudaFuncAttributes fa{};
            CK(cudaFuncGetAttributes(&fa, kernel));
            CK(cudaMemset(Y, 0xff, n * 4));
            const double ms = timeIt([&] { kernel<<<21 * 16, 128, 65536>>>(X, Y, rows, cols); });
            const double err = check(false);
            std::printf("%-44s x21  %.4f ms %5.0f GB/s  (%d regs) err %.1e %s\n", name, ms, bytes / ms / 1e6, fa.numRegs,
                        err, err < 1e-4 ? "ok" : "WRONG");
        };
#define STITCH_GEN_RUN(k) genRun(k, #k);
        GENERATED_KERNELS(STITCH_GEN_RUN)
#endif
        copyRef();
        return 0;
    }
#ifdef GENERATED_PROGRAM
    if (argc > 1 && std::string(argv[1]) == "lngen") {
        // The generated program (its host launcher: grid, cluster, shared-memory opt-in) against the
        // prototype it was built from, alternately, twice.
        for (int round = 0; round < 4; ++round) {
            g_flushMode = round % 2; // run 21: the L2 flush by writes (0) or by reads (1)
            std::printf("flush by %s\n", g_flushMode ? "reads" : "writes");
            copyRef();
            g_dynamicShared = 2 * 16384 * 4 + 3 * 8 * 128 * 16;
            run(lnproto::lnGroups<16, 128, 32, 3, 0, 0, 1, 8, 0, 1, 1>, 16, 384, "groups c16 t128 r3 pf8 il1 two1", true, cx,
                cg_, cbb, Y, rows, cols);
            CK(cudaMemset(Y, 0xff, n * 4));
            const double ms = timeIt([&] { CK(layernorm_run(X, G, B, Y, rows, cols, 0)); });
            const double err = check(true);
            std::printf("%-44s      %.4f ms %5.0f GB/s  err %.1e %s\n", "generated layernorm_run", ms, bytes / ms / 1e6, err,
                        err < 1e-4 ? "ok" : "WRONG");
        }
        copyRef();
        return 0;
    }
#endif
    if (argc > 1 && std::string(argv[1]) == "ln") {
        // Layer norm: row groups sharing gamma and beta in shared memory (long_row_ln.cuh).
        g_dynamicShared = 32 * 128 * 16;
        run(l2proto::bulkRow<16, 128, 32, 3, 2, 16, 0>, 16, 128, "bulk layernorm c16 t128 mb3 16 pieces", true, cx, cg_, cbb,
            Y, rows, cols);
        g_dynamicShared = 0;
        run(reg_layernorm<16, 128, 32, 3, true>, 16, 128, "reg layernorm c16 t128 mb3 online", true, cx, cg_, cbb, Y, rows,
            cols);
#define LNG(T, R, GSRC, K, P, PF, ST, IL, TWO) g_dynamicShared = ((GSRC) == 0 ? 2 : (GSRC) == 3 ? 1 : 0) * 16384 * 4 + \
                                                           (R) * ((K) * 2 + (PF)) * (T) * 16; \
        run(lnproto::lnGroups<16, T, 4096 / (T), R, GSRC, K, P, PF, ST, IL, TWO>, 16, (T) * (R), \
            "groups c16 t" #T " r" #R " g" #GSRC " k" #K " push" #P " pf" #PF " st" #ST " il" #IL " two" #TWO, true, cx, cg_, \
            cbb, Y, rows, cols)
        // call 2 measured PUSH 0 (every group of a block in lockstep): 0.196-0.30 ms, slower than the
        // bulk kernel; call 3 decoupled the groups (PUSH 1): 0.1549 ms with gamma and beta in shared
        // memory and plain stores; rings of bulk stores slower (0.165-0.21). Call 4: prefetching 8
        // items per thread through shared memory 0.1526, 16 items 0.1549; streaming stores no
        // better. Call 5: the next row's loads interleaved with the stores: 0.1475 with 8 items
        // prefetched (0.1554 without). Call 6: two exchanges (the generator's layer norm), other
        // prefetch sizes.
        LNG(128, 3, 0, 0, 1, 8, 0, 1, 0);
        LNG(128, 3, 0, 0, 1, 8, 0, 1, 1);
        LNG(128, 3, 0, 0, 1, 4, 0, 1, 0);
        LNG(128, 3, 0, 0, 1, 12, 0, 1, 0);
        LNG(128, 3, 0, 0, 1, 4, 0, 1, 1);
        LNG(256, 2, 0, 0, 1, 8, 0, 1, 0);
        LNG(256, 2, 0, 0, 1, 8, 0, 1, 1);
        LNG(256, 2, 0, 0, 1, 4, 0, 1, 1);
        g_dynamicShared = 32 * 128 * 16;
        run(l2proto::bulkRow<16, 128, 32, 3, 1, 16, 0>, 16, 128, "bulk softmax c16 t128 mb3 16 pieces", false, cx, cg_, cbb,
            Y, rows, cols);
        copyRef();
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "split") {
        run(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg softmax c16 t128 mb3 online fast", false, cx,
            Y, rows, cols);
        g_dynamicShared = 32 * 128 * 16;
        run(l2proto::bulkRow<16, 128, 32, 3, 1, 8, 0>, 16, 128, "bulk softmax c16 t128 mb3 8 pieces", false, cx, cg_, cbb, Y,
            rows, cols);
#define SPLIT(RI, SI, MB, NB) g_dynamicShared = (NB) * (SI) * 128 * 16; \
        run(l2proto::splitBulk<16, 128, RI, SI, MB, NB>, 16, 128, "split c16 t128 " #RI "+" #SI " mb" #MB " nbuf" #NB, false, \
            cx, cg_, cbb, Y, rows, cols)
        SPLIT(24, 8, 4, 2);
        SPLIT(24, 8, 4, 1);
        SPLIT(20, 12, 4, 2);
        SPLIT(16, 16, 4, 1);
        SPLIT(16, 16, 5, 1);
        SPLIT(12, 20, 5, 1);
        SPLIT(8, 24, 6, 1);
        copyRef();
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "bulk") {
        // The output through shared memory and the copy engine.
        run(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg softmax c16 t128 mb3 online fast", false, cx,
            Y, rows, cols);
        g_dynamicShared = 32 * 128 * 16;
#define BULK(OP, P, H, NAME) run(l2proto::bulkRow<16, 128, 32, 3, OP, P, H>, 16, 128, NAME, OP == 2, cx, cg_, cbb, Y, rows, cols)
        BULK(1, 1, 0, "bulk softmax c16 t128 mb3");
        BULK(1, 2, 0, "bulk softmax c16 t128 mb3 2 pieces");
        BULK(1, 4, 0, "bulk softmax c16 t128 mb3 4 pieces");
        BULK(1, 8, 0, "bulk softmax c16 t128 mb3 8 pieces");
        BULK(1, 16, 0, "bulk softmax c16 t128 mb3 16 pieces");
        BULK(1, 4, 1, "bulk softmax c16 t128 mb3 4 pieces no_allocate");
        BULK(1, 8, 1, "bulk softmax c16 t128 mb3 8 pieces no_allocate");
        g_dynamicShared = 0;
        run(reg_layernorm<8, 512, 16, 1, false>, 8, 512, "reg layernorm c8 t512 2rounds", true, cx, cg_, cbb, Y, rows, cols);
        run(reg_layernorm<16, 128, 32, 3, true>, 16, 128, "reg layernorm c16 t128 mb3 online", true, cx, cg_, cbb, Y, rows,
            cols);
        g_dynamicShared = 32 * 128 * 16;
        BULK(2, 1, 0, "bulk layernorm c16 t128 mb3");
        BULK(2, 4, 0, "bulk layernorm c16 t128 mb3 4 pieces");
        BULK(2, 4, 1, "bulk layernorm c16 t128 mb3 4 pieces no_allocate");
        diag = true; // copies: no reference
        BULK(0, 4, 0, "bulk row copy c16 t128 mb3 4 pieces");
        g_dynamicShared = 0;
        run(l2proto::rowCopy<16, 128, 32, 3, false>, 16, 128, "row copy c16 t128 mb3", true, cx, Y, rows, cols);
        copyRef();
        return 0;
    }
    if (diag) {
        // Per-row cost against the number of rows (21 clusters of 16 x 128 are resident: 256 rows
        // are 12.2 waves), and the pattern without the reduction.
        for (int r : {256, 252, 231, 210}) {
            rows = r;
            std::printf("rows %d\n", rows);
            run(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg softmax c16 t128 mb3 online fast", false,
                cx, Y, rows, cols);
            run(l2proto::rowCopy<16, 128, 32, 3, false>, 16, 128, "row copy c16 t128 mb3", true, cx, Y, rows, cols);
            run(l2proto::rowCopy<16, 128, 32, 3, true>, 16, 128, "row copy c16 t128 mb3 cluster.sync", true, cx, Y, rows, cols);
        }
        copyRef();
        return 0;
    }
#define SM(C, T, U, MB, H, P) run(l2proto::softmax2<C, T, 262144 / C / 4 / T, U, MB, H, P>, C, T, \
                                  "l2 softmax c" #C " t" #T " u" #U " mb" #MB " hint" #H " pipe" #P, false, cx, Y, rows, cols)
#define LN(C, T, U, MB, H, P) run(l2proto::layernorm2<C, T, 262144 / C / 4 / T, U, MB, H, P>, C, T, \
                                  "l2 layernorm c" #C " t" #T " u" #U " mb" #MB " hint" #H " pipe" #P, true, cx, cg_, cbb, Y, \
                                  rows, cols)
    run(reg_softmax<16, 128, 32, 3, true, true, false, true>, 16, 128, "reg softmax c16 t128 mb3 online fast", false, cx, Y,
        rows, cols);
    SM(8, 512, 8, 2, 1, false);
    SM(8, 512, 8, 2, 1, true);
    SM(8, 512, 16, 1, 1, true);
    SM(8, 512, 16, 1, 0, true);
    SM(16, 256, 8, 4, 1, true);
    SM(16, 256, 16, 2, 1, true);
    SM(16, 512, 8, 2, 1, true);
    SM(4, 512, 8, 2, 1, true);
    SM(8, 256, 8, 4, 1, true);
    SM(4, 1024, 8, 1, 1, true);
    SM(16, 128, 8, 8, 1, true);
    run(reg_layernorm<8, 512, 16, 1, false>, 8, 512, "reg layernorm c8 t512 2rounds", true, cx, cg_, cbb, Y, rows, cols);
    LN(8, 512, 8, 2, 1, false);
    LN(8, 512, 8, 2, 1, true);
    LN(8, 512, 16, 1, 1, true);
    LN(8, 512, 8, 1, 1, true);
    LN(16, 256, 8, 4, 1, true);
    LN(16, 512, 8, 2, 1, true);
    LN(4, 512, 8, 2, 1, true);
    LN(8, 256, 8, 4, 1, true);
    LN(4, 1024, 8, 1, 1, true);
    copyRef();
    return 0;
}
