// kernel_table.h - maps a CPU kernel (tidalrt_k_<name>, what generated code
// passes to tidalrt_dev_launch) to its CUDA kernel (tidalrt_cuda_k_<name>).
#ifndef TIDALRT_CUDA_KERNEL_TABLE_H
#define TIDALRT_CUDA_KERNEL_TABLE_H

#include "tidalrt/tidalrt.h"

namespace tidalrt {
namespace cuda {

// NULL when the op has no CUDA kernel.
tidalrt_kernel_fn_t cudaKernelFor(tidalrt_kernel_fn_t cpu);

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_KERNEL_TABLE_H
