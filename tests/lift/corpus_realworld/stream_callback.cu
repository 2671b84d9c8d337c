// A host callback declared with the runtime's calling-convention macro (CUDART_CB), registered on
// a stream after an asynchronous kernel, in the style of the simpleCallback sample.
#include <cstdio>
#include <cuda_runtime.h>

#define N 8192

struct Workload {
    int id;
    float *d_data;
    bool success;
};

void CUDART_CB myStreamCallback(cudaStream_t stream, cudaError_t status, void *data)
{
    Workload *w = (Workload *)data;
    w->success = status == cudaSuccess;
    printf("workload %d finished\n", w->id);
}

__global__ void incKernel(float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = data[i] + 1.0f;
}

__global__ void square(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * in[i];
}

int main()
{
    float *d_data, *d_sq;
    cudaMalloc(&d_data, N * sizeof(float));
    cudaMalloc(&d_sq, N * sizeof(float));
    cudaMemset(d_data, 0, N * sizeof(float));
    square<<<N / 256, 256>>>(d_data, d_sq, N);

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    Workload w;
    w.id = 0;
    w.d_data = d_data;
    incKernel<<<N / 256, 256, 0, stream>>>(d_data, N);
    cudaStreamAddCallback(stream, myStreamCallback, &w, 0);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaFree(d_data);
    cudaFree(d_sq);
    return 0;
}
