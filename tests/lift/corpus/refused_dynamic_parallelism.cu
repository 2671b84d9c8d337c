// Dynamic parallelism: each parent thread launches a child grid over its own segment.
// (Compile with -rdc=true.)
#include <cstdio>

__global__ void childScale(float *data, int offset, int len)
{
    int i = threadIdx.x;
    if (i < len)
        data[offset + i] *= 2.0f;
}

__global__ void parentLaunch(float *data, int segments, int len)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < segments)
        childScale<<<1, len>>>(data, s * len, len);
}

int main()
{
    const int segments = 64, len = 128;
    float *d_data;
    cudaMalloc(&d_data, segments * len * sizeof(float));
    cudaMemset(d_data, 0, segments * len * sizeof(float));
    parentLaunch<<<1, segments>>>(d_data, segments, len);
    cudaDeviceSynchronize();
    cudaFree(d_data);
    return 0;
}
