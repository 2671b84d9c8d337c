// Leaky ReLU with a grid-stride loop, launched with a fixed grid as the CUDA best-practices
// guide recommends, on unified memory.
#include <iostream>
#include <math.h>

__global__ void leakyRelu(int n, float slope, const float *x, float *y)
{
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = index; i < n; i += stride)
        y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

int main(void)
{
    int N = 1 << 20;
    float *x, *y;
    cudaMallocManaged(&x, N * sizeof(float));
    cudaMallocManaged(&y, N * sizeof(float));
    for (int i = 0; i < N; i++)
        x[i] = (i % 7) - 3.0f;

    int blockSize = 256;
    int numBlocks = 32;
    leakyRelu<<<numBlocks, blockSize>>>(N, 0.01f, x, y);
    cudaDeviceSynchronize();

    float maxError = 0.0f;
    for (int i = 0; i < N; i++) {
        float expect = x[i] > 0.0f ? x[i] : 0.01f * x[i];
        maxError = fmax(maxError, fabs(y[i] - expect));
    }
    std::cout << "Max error: " << maxError << std::endl;
    cudaFree(x);
    cudaFree(y);
    return 0;
}
