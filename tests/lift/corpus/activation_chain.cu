// An element-wise chain over an M x N activation map, one kernel per step (course assignment
// style): t = x * y + 1, u = tanh(t), z = relu(0.5 * u - x). Each kernel treats the map as a
// flat array of M * N floats.
#include <cstdio>
#include <cstdlib>

#define M 512
#define N 768
#define BLOCK 256

__global__ void mulAdd(const float *x, const float *y, float *t, int total)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total)
        t[idx] = x[idx] * y[idx] + 1.0f;
}

__global__ void tanhKernel(const float *t, float *u, int total)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total)
        u[idx] = tanhf(t[idx]);
}

__global__ void shiftRelu(const float *u, const float *x, float *z, int total)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total) {
        float v = u[idx] * 0.5f - x[idx];
        z[idx] = v > 0.0f ? v : 0.0f;
    }
}

int main()
{
    const int total = M * N;
    size_t bytes = M * N * sizeof(float);
    float *h_x = (float *)malloc(bytes), *h_y = (float *)malloc(bytes), *h_z = (float *)malloc(bytes);
    for (int i = 0; i < total; ++i) {
        h_x[i] = (float)rand() / RAND_MAX - 0.5f;
        h_y[i] = (float)rand() / RAND_MAX - 0.5f;
    }
    float *d_x, *d_y, *d_t, *d_u, *d_z;
    cudaMalloc(&d_x, bytes);
    cudaMalloc(&d_y, bytes);
    cudaMalloc(&d_t, bytes);
    cudaMalloc(&d_u, bytes);
    cudaMalloc(&d_z, bytes);
    cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_y, h_y, bytes, cudaMemcpyHostToDevice);

    int blocks = (total + BLOCK - 1) / BLOCK;
    mulAdd<<<blocks, BLOCK>>>(d_x, d_y, d_t, total);
    tanhKernel<<<blocks, BLOCK>>>(d_t, d_u, total);
    shiftRelu<<<blocks, BLOCK>>>(d_u, d_x, d_z, total);
    cudaDeviceSynchronize();

    cudaMemcpy(h_z, d_z, bytes, cudaMemcpyDeviceToHost);
    printf("z[0] = %f\n", h_z[0]);
    cudaFree(d_x); cudaFree(d_y); cudaFree(d_t); cudaFree(d_u); cudaFree(d_z);
    free(h_x); free(h_y); free(h_z);
    return 0;
}
