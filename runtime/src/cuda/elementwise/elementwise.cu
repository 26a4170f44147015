// elementwise.cu - the elementwise CUDA kernels on the GPU
// (tidalrt_cuda_k_<name>, launch.h).
#include "../gpu_launch.cuh"

#include "activation.h"
#include "binary.h"
#include "cast.h"
#include "dropout.h"
#include "list.h"
#include "logic.h"
#include "random.h"
#include "reduce.h"
#include "unary.h"

#define TIDALRT_EW_GPU(name)                                                   \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_cuda_k_, name, tidalrt::cuda::GpuLauncher)
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_EW_GPU)
#undef TIDALRT_EW_GPU
