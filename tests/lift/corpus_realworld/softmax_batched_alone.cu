// Kernels pasted on their own, as they appear in a question or a kernel library's source file
// (no host code): a row-wise softmax with one thread per row (a max pass, a sum of exponentials,
// a normalising pass, each over the columns) and a batched matmul over `int batch, int M, int N,
// int K` with the batch in blockIdx.z.
#include <cuda_runtime.h>

__global__ void rowSoftmax(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float m = -1.0e30f;
    for (int c = 0; c < cols; ++c)
        m = fmaxf(m, x[r * cols + c]);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += expf(x[r * cols + c] - m);
    for (int c = 0; c < cols; ++c)
        y[r * cols + c] = expf(x[r * cols + c] - m) / s;
}

__global__ void batchedMatmul(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (b < batch && row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[(b * M + row) * K + k] * B[(b * K + k) * N + col];
        C[(b * M + row) * N + col] = acc;
    }
}
