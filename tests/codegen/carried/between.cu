// An opaque kernel (atomics) between lifted ones: scale -> count (carried unchanged) -> combine,
// and twice, which does not depend on it (tests/codegen/test_carry.cpp, test_corpus_gpu.cpp).
#define N 4096
__global__ void scale(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] * 2.0f;
}
__global__ void count(const float *b, float *h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&h[i % 32], b[i]);
}
__global__ void combine(const float *b, const float *h, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = b[i] * h[0];
}
__global__ void twice(const float *a, float *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = a[i] + a[i];
}
int main() {
    static float host[N];
    float *a, *b, *h, *c, *d;
    cudaMalloc(&a, N * sizeof(float)); cudaMalloc(&b, N * sizeof(float));
    cudaMalloc(&h, 32 * sizeof(float)); cudaMalloc(&c, N * sizeof(float)); cudaMalloc(&d, N * sizeof(float));
    cudaMemcpy(a, host, N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(h, 0, 32 * sizeof(float));
    scale<<<N / 256, 256>>>(a, b, N);
    count<<<N / 256, 256>>>(b, h, N);
    combine<<<N / 256, 256>>>(b, h, c, N);
    twice<<<N / 256, 256>>>(a, d, N);
    cudaMemcpy(host, c, N * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(host, d, N * sizeof(float), cudaMemcpyDeviceToHost);
    return 0;
}
