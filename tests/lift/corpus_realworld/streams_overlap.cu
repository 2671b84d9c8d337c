// Copy/compute overlap over several streams, in the style of the simpleStreams and
// asyncAPI samples: each chunk is copied and processed on its own stream.
#include <cstdio>
#include <cuda_runtime.h>

#define NSTREAMS 4
#define CHUNK (1 << 16)

__global__ void addConstant(float *data, float c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += c;
}

int main()
{
    float *h = nullptr, *d = nullptr;
    cudaMallocHost(&h, NSTREAMS * CHUNK * sizeof(float));
    cudaMalloc(&d, NSTREAMS * CHUNK * sizeof(float));
    cudaStream_t streams[NSTREAMS];
    for (int s = 0; s < NSTREAMS; ++s)
        cudaStreamCreate(&streams[s]);
    for (int s = 0; s < NSTREAMS; ++s) {
        float *chunk = d + s * CHUNK;
        cudaMemcpyAsync(chunk, h + s * CHUNK, CHUNK * sizeof(float), cudaMemcpyHostToDevice, streams[s]);
        addConstant<<<CHUNK / 256, 256, 0, streams[s]>>>(chunk, 1.0f, CHUNK);
        cudaMemcpyAsync(h + s * CHUNK, chunk, CHUNK * sizeof(float), cudaMemcpyDeviceToHost, streams[s]);
    }
    cudaDeviceSynchronize();
    for (int s = 0; s < NSTREAMS; ++s)
        cudaStreamDestroy(streams[s]);
    cudaFreeHost(h);
    cudaFree(d);
    return 0;
}
