// Sum reduction with warp shuffles: each warp reduces 32 values in registers, lane 0 adds the
// warp's total to the result.
#include <cstdio>
#include <cstdlib>

__inline__ __device__ float warpReduceSum(float val)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void reduceWarp(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = __shfl_down_sync(0xffffffff, v, 16) + v;
    if ((threadIdx.x & 31) == 0)
        out[i / 32] = v;
}

int main()
{
    const int n = 1 << 20;
    float *h_in = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h_in[i] = 1.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, (n / 32) * sizeof(float));
    cudaMemcpy(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice);
    reduceWarp<<<n / 256, 256>>>(d_in, d_out, n);
    float first;
    cudaMemcpy(&first, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", first);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in);
    return 0;
}
