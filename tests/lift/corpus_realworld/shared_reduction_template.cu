// A block reduction in shared memory written as a template kernel over the block size, launched
// with explicit template arguments (`reduce<256><<<...>>>`), plus a helper class with a
// member-initializer list that times it, and a plain element-wise kernel before it.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 18)

template <unsigned int blockSize>
__global__ void reduce(const float *in, float *out, unsigned int n)
{
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

__global__ void squareAll(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * in[i];
}

class Stopwatch {
public:
    explicit Stopwatch(const char *label) : label_(label), ms_(0.0f) { cudaEventCreate(&begin_); cudaEventCreate(&end_); }
    void begin() { cudaEventRecord(begin_); }
    void end()
    {
        cudaEventRecord(end_);
        cudaEventSynchronize(end_);
        cudaEventElapsedTime(&ms_, begin_, end_);
        printf("%s: %.3f ms\n", label_, ms_);
    }

private:
    const char *label_;
    float ms_;
    cudaEvent_t begin_, end_;
};

int main()
{
    float *in, *sq, *partial;
    cudaMalloc(&in, N * sizeof(float));
    cudaMalloc(&sq, N * sizeof(float));
    cudaMalloc(&partial, (N / 256) * sizeof(float));
    cudaMemset(in, 0, N * sizeof(float));
    Stopwatch watch("reduce");
    squareAll<<<N / 256, 256>>>(in, sq, N);
    watch.begin();
    reduce<256><<<N / 256, 256>>>(sq, partial, N);
    watch.end();
    cudaFree(in);
    cudaFree(sq);
    cudaFree(partial);
    return 0;
}
