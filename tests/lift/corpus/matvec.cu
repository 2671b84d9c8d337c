// Matrix-vector product y = A x with one thread per row (a classic first reduction exercise).
#include <stdio.h>
#include <stdlib.h>

__global__ void matvec(const float *A, const float *x, float *y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        for (int j = 0; j < cols; j++)
            dot += A[row * cols + j] * x[j];
        y[row] = dot;
    }
}

int main()
{
    const int ROWS = 4096;
    const int COLS = 1024;
    float *h_A = (float *)malloc(ROWS * COLS * sizeof(float));
    float *h_x = (float *)malloc(COLS * sizeof(float));
    float *h_y = (float *)malloc(ROWS * sizeof(float));
    for (int i = 0; i < ROWS * COLS; i++) h_A[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < COLS; i++) h_x[i] = rand() / (float)RAND_MAX;

    float *d_A, *d_x, *d_y;
    cudaMalloc(&d_A, ROWS * COLS * sizeof(float));
    cudaMalloc(&d_x, COLS * sizeof(float));
    cudaMalloc(&d_y, ROWS * sizeof(float));
    cudaMemcpy(d_A, h_A, ROWS * COLS * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_x, h_x, COLS * sizeof(float), cudaMemcpyHostToDevice);

    int threads = 128;
    matvec<<<(ROWS + threads - 1) / threads, threads>>>(d_A, d_x, d_y, ROWS, COLS);
    cudaMemcpy(h_y, d_y, ROWS * sizeof(float), cudaMemcpyDeviceToHost);
    printf("y[0] = %f\n", h_y[0]);

    cudaFree(d_A); cudaFree(d_x); cudaFree(d_y);
    free(h_A); free(h_x); free(h_y);
    return 0;
}
