// Prototype for issue 4's long layer-norm rows (256 x 262144), session 18: row groups that share
// one copy of gamma and beta in shared memory. Included by long_row_l2.cu (mode `ln`).
//
// A block of R x T threads on a cluster of C blocks holds R rows at once, T threads and ITEMS
// float4 per thread for each (the register kernels' 128 floats per thread). On a resident grid a
// block keeps its column span for every row it walks, so its span of gamma and beta (2 x 64 KiB
// for C = 16) is copied into shared memory once and every later row reads it from there instead
// of from L2 (run 12 call 4: gamma and beta from L2 cost 13-20%; run 12 call 7: a copy per
// 128-thread block leaves one block per SM). The R groups meet their cluster at one barrier per
// round; within a group, named barriers (id 1 + group).
//   GSRC 0: gamma and beta in shared memory; 1: both read from global memory at the output;
//        2: none (an upper bound for the timing only: the results are wrong); 3: gamma in shared
//        memory, beta from global memory.
//   K    0: each thread stores its outputs; K > 0: a ring of K pieces of 2 x T float4 per group
//        in shared memory, each handed to the copy engine (cp.async.bulk) as it fills; the
//        issuing thread waits until at most K - 2 of its pieces are still being read before the
//        barrier that lets its group write the next piece.
//   PUSH 0: the groups meet their cluster at one cluster barrier per round (all R groups of a block
//        in lockstep); 1: no cluster barrier per round: warp 0 of each group pushes the block's
//        (mean, M2, n) to the same group of every block of the cluster with st.async, which counts
//        the bytes on that block's mbarrier for the group (two buffers by round parity), and waits
//        on its own; the groups of a block run independently, as separate blocks would.
//   PF   the last PF items of each thread's row come from shared memory: one thread of the group
//        copies the next row's (a contiguous PF x T float4) by cp.async.bulk as soon as every
//        thread of the group has moved this row's into registers, so DRAM keeps working while the
//        group reduces, meets its cluster and stores.
//   ST   1: streaming stores (st.global.cs).
//   IL   1: the next row's loads go out in the output loop, each into the registers of the item
//        just stored, so loads and stores of a group stream together instead of in phases.
namespace lnproto {
using l2proto::bulkStore;
using l2proto::bulkWaitRead;

__device__ __forceinline__ void groupSync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

template <int N> __device__ __forceinline__ void bulkWaitReadAtMost()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ bool tryWaitCluster(unsigned bar, unsigned parity)
{
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok != 0;
}

template <int C, int T, int ITEMS, int R, int GSRC, int K, int PUSH = 0, int PF = 0, int ST = 0, int IL = 0, int TWO = 0>
__global__ void __launch_bounds__(T *R, 1) lnGroups(const float *__restrict__ X, const float *__restrict__ G,
                                                     const float *__restrict__ Bt, float *__restrict__ Y, int rows, int cols)
{
    static_assert(ITEMS % 2 == 0, "pieces of two items");
    constexpr int SPAN4 = T * ITEMS; // float4 of a row per block
    constexpr int KS = K > 0 ? K : 1;
    constexpr int GS = (GSRC == 0 || GSRC == 3) ? 1 : 0, BS = GSRC == 0 ? 1 : 0;
    extern __shared__ __align__(128) float4 dyn_[];
    float4 *gs = dyn_;
    float4 *bs = dyn_ + GS * SPAN4;
    float4 *ring = dyn_ + (GS + BS) * SPAN4; // [R][K][2 * T]
    float4 *pfAll = ring + (K > 0 ? R * K * 2 * T : 0); // [R][PF * T]
    __shared__ __align__(8) unsigned long long pfbar_[R];
    __shared__ float red[R][3][T / 32];
    __shared__ float part[2][R][3];
    __shared__ float stat[R][2];
    __shared__ __align__(16) float4 slots_[R][2][C];
    __shared__ __align__(8) unsigned long long xbar_[R][2];
    __shared__ float sl2_[2][R][2][C];
    __shared__ __align__(8) unsigned long long xb2_[2][R][2];
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank();
    const int span = cols / C;
    const int grp = threadIdx.x / T, t = threadIdx.x % T;
    const int warp = t >> 5, lane = t & 31;
    const float4 *g4 = reinterpret_cast<const float4 *>(G + (long long)rank * span);
    const float4 *b4 = reinterpret_cast<const float4 *>(Bt + (long long)rank * span);
    if (GS) {
        for (int k = threadIdx.x; k < SPAN4; k += T * R) {
            gs[k] = g4[k];
            if (BS)
                bs[k] = b4[k];
        }
        __syncthreads();
    }
    if (PUSH) {
        if (threadIdx.x == 0) {
            for (int q = 0; q < R; ++q)
                for (int b = 0; b < 2; ++b)
                    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&xbar_[q][b])) : "memory");
            for (int q = 0; q < 2 * R * 2; ++q)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&xb2_[0][0][0] + q)) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        }
        cluster.sync(); // every block's barriers exist before the first push
    }
    float4 *pf = pfAll + grp * PF * T;
    const unsigned pfBar = smemAddr(&pfbar_[grp]);
    auto prefetch = [&](long long r) { // one thread of the group
        const float4 *src = reinterpret_cast<const float4 *>(X + r * (long long)cols + (long long)rank * span) +
                            (ITEMS - PF) * T;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(pfBar), "r"(PF * T * 16) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         smemAddr(pf)),
                     "l"(src), "r"(PF * T * 16), "r"(pfBar)
                     : "memory");
    };
    const int nclusters = gridDim.x / C, cid = blockIdx.x / C;
    const int sets = (rows + R - 1) / R;
    const int rounds = cid < sets ? (sets - cid + nclusters - 1) / nclusters : 0;
    if (PF > 0) {
        if (threadIdx.x == 0) {
            for (int q = 0; q < R; ++q)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smemAddr(&pfbar_[q])) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        }
        __syncthreads();
        const long long first = (long long)cid * R + grp;
        if (t == 0 && rounds > 0 && first < rows)
            prefetch(first);
    }
    float4 *slots = ring + grp * K * 2 * T;
    unsigned piece = 0;
    float4 x[ITEMS];
    for (int k = 0; k < rounds; ++k) {
        const long long row = (long long)(cid + k * nclusters) * R + grp;
        const bool active = row < rows;
        const float4 *in = reinterpret_cast<const float4 *>(X + row * (long long)cols + (long long)rank * span);
        float *out = Y + row * (long long)cols + (long long)rank * span;
        const long long next = row + (long long)nclusters * R;
        const float4 *nextIn = reinterpret_cast<const float4 *>(X + next * (long long)cols + (long long)rank * span);
        float mu = 0.f, m2 = 0.f, n = 0.f;
        if (active) {
            if (!IL || k == 0) {
#pragma unroll
                for (int it = 0; it < ITEMS - PF; ++it)
                    x[it] = in[it * T + t];
            }
            if (PF > 0) {
                while (!tryWaitCluster(pfBar, (unsigned)k & 1u)) {
                }
#pragma unroll
                for (int it = ITEMS - PF; it < ITEMS; ++it)
                    x[it] = pf[(it - (ITEMS - PF)) * T + t];
            }
            if (TWO)
                n = 1.f; // the stats follow below
        }
        float M = 0.f, inv = 1.f;
        if (TWO) {
            if (!active)
                break;
            // warp 0: the block's value to every block of the cluster, the cluster's sum back.
            auto pushSum = [&](int which, float pv) {
                const unsigned bar = smemAddr(&xb2_[which][grp][k & 1]);
                if (lane == 0)
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(C * 4)
                                 : "memory");
                __syncwarp();
                if (lane < C)
                    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\n" ::"r"(
                                     l2proto::mapRank(&sl2_[which][grp][k & 1][rank], lane)),
                                 "f"(pv), "r"(l2proto::mapRank(&xb2_[which][grp][k & 1], lane))
                                 : "memory");
                while (!tryWaitCluster(bar, (unsigned)(k >> 1) & 1u)) {
                }
                float q = lane < C ? sl2_[which][grp][k & 1][lane] : 0.f;
