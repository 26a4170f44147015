// elementwise_emu.cpp - the elementwise CUDA kernels emulated on the host
// (tidalrt_emu_k_<name>, launch.h), for the tests that compare them with
// the CPU kernels.
#include "activation.h"
#include "binary.h"
#include "cast.h"
#include "dropout.h"
#include "list.h"
#include "logic.h"
#include "random.h"
#include "reduce.h"
#include "unary.h"

#define TIDALRT_EW_EMU(name)                                                   \
  TIDALRT_CUDA_DEFINE_KERNEL(tidalrt_emu_k_, name, tidalrt::cuda::EmuLauncher)
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_EW_EMU)
#undef TIDALRT_EW_EMU
