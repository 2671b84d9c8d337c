// One Jacobi sweep of the 2-D Laplace equation on an NX x NY grid: interior points take the
// average of their four neighbours, boundary points keep their value.
#include <cstdio>
#include <cstdlib>

#define NX 1024
#define NY 512

__global__ void jacobiStep(const float *u, float *unew, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny)
        return;
    int idx = y * nx + x;
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
        unew[idx] = 0.25f * (u[idx - 1] + u[idx + 1] + u[idx - nx] + u[idx + nx]);
    } else {
        unew[idx] = u[idx];
    }
}

int main()
{
    size_t bytes = NX * NY * sizeof(float);
    float *h_u = (float *)malloc(bytes);
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++)
            h_u[j * NX + i] = (j == 0) ? 1.0f : 0.0f;
    float *d_u, *d_unew;
    cudaMalloc(&d_u, bytes);
    cudaMalloc(&d_unew, bytes);
    cudaMemcpy(d_u, h_u, bytes, cudaMemcpyHostToDevice);
    dim3 block(16, 16);
    dim3 grid((NX + 15) / 16, (NY + 15) / 16);
    jacobiStep<<<grid, block>>>(d_u, d_unew, NX, NY);
    cudaMemcpy(h_u, d_unew, bytes, cudaMemcpyDeviceToHost);
    printf("%f\n", h_u[NX + 1]);
    cudaFree(d_u); cudaFree(d_unew);
    free(h_u);
    return 0;
}
