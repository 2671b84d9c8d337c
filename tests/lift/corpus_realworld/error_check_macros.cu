// The usual error-checking macro around every runtime call, with a helper that checks the
// last launch, around a row-sum reduction.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(EXIT_FAILURE);                                                          \
        }                                                                                \
    } while (0)

#define ROWS 1024
#define COLS 512

static void checkLastLaunch(const char *name)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "%s failed: %s\n", name, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
}

__global__ void rowSum(const float *m, float *sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c)
            acc += m[r * cols + c];
        sums[r] = acc;
    }
}

int main()
{
    float *m, *sums;
    CUDA_CHECK(cudaMalloc(&m, ROWS * COLS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&sums, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemset(m, 0, ROWS * COLS * sizeof(float)));
    rowSum<<<ROWS / 128, 128>>>(m, sums, ROWS, COLS);
    checkLastLaunch("rowSum");
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(sums));
    return 0;
}
