# python3 mk.py variants/ss.cu [swizzle]: reads variants/rs.cu (the generated kernel), writes the SS twin.
# rs.cu is not kept (issue 34): git show 1c86eca:bench/results/2026-12-01/run17-wgmma-ss/variants/rs.cu restores it.
# Builds the SS-mode prototype of the TF32 wgmma GEMM (both operands by descriptor, B transposed on its copy).
import re, sys
src = open(sys.argv[1].rsplit('/', 1)[0] + '/rs.cu' if '/' in sys.argv[1] else 'rs.cu').read()
head, rest = src.split('extern "C" __global__', 1)
acc = []
for i in range(128):
    half = (i >> 1) & 1; col = (i >> 2) * 2 + (i & 1)
    acc.append('"+f"(acc_[%d][%d])' % (col, half))
regs = ", ".join("%%%d" % i for i in range(128))
def wg(s):
    return ('asm volatile("{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%s}, %%128, %%129, p, 1, 1;\\n}\\n"\n'
            '    : %s\n    : "l"(bdesc%d_), "l"(adesc%d_) : "memory");' % (regs, ", ".join(acc), s, s))
def copyB(stage, kt):
    return f'''
        #pragma unroll
        for (int l_ = 0; l_ < 16; ++l_) {{
            const int v_ = threadIdx.x + l_ * 256;
            const int o_ = ((v_ >> 5) & 15) * 8 + (v_ & 7), kk_ = (v_ >> 9) * 4 + ((v_ >> 3) & 3);
            const int go_ = n0_ + o_, gk_ = k0_ + kk_;
            const bool in_ = go_ < N_ && gk_ < kEnd_;
            const float *src_ = B + (in_ ? (long long)gk_ * ldb_ + go_ : 0);
            const unsigned dst_ = (unsigned)__cvta_generic_to_shared(&Bs_[s_ * 4096 + o_ * 32 + ((((kk_ >> 2) ^ (o_ & 7)) << 2) | (kk_ & 3))]);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\\n" :: "r"(dst_), "l"(src_), "r"(in_ ? 4 : 0));
        }}'''
def copyA():
    return '''
        #pragma unroll
        for (int l_ = 0; l_ < 8; ++l_) {
            const int v_ = threadIdx.x + l_ * 256;
            const int o_ = v_ / 8, kk_ = (v_ % 8) * 4;
            const int go_ = m0_ + o_, gk_ = k0_ + kk_;
            const bool in_ = go_ < M_ && gk_ < kEnd_;
            const float *src_ = A + (in_ ? (long long)go_ * lda_ + gk_ : 0);
            const unsigned dst_ = (unsigned)__cvta_generic_to_shared(&As_[s_ * 8192 + (o_) * 32 + (((((kk_) >> 2) ^ (((o_) >> 0) & 7)) << 2) | ((kk_) & 3))]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n" :: "r"(dst_), "l"(src_), "r"(in_ ? 16 : 0));
        }'''
FAST = len(sys.argv) > 3 and sys.argv[3] == "fast"
def fastCopies():
    return '''
        if (fullMN_ && k0_ + 32 <= kEnd_) {
            const float *as_ = aSrc_ + (long long)kt0_ * 32;
            const unsigned ad_ = aDst_ + s_ * 32768;
            #pragma unroll
            for (int l_ = 0; l_ < 8; ++l_)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(ad_ + l_ * 4096), "l"(as_ + l_ * aStep_));
            const float *bs_ = bSrc_ + (long long)kt0_ * bTile_;
            const unsigned bd_ = bDst_ + s_ * 16384;
            #pragma unroll
            for (int l_ = 0; l_ < 16; ++l_)
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\\n" :: "r"(bd_ + (l_ & 1) * 8192 + (((l_ >> 1) ^ bF_) << 4)), "l"(bs_ + (l_ >> 1) * bK4_ + (l_ & 1) * 64));
        } else {'''
