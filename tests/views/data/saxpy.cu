// Test data for the views tests: one kernel that compiles, with known resources.
__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void scale(float *data, float factor, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? data[i] : 0.0f;
    __syncthreads();
    if (i < n)
        data[i] = tile[threadIdx.x] * factor;
}
