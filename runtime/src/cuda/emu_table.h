// emu_table.h - maps a CPU kernel (tidalrt_k_<name>) to the host emulation
// of its CUDA kernel (tidalrt_emu_k_<name>, launch.h); part of the CPU
// runtime, built with or without nvcc.
#ifndef TIDALRT_CUDA_EMU_TABLE_H
#define TIDALRT_CUDA_EMU_TABLE_H

#include "tidalrt/tidalrt.h"

namespace tidalrt {
namespace cuda {

// NULL when the op has no own CUDA kernel (none, or a cuDNN/cuBLAS one).
tidalrt_kernel_fn_t emulatedKernelFor(tidalrt_kernel_fn_t cpu);

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_EMU_TABLE_H
