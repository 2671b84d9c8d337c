// Vector addition guarded by a device query, in the style of the CUDA samples: the host checks
// cudaDeviceProp fields with plain comparisons (`prop.major < 2)`), which tree-sitter-cuda 0.20
// misread as template brackets ("missing '>'").
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int deviceCount = 0;
    cudaGetDeviceCount(&deviceCount);
    if (deviceCount < 1) {
        fprintf(stderr, "no CUDA device\n");
        return EXIT_FAILURE;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (prop.major < 2) {
        fprintf(stderr, "compute capability %d.%d < 2.0 is not supported\n", prop.major, prop.minor);
        return EXIT_FAILURE;
    }
    printf("Device: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);

    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    float *hA = (float *)malloc(bytes), *hB = (float *)malloc(bytes), *hC = (float *)malloc(bytes);
    for (int i = 0; i < n; ++i) {
        hA[i] = 1.0f;
        hB[i] = 2.0f;
    }
    float *dA, *dB, *dC;
    cudaMalloc((void **)&dA, bytes);
    cudaMalloc((void **)&dB, bytes);
    cudaMalloc((void **)&dC, bytes);
    cudaMemcpy(dA, hA, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, bytes, cudaMemcpyHostToDevice);
    vecAdd<<<(n + 255) / 256, 256>>>(dA, dB, dC, n);
    cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost);
    int errors = 0;
    for (int i = 0; i < n; ++i)
        if (hC[i] != 3.0f)
            ++errors;
    printf("%s\n", errors == 0 ? "PASSED" : "FAILED");
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(hA);
    free(hB);
    free(hC);
    return errors == 0 ? 0 : 1;
}
