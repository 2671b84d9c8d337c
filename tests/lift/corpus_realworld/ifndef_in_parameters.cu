// A kernel whose parameter list changes with a macro (`#ifndef` inside the parameter list), as in
// code that builds with and without a bias term; a second kernel without it.
#include <cuda_runtime.h>

#define ROWS 512
#define COLS 256
#define HIDDEN 4096

__global__ void addBias(float *out, const float *in,
#ifndef NO_BIAS
                        const float *bias,
#endif
                        int rows, int cols)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
#ifndef NO_BIAS
        out[r * cols + c] = in[r * cols + c] + bias[c];
#else
        out[r * cols + c] = in[r * cols + c];
#endif
    }
}

__global__ void relu(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = fmaxf(in[i], 0.0f);
}

int main()
{
    const int n = ROWS * COLS;
    float *in, *out, *bias, *hidden, *act;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&bias, COLS * sizeof(float));
    cudaMalloc(&hidden, HIDDEN * sizeof(float));
    cudaMalloc(&act, HIDDEN * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    cudaMemset(bias, 0, COLS * sizeof(float));
    cudaMemset(hidden, 0, HIDDEN * sizeof(float));
    dim3 block(16, 16);
    dim3 grid(COLS / 16, ROWS / 16);
    addBias<<<grid, block>>>(out, in, bias, ROWS, COLS);
    relu<<<HIDDEN / 256, 256>>>(hidden, act, HIDDEN);
    cudaDeviceSynchronize();
    return 0;
}
