// Softmax over the rows of an M x N matrix as three kernels, as a first course project writes it:
// (1) row maxima, (2) sums of exp(x - max), (3) element-wise normalisation on a 1-D grid.
#include <cstdio>
#include <cstdlib>
#include <cmath>

#define M 2048
#define N 1000

__global__ void rowMax(const float *x, float *maxv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) {
        float m = -INFINITY;
        for (int j = 0; j < N; j++)
            if (x[i * N + j] > m)
                m = x[i * N + j];
        maxv[i] = m;
    }
}

__global__ void rowExpSum(const float *x, const float *maxv, float *sumv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) {
        float s = 0.0f;
        for (int j = 0; j < N; j++)
            s += __expf(x[i * N + j] - maxv[i]);
        sumv[i] = s;
    }
}

__global__ void normalize(const float *x, const float *maxv, const float *sumv, float *y)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < M * N) {
        int row = idx / N;
        y[idx] = __expf(x[idx] - maxv[row]) / sumv[row];
    }
}

int main()
{
    float *h_x = (float *)malloc(M * N * sizeof(float));
    float *h_y = (float *)malloc(M * N * sizeof(float));
    for (int i = 0; i < M * N; i++) h_x[i] = (rand() % 100) / 25.0f;

    float *d_x, *d_max, *d_sum, *d_y;
    cudaMalloc(&d_x, M * N * sizeof(float));
    cudaMalloc(&d_max, M * sizeof(float));
    cudaMalloc(&d_sum, M * sizeof(float));
    cudaMalloc(&d_y, M * N * sizeof(float));
    cudaMemcpy(d_x, h_x, M * N * sizeof(float), cudaMemcpyHostToDevice);

    rowMax<<<(M + 127) / 128, 128>>>(d_x, d_max);
    rowExpSum<<<(M + 127) / 128, 128>>>(d_x, d_max, d_sum);
    normalize<<<(M * N + 255) / 256, 256>>>(d_x, d_max, d_sum, d_y);

    cudaMemcpy(h_y, d_y, M * N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("y[0] = %f\n", h_y[0]);
    cudaFree(d_x); cudaFree(d_max); cudaFree(d_sum); cudaFree(d_y);
    free(h_x); free(h_y);
    return 0;
}
