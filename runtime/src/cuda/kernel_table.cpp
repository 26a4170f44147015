// kernel_table.cpp - the CUDA kernel of a CPU kernel (kernel_table.h).
#include "kernel_table.h"

#include "kernel_lists.h"

#define TIDALRT_DECLARE_CUDA_KERNEL(name)                                      \
  extern "C" tidalrt_status_t tidalrt_cuda_k_##name(                           \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_CUDA_OWN_KERNEL_LIST(TIDALRT_DECLARE_CUDA_KERNEL)
TIDALRT_CUDA_LIBRARY_KERNEL_LIST(TIDALRT_DECLARE_CUDA_KERNEL)
#ifdef TIDALRT_HAVE_NCCL
TIDALRT_CUDA_NCCL_KERNEL_LIST(TIDALRT_DECLARE_CUDA_KERNEL)
#endif
#undef TIDALRT_DECLARE_CUDA_KERNEL

namespace tidalrt {
namespace cuda {

tidalrt_kernel_fn_t cudaKernelFor(tidalrt_kernel_fn_t cpu) {
#define TIDALRT_CUDA_ENTRY(name)                                               \
  if (cpu == &tidalrt_k_##name)                                                \
    return &tidalrt_cuda_k_##name;
  TIDALRT_CUDA_OWN_KERNEL_LIST(TIDALRT_CUDA_ENTRY)
  TIDALRT_CUDA_LIBRARY_KERNEL_LIST(TIDALRT_CUDA_ENTRY)
#ifdef TIDALRT_HAVE_NCCL
  TIDALRT_CUDA_NCCL_KERNEL_LIST(TIDALRT_CUDA_ENTRY)
#endif
#undef TIDALRT_CUDA_ENTRY
  (void)cpu;
  return nullptr;
}

} // namespace cuda
} // namespace tidalrt
