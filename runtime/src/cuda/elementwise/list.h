// list.h - the elementwise CUDA kernels (see ../kernel_lists.h): every op of
// the runtime's TIDALRT_ELEMENTWISE_KERNEL_LIST,
// TIDALRT_ACTIVATION_KERNEL_LIST and TIDALRT_LOGIC_KERNEL_LIST has one, so
// an op added there needs its CUDA kernel too (the kernel tables refer to
// each by name).
#ifndef TIDALRT_CUDA_ELEMENTWISE_LIST_H
#define TIDALRT_CUDA_ELEMENTWISE_LIST_H

#include "tidalrt/kernel_list.h"

#define TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(X)                                \
  TIDALRT_ELEMENTWISE_KERNEL_LIST(X)                                           \
  TIDALRT_ACTIVATION_KERNEL_LIST(X)                                            \
  TIDALRT_LOGIC_KERNEL_LIST(X)

#endif // TIDALRT_CUDA_ELEMENTWISE_LIST_H
