// Device function templates called from a kernel: one with its argument type deduced from a local
// (`clampT(v, 0.0f, 1.0f)`), one with an explicit non-type argument (`weightedK<3>(v)`), as in code
// that keeps numerics in small header-style helpers.
#include <cuda_runtime.h>

#define ROWS 1024
#define COLS 512

template <typename T>
__device__ T clampT(T v, T lo, T hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

template <int K>
__device__ float weightedK(float x)
{
    float acc = 0.0f;
    for (int k = 1; k <= K; ++k)
        acc += x * k;
    return acc;
}

__global__ void squashRows(const float *in, float *out, int rows, int cols)
{
    int r = blockIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
        float v = in[r * cols + c];
        v = clampT(v, 0.0f, 1.0f);
        out[r * cols + c] = weightedK<3>(v);
    }
}

int main()
{
    float *in, *out;
    cudaMalloc(&in, ROWS * COLS * sizeof(float));
    cudaMalloc(&out, ROWS * COLS * sizeof(float));
    cudaMemset(in, 0, ROWS * COLS * sizeof(float));
    dim3 grid(COLS / 128, ROWS);
    squashRows<<<grid, 128>>>(in, out, ROWS, COLS);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
