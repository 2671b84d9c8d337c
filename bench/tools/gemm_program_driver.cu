// Times one generated GEMM program (`stitchcuda generate examples/matmul.te --size M=..`) by its own host
// launcher, for Nsight Compute and side-by-side timing outside the bench (issue 5's mis-ranked pairs).
// The same source is also compiled at run time by NVRTC with the options `stitchcuda bench` uses
// (core/codegen/Program.cpp compileGenerated), its CUBIN loaded by the driver API and launched with the
// launcher's grid, block and shared memory: nvcc's build and the bench's build, alternately.
//   nvcc -O3 -std=c++17 -arch=sm_90 -DPROGRAM='"dir/matmul.cu"' -o drv bench/tools/gemm_program_driver.cu \
//       -lnvrtc -lcuda
//   With -DGEMM_BIAS_GELU, a GEMM + bias + GELU program (`stitchcuda generate examples/gemm_bias_gelu.te`):
//   its kernel G_Y and launcher gemm_bias_gelu_run, with a bias vector, checked against erf GELU.
//   ./drv SOURCE [runs [GRID BLOCK]]   (SOURCE: the program's path from the working directory; runs = 2
//                             for ncu: launches 3 and 4 are nvcc's and NVRTC's timed runs; GRID and
//                             BLOCK: the launcher's, for other tiles than 128 x 128 of 256 threads)
#include PROGRAM

#ifdef GEMM_BIAS_GELU
#define KERNEL_NAME "G_Y"
#define KERNEL_SYMBOL G_Y
#else
#define KERNEL_NAME "C"
#define KERNEL_SYMBOL C
#endif

#include <cuda.h>
#include <nvrtc.h>

#include <fstream>
#include <sstream>
#include <string>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));    \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

#define CU(x)                                                                                   \
    do {                                                                                        \
        CUresult r_ = (x);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                               \
            const char *s_ = "";                                                                \
            cuGetErrorString(r_, &s_);                                                          \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, s_);                        \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

static std::string readFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().empty()) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(1);
    }
    return ss.str();
}