#pragma unroll
                for (int o = C / 2; o > 0; o >>= 1)
                    q += __shfl_xor_sync(0xffffffffu, q, o);
                return q;
            };
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                s += __shfl_xor_sync(0xffffffffu, s, o);
            if (lane == 0)
                red[grp][0][warp] = s;
            groupSync(1 + grp, T);
            if (PF > 0 && t == 0 && next < rows)
                prefetch(next); // every thread of the group has read pf
            if (warp == 0) {
                float b = red[grp][0][0];
                for (int w = 1; w < T / 32; ++w)
                    b += red[grp][0][w];
                const float tot = pushSum(0, b);
                if (lane == 0)
                    stat[grp][0] = tot / (float)cols;
            }
            groupSync(1 + grp, T);
            M = stat[grp][0];
            float q2 = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                const float a = x[it].x - M, b = x[it].y - M, c = x[it].z - M, d = x[it].w - M;
                q2 += (a * a + b * b) + (c * c + d * d);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                q2 += __shfl_xor_sync(0xffffffffu, q2, o);
            if (lane == 0)
                red[grp][1][warp] = q2;
            groupSync(1 + grp, T);
            if (warp == 0) {
                float b = red[grp][1][0];
                for (int w = 1; w < T / 32; ++w)
                    b += red[grp][1][w];
                const float tot = pushSum(1, b);
                if (lane == 0)
                    stat[grp][1] = rsqrtf(tot / (float)cols + 1e-5f);
            }
            groupSync(1 + grp, T);
            inv = stat[grp][1];
        } else {
        if (active) {
            float s = 0.f;
#pragma unroll
            for (int it = 0; it < ITEMS; ++it)
                s += (x[it].x + x[it].y) + (x[it].z + x[it].w);
            n = 4.0f * ITEMS;
            mu = s * (1.0f / (4 * ITEMS));
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
        }
        if (PUSH && !active)
            break; // the last round only, and alike in every block of the cluster
        if (lane == 0) {
            red[grp][0][warp] = mu;
            red[grp][1][warp] = m2;
            red[grp][2][warp] = n;
        }
        groupSync(1 + grp, T);
        if (PF > 0 && t == 0 && next < rows)
            prefetch(next); // every thread of the group has read pf
        float qm = 0.f, q2 = 0.f, qn = 0.f;
        if (PUSH) {
            if (warp == 0) {
                float pm = red[grp][0][0], p2 = red[grp][1][0], pn = red[grp][2][0];
                for (int w = 1; w < T / 32; ++w)
                    chan(pm, p2, pn, red[grp][0][w], red[grp][1][w], red[grp][2][w]);
                const unsigned bar = smemAddr(&xbar_[grp][k & 1]);
                if (lane == 0)
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(C * 16)
                                 : "memory");
                __syncwarp();
                if (lane < C)
                    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                                     l2proto::mapRank(&slots_[grp][k & 1][rank], lane)),
                                 "f"(pm), "f"(p2), "f"(pn), "f"(0.f), "r"(l2proto::mapRank(&xbar_[grp][k & 1], lane))
                                 : "memory");
                while (!tryWaitCluster(bar, (unsigned)(k >> 1) & 1u)) {
                }
                if (lane < C) {
                    const float4 q = slots_[grp][k & 1][lane];
                    qm = q.x;
                    q2 = q.y;
                    qn = q.z;
                }
            }
        } else {
            if (t == 0) {
                float pm = red[grp][0][0], p2 = red[grp][1][0], pn = red[grp][2][0];
                for (int w = 1; w < T / 32; ++w)
                    chan(pm, p2, pn, red[grp][0][w], red[grp][1][w], red[grp][2][w]);
                part[k & 1][grp][0] = pm;
                part[k & 1][grp][1] = p2;
                part[k & 1][grp][2] = pn;
            }
            cluster.sync();
            if (warp == 0 && lane < C) {
                qm = *cluster.map_shared_rank(&part[k & 1][grp][0], lane);
                q2 = *cluster.map_shared_rank(&part[k & 1][grp][1], lane);
                qn = *cluster.map_shared_rank(&part[k & 1][grp][2], lane);
            }
        }
        if (warp == 0) {
#pragma unroll
            for (int o = C / 2; o > 0; o >>= 1) {
                const float om = __shfl_xor_sync(0xffffffffu, qm, o), o2 = __shfl_xor_sync(0xffffffffu, q2, o),
                            on = __shfl_xor_sync(0xffffffffu, qn, o);
                if (qn == 0.f) { // a row no group holds: every part is empty
                    qm = om;
                    q2 = o2;
                    qn = on;
                } else if (on > 0.f) {
                    chan(qm, q2, qn, om, o2, on);
                }
            }
            if (lane == 0) {
                stat[grp][0] = qm;
                stat[grp][1] = rsqrtf(q2 / (float)cols + 1e-5f);
            }
        }
        groupSync(1 + grp, T);
        M = stat[grp][0];
        inv = stat[grp][1];
        }
        if (!active)
            continue;
