// other.cu - the other CUDA kernels on the GPU (tidalrt_cuda_k_<name>).
#include "../gpu_launch.cuh"
#include "kernels.h"
#include "list.h"

#define TIDALRT_OTHER_CUDA_KERNEL(name)                                        \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_cuda_k_, name, tidalrt::cuda::GpuLauncher)
TIDALRT_CUDA_OTHER_KERNEL_LIST(TIDALRT_OTHER_CUDA_KERNEL)
#undef TIDALRT_OTHER_CUDA_KERNEL
