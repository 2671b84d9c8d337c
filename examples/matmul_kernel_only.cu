// A naive matrix multiply as it is often pasted: the kernel alone, no host code. C = A * B with
// A M x K, B K x N, C M x N, row-major, one thread per element of C. StitchCUDA lifts it on its own:
// M, N and K are sizes (give them with --size), the launch is inferred from the guard.
//   stitchcuda lift examples/matmul_kernel_only.cu --size M=64 --size N=32 --size K=16 --eval
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
