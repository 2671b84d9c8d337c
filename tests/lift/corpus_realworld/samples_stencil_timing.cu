// A CUDA-samples-style program: a `check` function template behind a `checkCudaErrors(...)`
// macro (as helper_cuda.h has it) around every runtime call, cudaEvent timing around a
// five-point Jacobi stencil over the interior of a 2-D grid, and a copy of the boundary.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define NX 1024
#define NY 768
#define BLOCK_X 32
#define BLOCK_Y 8

template <typename T>
void check(T result, char const *const func, const char *const file, int const line)
{
    if (result) {
        fprintf(stderr, "CUDA error at %s:%d code=%d \"%s\"\n", file, line, static_cast<unsigned int>(result), func);
        exit(EXIT_FAILURE);
    }
}

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)

__global__ void jacobiStep(const float *in, float *out, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < nx && y < ny) {
        float left = x > 0 ? in[y * nx + x - 1] : 0.0f;
        float right = x < nx - 1 ? in[y * nx + x + 1] : 0.0f;
        float up = y > 0 ? in[(y - 1) * nx + x] : 0.0f;
        float down = y < ny - 1 ? in[(y + 1) * nx + x] : 0.0f;
        out[y * nx + x] = 0.25f * (left + right + up + down);
    }
}

int main(int argc, char **argv)
{
    float *d_a, *d_b;
    size_t bytes = NX * NY * sizeof(float);
    checkCudaErrors(cudaMalloc((void **)&d_a, bytes));
    checkCudaErrors(cudaMalloc((void **)&d_b, bytes));
    checkCudaErrors(cudaMemset(d_a, 0, bytes));

    cudaEvent_t start, stop;
    checkCudaErrors(cudaEventCreate(&start));
    checkCudaErrors(cudaEventCreate(&stop));

    dim3 threads(BLOCK_X, BLOCK_Y);
    dim3 blocks(NX / BLOCK_X, NY / BLOCK_Y);
    checkCudaErrors(cudaEventRecord(start, 0));
    jacobiStep<<<blocks, threads>>>(d_a, d_b, NX, NY);
    checkCudaErrors(cudaGetLastError());
    checkCudaErrors(cudaEventRecord(stop, 0));
    checkCudaErrors(cudaEventSynchronize(stop));

    float msec = 0.0f;
    checkCudaErrors(cudaEventElapsedTime(&msec, start, stop));
    printf("jacobiStep: %.3f ms (%.2f GB/s)\n", msec, 2.0 * bytes / (msec * 1.0e6));

    checkCudaErrors(cudaEventDestroy(start));
    checkCudaErrors(cudaEventDestroy(stop));
    checkCudaErrors(cudaFree(d_a));
    checkCudaErrors(cudaFree(d_b));
    return 0;
}
