// A helper class with a member-initializer list (a GPU timer, as in many course programs) around
// a SAXPY launch.
#include <cstdio>
#include <cuda_runtime.h>

class GpuTimer {
public:
    GpuTimer() : start_(nullptr), stop_(nullptr), elapsed_(0.0f)
    {
        cudaEventCreate(&start_);
        cudaEventCreate(&stop_);
    }
    ~GpuTimer()
    {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    void start() { cudaEventRecord(start_, 0); }
    float stop()
    {
        cudaEventRecord(stop_, 0);
        cudaEventSynchronize(stop_);
        cudaEventElapsedTime(&elapsed_, start_, stop_);
        return elapsed_;
    }

private:
    cudaEvent_t start_;
    cudaEvent_t stop_;
    float elapsed_;
};

struct Config {
    int n;
    float alpha;
    Config(int n_, float a_) : n(n_), alpha(a_) {}
};

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

int main()
{
    const int N = 1 << 16;
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    cudaMemset(y, 0, N * sizeof(float));
    saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f, x, y);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
    return 0;
}
