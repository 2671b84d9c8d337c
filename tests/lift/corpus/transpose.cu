// Naive matrix transpose: out (cols x rows) = in (rows x cols)^T.
#include <stdio.h>
#include <stdlib.h>

__global__ void transposeNaive(float *odata, const float *idata, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        odata[x * height + y] = idata[y * width + x];
}

int main()
{
    const int width = 1024, height = 768;
    const int mem_size = width * height * sizeof(float);
    float *h_idata = (float *)malloc(mem_size);
    float *h_odata = (float *)malloc(mem_size);
    for (int i = 0; i < width * height; i++) h_idata[i] = (float)i;

    float *d_idata, *d_odata;
    cudaMalloc(&d_idata, mem_size);
    cudaMalloc(&d_odata, mem_size);
    cudaMemcpy(d_idata, h_idata, mem_size, cudaMemcpyHostToDevice);

    dim3 dimBlock(32, 8);
    dim3 dimGrid((width + 31) / 32, (height + 7) / 8);
    transposeNaive<<<dimGrid, dimBlock>>>(d_odata, d_idata, width, height);
    cudaMemcpy(h_odata, d_odata, mem_size, cudaMemcpyDeviceToHost);
    printf("%f\n", h_odata[1]);
    cudaFree(d_idata); cudaFree(d_odata);
    free(h_idata); free(h_odata);
    return 0;
}
