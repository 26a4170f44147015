// emu_table.cpp - the emulated CUDA kernel of a CPU kernel (emu_table.h).
#include "emu_table.h"

#include "kernel_lists.h"

#define TIDALRT_DECLARE_EMU_KERNEL(name)                                       \
  extern "C" tidalrt_status_t tidalrt_emu_k_##name(                            \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_CUDA_OWN_KERNEL_LIST(TIDALRT_DECLARE_EMU_KERNEL)
#undef TIDALRT_DECLARE_EMU_KERNEL

namespace tidalrt {
namespace cuda {

tidalrt_kernel_fn_t emulatedKernelFor(tidalrt_kernel_fn_t cpu) {
#define TIDALRT_EMU_ENTRY(name)                                                \
  if (cpu == &tidalrt_k_##name)                                                \
    return &tidalrt_emu_k_##name;
  TIDALRT_CUDA_OWN_KERNEL_LIST(TIDALRT_EMU_ENTRY)
#undef TIDALRT_EMU_ENTRY
  (void)cpu;
  return nullptr;
}

} // namespace cuda
} // namespace tidalrt
