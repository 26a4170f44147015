// kernels.h - every other CUDA kernel (k_<name> over a launcher), for
// other_emu.cpp and other.cu.
#ifndef TIDALRT_CUDA_OTHER_KERNELS_H
#define TIDALRT_CUDA_OTHER_KERNELS_H

#include "data_movement.h"
#include "layer_norm.h"
#include "loss.h"
#include "optimizer.h"
#include "pad.h"
#include "softmax.h"

#endif // TIDALRT_CUDA_OTHER_KERNELS_H
