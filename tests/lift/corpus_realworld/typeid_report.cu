// A program that reports the element types it uses with typeid(double) and a host template,
// between two launches: the grammar cannot read `typeid(double)`, so the launch after it is not
// followed (what that statement does is unknown to the lifter), while the one before it lifts.
#include <cstdio>
#include <typeinfo>
#include <cuda_runtime.h>

#define COUNT 2048

template <typename T>
void describe(const char *what)
{
    printf("%s uses %s (%zu bytes)\n", what, typeid(T).name(), sizeof(T));
}

__global__ void twice(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}

__global__ void halve(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 0.5f;
}

int main()
{
    float *in, *out;
    cudaMalloc(&in, COUNT * sizeof(float));
    cudaMalloc(&out, COUNT * sizeof(float));
    cudaMemset(in, 0, COUNT * sizeof(float));
    halve<<<COUNT / 256, 256>>>(in, out, COUNT);
    cudaDeviceSynchronize();
    describe<float>("halve");
    if (typeid(double) == typeid(float))
        printf("unexpected\n");
    twice<<<COUNT / 256, 256>>>(out, in, COUNT);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
