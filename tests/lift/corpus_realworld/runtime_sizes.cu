// Sizes only known when the program runs, as command-line tools take them: a count from argv, a
// configuration struct filled by a parser, a grid built member by member from an array of extents,
// and a launch inside a host helper that receives the size as a parameter.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

struct Options {
    int rows;
    int cols;
    int threads;
};

static Options parseOptions(int argc, char **argv)
{
    Options o{1024, 1024, 256};
    if (argc > 2) {
        o.rows = atoi(argv[1]);
        o.cols = atoi(argv[2]);
    }
    return o;
}

__global__ void addOne(const float *a, float *b, int rows, int cols)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols)
        b[r * cols + c] = a[r * cols + c] + 1.0f;
}

__global__ void scaleVec(const float *in, float *out, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * s;
}

static void launchScale(const float *in, float *out, int n, int threads)
{
    scaleVec<<<(n + threads - 1) / threads, threads>>>(in, out, 0.5f, n);
}

int main(int argc, char **argv)
{
    Options opt = parseOptions(argc, argv);
    int n = argc > 3 ? atoi(argv[3]) : 1 << 20;
    float *a, *b, *v, *w;
    cudaMalloc(&a, opt.rows * opt.cols * sizeof(float));
    cudaMalloc(&b, opt.rows * opt.cols * sizeof(float));
    cudaMalloc(&v, n * sizeof(float));
    cudaMalloc(&w, n * sizeof(float));
    cudaMemset(a, 0, opt.rows * opt.cols * sizeof(float));
    cudaMemset(v, 0, n * sizeof(float));

    dim3 block(16, 16);
    dim3 grid;
    int extent[2] = {opt.cols, opt.rows};
    grid.x = (extent[0] + block.x - 1) / block.x;
    grid.y = (extent[1] + block.y - 1) / block.y;
    addOne<<<grid, block>>>(a, b, opt.rows, opt.cols);
    launchScale(v, w, n, opt.threads);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(a);
    cudaFree(b);
    cudaFree(v);
    cudaFree(w);
    return 0;
}
