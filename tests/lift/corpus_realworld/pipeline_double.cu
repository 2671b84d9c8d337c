// A multi-kernel pipeline in double precision, as a preprocessing step chains small kernels
// (normalize -> scale -> clamp), each reading the previous one's output, with the statistics
// passed as scalar arguments and a host helper that launches the three stages in order.
#include <cstdio>
#include <cuda_runtime.h>

#define LEN (1 << 16)
#define TPB 256

__global__ void normalize(const double *in, double *out, double mean, double invStd, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (in[i] - mean) * invStd;
}

__global__ void scale(const double *in, double *out, double gain, double offset, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = gain * in[i] + offset;
}

__global__ void clampRange(const double *in, double *out, double lo, double hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = fmin(fmax(in[i], lo), hi);
}

static void runPipeline(const double *raw, double *tmpA, double *tmpB, double *result, int n)
{
    int blocks = (n + TPB - 1) / TPB;
    normalize<<<blocks, TPB>>>(raw, tmpA, 0.5, 2.0, n);
    scale<<<blocks, TPB>>>(tmpA, tmpB, 3.0, -1.0, n);
    clampRange<<<blocks, TPB>>>(tmpB, result, -1.0, 1.0, n);
}

int main()
{
    double *raw, *a, *b, *result;
    cudaMalloc(&raw, LEN * sizeof(double));
    cudaMalloc(&a, LEN * sizeof(double));
    cudaMalloc(&b, LEN * sizeof(double));
    cudaMalloc(&result, LEN * sizeof(double));
    cudaMemset(raw, 0, LEN * sizeof(double));
    runPipeline(raw, a, b, result, LEN);
    double first = 0.0;
    cudaMemcpy(&first, result, sizeof(double), cudaMemcpyDeviceToHost);
    printf("result[0] = %f\n", first);
    cudaFree(raw);
    cudaFree(a);
    cudaFree(b);
    cudaFree(result);
    return 0;
}