#pragma unroll
        for (int p = 0; p < ITEMS / 2; ++p) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int it = 2 * p + h;
                float4 g = make_float4(1.f, 1.f, 1.f, 1.f), b = make_float4(0.f, 0.f, 0.f, 0.f);
                if (GSRC == 0 || GSRC == 3)
                    g = gs[it * T + t];
                else if (GSRC == 1)
                    g = g4[it * T + t];
                if (GSRC == 0)
                    b = bs[it * T + t];
                else if (GSRC == 1 || GSRC == 3)
                    b = b4[it * T + t];
                const float4 y = make_float4((x[it].x - M) * inv * g.x + b.x, (x[it].y - M) * inv * g.y + b.y,
                                             (x[it].z - M) * inv * g.z + b.z, (x[it].w - M) * inv * g.w + b.w);
                if (K == 0 && ST)
                    __stcs(reinterpret_cast<float4 *>(out) + it * T + t, y);
                else if (K == 0)
                    reinterpret_cast<float4 *>(out)[it * T + t] = y;
                else
                    slots[(piece % KS) * 2 * T + h * T + t] = y;
                if (IL && it < ITEMS - PF && next < rows)
                    x[it] = nextIn[it * T + t];
            }
            if (K > 0) {
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                if (t == 0)
                    bulkWaitReadAtMost<(K > 1 ? K - 2 : 0)>();
                groupSync(1 + grp, T);
                if (t == 0)
                    bulkStore(out + p * 2 * T * 4, slots + (piece % KS) * 2 * T, 2 * T * 16u);
                ++piece;
            }
        }
    }
    if (K > 0 && t == 0)
        bulkWaitRead();
    cluster.sync(); // the other blocks' last reads of part
}

} // namespace lnproto
