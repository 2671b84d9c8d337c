// C = A * B^T, where B is stored as N x K (each row of B is one output column). A layer's
// weight matrix is kept this way in many frameworks, so the kernel walks both operands by rows.
#include <cstdio>
#include <cstdlib>

#define M 384
#define N 256
#define K 320

__global__ void matmulTransposedB(const float *A, const float *B, float *C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[row * K + k] * B[col * K + k];
    C[row * N + col] = acc;
}

int main()
{
    float *hA = (float *)malloc(M * K * sizeof(float));
    float *hB = (float *)malloc(N * K * sizeof(float));
    float *hC = (float *)malloc(M * N * sizeof(float));
    for (int i = 0; i < M * K; i++) hA[i] = 2.0f * rand() / RAND_MAX - 1.0f;
    for (int i = 0; i < N * K; i++) hB[i] = 2.0f * rand() / RAND_MAX - 1.0f;

    float *dA, *dB, *dC;
    cudaMalloc(&dA, M * K * sizeof(float));
    cudaMalloc(&dB, N * K * sizeof(float));
    cudaMalloc(&dC, M * N * sizeof(float));
    cudaMemcpy(dA, hA, M * K * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, N * K * sizeof(float), cudaMemcpyHostToDevice);

    dim3 block(32, 8);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    matmulTransposedB<<<grid, block>>>(dA, dB, dC);
    cudaMemcpy(hC, dC, M * N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("C[0][0] = %f\n", hC[0]);

    cudaFree(dA); cudaFree(dB); cudaFree(dC);
    free(hA); free(hB); free(hC);
    return 0;
}