def copyTile(kt, stage):
    if FAST:
        return f'''    {{
        const int kt0_ = {kt}, s_ = {stage};
        const int k0_ = kBegin_ + kt0_ * 32;{fastCopies()}{copyA()}{copyB(stage, kt)}
        }}
    }}'''
    return f'''    {{
        const int kt0_ = {kt}, s_ = {stage};
        const int k0_ = kBegin_ + kt0_ * 32;{copyA()}{copyB(stage, kt)}
    }}
    asm volatile("cp.async.commit_group;\\n" ::: "memory");
'''
body = '''extern "C" __global__ void __launch_bounds__(256, 1) C(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int K, int N)
{
    #if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();
    #else
    extern __shared__ float4 smem4_[];
    float *As_ = reinterpret_cast<float *>(smem4_) + ((1024 - ((unsigned)__cvta_generic_to_shared(smem4_) & 1023)) & 1023) / 4; // [4][256][32] swizzled
    float *Bs_ = As_ + 32768; // [4][128][32] swizzled (B transposed)
    const int M_ = M, N_ = N, K_ = K;
    const long long lda_ = K, ldb_ = N;
    const int gridM_ = (M_ + 255) / 256, gridN_ = (N_ + 127) / 128;
    const int tile_ = (int)blockIdx.x;
    const int kBegin_ = 0, kEnd_ = K_;
    const int firstM_ = (tile_ / (SWZ * gridN_)) * SWZ;
    const int groupRows_ = min(gridM_ - firstM_, SWZ);
    const int inGroup_ = tile_ % (SWZ * gridN_);
    const int m0_ = (firstM_ + inGroup_ % groupRows_) * 256;
    const int n0_ = (inGroup_ / groupRows_) * 128;
    const int wg_ = threadIdx.x / 128, warp_ = (threadIdx.x / 32) % 4, g_ = (threadIdx.x % 32) / 4, t_ = threadIdx.x % 4;
    const unsigned long long adescBase_ = (unsigned long long)((((unsigned)__cvta_generic_to_shared(As_)) & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)64 << 32) | ((unsigned long long)1 << 62);
    const unsigned long long bdescBase_ = (unsigned long long)((((unsigned)__cvta_generic_to_shared(Bs_ + wg_ * 64 * 32)) & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)64 << 32) | ((unsigned long long)1 << 62);
    float acc_[64][2];
    #pragma unroll
    for (int i_ = 0; i_ < 64; ++i_)
        #pragma unroll
        for (int j_ = 0; j_ < 2; ++j_)
            acc_[i_][j_] = 0.0f;
    const int kTiles_ = kEnd_ > kBegin_ ? (kEnd_ - kBegin_ + 31) / 32 : 0;
'''
if FAST:
    body += '''    const bool fullMN_ = m0_ + 256 <= M_ && n0_ + 128 <= N_;
    const int aRow_ = threadIdx.x / 8, aCol_ = (threadIdx.x % 8) * 4;
    const float *aSrc_ = A + (long long)(m0_ + aRow_) * lda_ + kBegin_ + aCol_;
    const long long aStep_ = 32LL * lda_;
    const unsigned aDst_ = (unsigned)__cvta_generic_to_shared(&As_[(aRow_) * 32 + (((((aCol_) >> 2) ^ (((aRow_) >> 0) & 7)) << 2) | ((aCol_) & 3))]);
    // B transposed: lane = 8 columns (n) x 4 k rows; warp w's copies cover 8-column group w (+ 8 per odd copy), 4 k rows per copy pair.
    const int bOL_ = threadIdx.x & 7, bKL_ = (threadIdx.x >> 3) & 3, bW_ = threadIdx.x >> 5, bF_ = bOL_;
    const float *bSrc_ = B + (long long)(kBegin_ + bKL_) * ldb_ + n0_ + bW_ * 8 + bOL_;
    const long long bK4_ = 4LL * ldb_, bTile_ = 32LL * ldb_;
    const unsigned bDst_ = (unsigned)__cvta_generic_to_shared(&Bs_[(bW_ * 8 + bOL_) * 32 + bKL_]);
'''
for s in range(3):
    body += f"    if ({s} < kTiles_)\n" + copyTile(str(s), str(s)).replace('asm volatile("cp.async.commit_group', 'PLACEHOLDER', 1) .replace('PLACEHOLDER', 'asm volatile("cp.async.commit_group')
body += '''    asm volatile("cp.async.wait_group 2;\\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
    __syncthreads();
    int read_ = 0, write_ = 3;
    for (int kt_ = 0; kt_ < kTiles_; ++kt_) {
        {
            const unsigned long long ad_ = adescBase_ + (unsigned long long)(read_ * 2048);
            const unsigned long long bd_ = bdescBase_ + (unsigned long long)(read_ * 1024);
'''
for s in range(4):
    body += f"            const unsigned long long adesc{s}_ = ad_ + {2*s}ULL, bdesc{s}_ = bd_ + {2*s}ULL;\n"
body += '            asm volatile("wgmma.fence.sync.aligned;\\n" :: "l"(adesc0_), "l"(bdesc0_), "l"(adesc1_), "l"(bdesc1_), "l"(adesc2_), "l"(bdesc2_), "l"(adesc3_), "l"(bdesc3_) : "memory");\n'
for s in range(4):
    body += "            " + wg(s).replace("\n", "\n            ") + "\n"
body += '''            asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 1;\\n" ::: "memory");
        if (kt_ + 1 < kTiles_) {
            asm volatile("cp.async.wait_group 1;\\n" ::: "memory");
            asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
            __syncthreads();
        }
        if (kt_ + 3 < kTiles_)
''' + copyTile("kt_ + 3", "write_").replace("\n    ", "\n        ") + '''        read_ = read_ + 1 == 4 ? 0 : read_ + 1;
        write_ = write_ + 1 == 4 ? 0 : write_ + 1;
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
'''
epi = rest[rest.index('    // Epilogue:'):]
out = head + body + epi
swz = sys.argv[2] if len(sys.argv) > 2 else "4"
out = out.replace("SWZ", swz)
open(sys.argv[1], 'w').write(out)
