// Kernels pasted on their own (no main), with guards that compare thread indices with lengths:
// `threadIdx.x < lenA)` and `col < N)` were read as template brackets by tree-sitter-cuda 0.20.
__global__ void dotPartial(const float *a, const float *b, float *c, int lenA)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lenA)
        c[i] = a[i] * b[i];
}

__global__ void oneBlockScale(const float *a, float *c, int lenA)
{
    if (threadIdx.x < lenA)
        c[threadIdx.x] = 2.0f * a[threadIdx.x];
}

__global__ void matmulNaive(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
