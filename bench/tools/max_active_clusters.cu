// How many thread-block clusters of each size the GPU keeps resident at once, for blocks of a
// given size and shared memory (cudaOccupancyMaxActiveClusters): the whole-wave count that the
// long-row kernels' row_steps should fill (docs/SCHEDULE.md, row_steps).
//   nvcc -arch=sm_90 -o max_active_clusters bench/tools/max_active_clusters.cu && ./max_active_clusters
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe(float *out)
{
    extern __shared__ float smem[];
    smem[threadIdx.x] = 0;
    if (out)
        out[blockIdx.x] = smem[0];
}

int main()
{
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("%s: %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
    cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    const int threads[] = {256, 512, 1024};
    const int sharedKiB[] = {1, 64, 129};
    for (int t : threads)
        for (int kib : sharedKiB)
            for (int cluster : {2, 4, 8, 16}) {
                cudaLaunchConfig_t config{};
                config.gridDim = dim3(cluster * 64);
                config.blockDim = dim3(t);
                config.dynamicSmemBytes = kib * 1024;
                cudaLaunchAttribute attr{};
                attr.id = cudaLaunchAttributeClusterDimension;
                attr.val.clusterDim.x = cluster;
                attr.val.clusterDim.y = 1;
                attr.val.clusterDim.z = 1;
                config.attrs = &attr;
                config.numAttrs = 1;
                int clusters = 0;
                const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe, &config);
                std::printf("threads %4d  shared %3d KiB  cluster %2d: %s%d clusters resident (%d blocks)\n", t, kib,
                            cluster, e == cudaSuccess ? "" : cudaGetErrorString(e), clusters, clusters * cluster);
            }
    return 0;
}
