// other_emu.cpp - the other CUDA kernels emulated on the host CPU
// (tidalrt_emu_k_<name>, launch.h), for tests on machines without a GPU.
#include "kernels.h"
#include "list.h"

#define TIDALRT_OTHER_EMU_KERNEL(name)                                         \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_emu_k_, name, tidalrt::cuda::EmuLauncher)
TIDALRT_CUDA_OTHER_KERNEL_LIST(TIDALRT_OTHER_EMU_KERNEL)
#undef TIDALRT_OTHER_EMU_KERNEL