/// The kernel `C` of the program source `src` built by NVRTC as the bench builds it.
static CUfunction nvrtcKernel(const std::string &src)
{
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, src.c_str(), "matmul.cu", 0, nullptr, nullptr);
    const char *opts[] = {"--gpu-architecture=sm_90", "--std=c++17", "--ptxas-options=-v", "-I/usr/local/cuda/include"};
    const nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
    size_t logSize = 0;
    nvrtcGetProgramLogSize(prog, &logSize);
    std::string log(logSize, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::istringstream ls(log);
    for (std::string line; std::getline(ls, line);)
        if (line.find("registers") != std::string::npos || line.find("spill") != std::string::npos)
            std::printf("NVRTC: %s\n", line.c_str());
    if (r != NVRTC_SUCCESS) {
        std::fprintf(stderr, "NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log.c_str());
        std::exit(1);
    }
    size_t size = 0;
    nvrtcGetCUBINSize(prog, &size);
    std::string cubin(size, '\0');
    nvrtcGetCUBIN(prog, cubin.data());
    CUmodule module;
    CU(cuModuleLoadData(&module, cubin.data()));
    CUfunction f;
    CU(cuModuleGetFunction(&f, module, KERNEL_NAME));
    return f;
}

int main(int argc, char **argv)
{
#ifndef GEMM_M // the problem's sizes: -DGEMM_M=1000 -DGEMM_N=3000 -DGEMM_K=700 (default 4096^3)
#define GEMM_M 4096
#define GEMM_N 4096
#define GEMM_K 4096
#endif
    const int M = GEMM_M, N = GEMM_N, K = GEMM_K;
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SOURCE [runs]\n", argv[0]);
        return 2;
    }
    const std::string source = argv[1];
    const int runs = argc > 2 ? std::atoi(argv[2]) : 30;
    std::vector<float> ha((size_t)M * K), hb((size_t)K * N);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (auto &v : ha)
        v = u(rng);
    for (auto &v : hb)
        v = u(rng);
    std::vector<float> hbias(N);
    for (auto &v : hbias)
        v = u(rng);
    float *A, *B, *C, *bias;
    CK(cudaMalloc(&bias, hbias.size() * 4));
    CK(cudaMemcpy(bias, hbias.data(), hbias.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&A, ha.size() * 4));
    CK(cudaMalloc(&B, hb.size() * 4));
    CK(cudaMalloc(&C, (size_t)M * N * 4));
    CK(cudaMemcpy(A, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
#ifdef GEMM_BIAS_GELU
    auto runNvcc = [&] { return gemm_bias_gelu_run(A, B, bias, C, M, K, N, 0); };
    // The fused ops on the double-precision dot product: Y = GELU(AB + bias), erf GELU.
    auto epilogue = [&](double g, int j) {
        const double h = g + hbias[j];
        return 0.5 * h * (1 + std::erf(h * 0.7071067811865476));
    };
#else
    auto runNvcc = [&] { return matmul_run(A, B, C, M, K, N, 0); };
    auto epilogue = [](double g, int) { return g; };
#endif
    CK(runNvcc());
    CK(cudaDeviceSynchronize());
    // A few sampled elements against a double-precision dot product.
    std::vector<float> hc((size_t)M * N);
    CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
        const int i = (int)(rng() % M), j = (int)(rng() % N);
        double ref = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
            ref += (double)ha[(size_t)i * K + k] * hb[(size_t)k * N + j];
            mag += std::abs((double)ha[(size_t)i * K + k] * hb[(size_t)k * N + j]);
        }
        worst = std::max(worst, std::abs(hc[(size_t)i * N + j] - epilogue(ref, j)) / (mag + 1e-30));
    }
    // The launcher's configuration, for the NVRTC build: its grid (stream-K: 264 blocks per wave of
    // shared tiles, one per whole tile), 256 threads, the dynamic shared memory it opted into, and for
    // stream-K the partial sums and the tile flags (zero; the kernel leaves them zero).
    // (GRID and BLOCK as the launcher computes them, from the command line: run 21 call 9 evaluates
    // the launcher's expressions; without them, 128 x 128 tiles of 256 threads.)
    const std::string program = readFile(source);
    const bool streamK = program.find("C_partials") != std::string::npos;
    const long long tiles = (long long)((M + 127) / 128) * ((N + 127) / 128);
    unsigned grid = streamK ? (unsigned)(264 * std::max(1LL, (tiles + 132) / 264)) : (unsigned)tiles;
    unsigned block = 256;
    if (argc > 4) {
        grid = (unsigned)std::atoi(argv[3]);
        block = (unsigned)std::atoi(argv[4]);
    }
    cudaFuncAttributes attr{};
    CK(cudaFuncGetAttributes(&attr, ::KERNEL_SYMBOL));
    const unsigned smem = (unsigned)attr.maxDynamicSharedSizeBytes;
    CUfunction f = nvrtcKernel(program);
    CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
    float *partials = nullptr;
    int *flags = nullptr;
    // (The launcher sizes them by twice the larger of the tiles and the grid: with more stream-K
    // blocks than tiles, 1000x3000x700 at two blocks per SM, each block has its slot.)
    const size_t slots = 2 * (size_t)std::max<long long>(tiles, grid);
    CK(cudaMalloc(&partials, slots * 128 * 128 * 4));
    CK(cudaMalloc(&flags, slots * 4));
    CK(cudaMemset(flags, 0, slots * 4));
    int m = M, n = N, k = K;
#ifdef GEMM_BIAS_GELU
    void *args[] = {&A, &B, &bias, &C, &m, &k, &n, &partials, &flags};
#else
    void *args[] = {&A, &B, &C, &m, &k, &n, &partials, &flags};
#endif
    auto launchNvrtc = [&] { CU(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, nullptr, args, nullptr)); };
    CK(cudaMemset(C, 0xff, (size_t)M * N * 4));
    launchNvrtc();
    CK(cudaDeviceSynchronize());
    std::vector<float> hn((size_t)M * N);
    CK(cudaMemcpy(hn.data(), C, hn.size() * 4, cudaMemcpyDeviceToHost));
    double worstN = 0;
    for (size_t i = 0; i < hn.size(); i += 4093)
        worstN = std::max(worstN, std::isnan(hn[i]) ? 1.0 : (double)std::abs(hn[i] - hc[i]) / (std::abs(hc[i]) + 1.0));

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> msNvcc, msNvrtc;
    auto timeOne = [&](auto &&launch, std::vector<float> &out) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        out.push_back(t);
    };
    for (int r = 0; r < runs; ++r) {
        timeOne([&] { CK(runNvcc()); }, msNvcc);
        timeOne(launchNvrtc, msNvrtc);
    }
    for (auto *v : {&msNvcc, &msNvrtc}) {
        std::sort(v->begin(), v->end());
        std::printf("%-6s %s %dx%dx%d: median %.4f ms (min %.4f, max %.4f, %d runs), %.1f TFLOP/s, rel err %.1e %s\n",
                    v == &msNvcc ? "nvcc" : "NVRTC", source.c_str(), M, N, K, (*v)[v->size() / 2], v->front(), v->back(),
                    runs, 2.0 * M * N * K / (*v)[v->size() / 2] / 1e9, v == &msNvcc ? worst : worstN,
                    (v == &msNvcc ? worst < 1e-5 : worstN < 1e-4) ? "ok" : "WRONG");
    }
    return 0;
}
