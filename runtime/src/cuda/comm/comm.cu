// comm.cu - the data-parallel CUDA kernels written over a launcher, on the
// GPU (tidalrt_cuda_k_<name>).
#include "../gpu_launch.cuh"
#include "list.h"
#include "shard.h"

#define TIDALRT_COMM_CUDA_KERNEL(name)                                         \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_cuda_k_, name, tidalrt::cuda::GpuLauncher)
TIDALRT_CUDA_COMM_OWN_KERNEL_LIST(TIDALRT_COMM_CUDA_KERNEL)
#undef TIDALRT_COMM_CUDA_KERNEL
