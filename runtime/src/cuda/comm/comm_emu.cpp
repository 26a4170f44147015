// comm_emu.cpp - the data-parallel CUDA kernels written over a launcher,
// emulated on the host CPU (tidalrt_emu_k_<name>, launch.h), for tests on
// machines without a GPU.
#include "list.h"
#include "shard.h"

#define TIDALRT_COMM_EMU_KERNEL(name)                                          \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_emu_k_, name, tidalrt::cuda::EmuLauncher)
TIDALRT_CUDA_COMM_OWN_KERNEL_LIST(TIDALRT_COMM_EMU_KERNEL)
#undef TIDALRT_COMM_EMU_KERNEL
