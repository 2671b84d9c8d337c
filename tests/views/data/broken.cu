// Test data: line 7 uses an undeclared identifier, so NVRTC must report an error there.
__global__ void broken(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = out[i];
        out[i] = v * undeclared_scale;
    }
}
