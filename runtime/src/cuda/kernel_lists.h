// kernel_lists.h - which tidal ops have CUDA kernels (namespace-free
// X-macros, like tidalrt/kernel_list.h).
//
// TIDALRT_CUDA_OWN_KERNEL_LIST(X): our own kernels, written over a launcher
// (launch.h): tidalrt_cuda_k_<name> on the GPU and tidalrt_emu_k_<name>, the
// same code on the host CPU, for tests.
// TIDALRT_CUDA_LIBRARY_KERNEL_LIST(X): kernels that call cuDNN or cuBLAS
// (tidalrt_cuda_k_<name> only).
// TIDALRT_CUDA_NCCL_KERNEL_LIST(X) (comm/list.h): the collectives, which
// call NCCL (tidalrt_cuda_k_<name> only, in a runtime built with NCCL).
// Every name is also in TIDALRT_KERNEL_LIST; an op whose kernel is in
// neither list has no CUDA kernel, and a CUDA device refuses to prepare it.
#ifndef TIDALRT_CUDA_KERNEL_LISTS_H
#define TIDALRT_CUDA_KERNEL_LISTS_H

#include "comm/list.h"
#include "elementwise/list.h"
#include "library/list.h"
#include "other/list.h"

#define TIDALRT_CUDA_OWN_KERNEL_LIST(X)                                        \
  TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(X)                                      \
  TIDALRT_CUDA_OTHER_KERNEL_LIST(X)                                            \
  TIDALRT_CUDA_COMM_OWN_KERNEL_LIST(X)

#endif // TIDALRT_CUDA_KERNEL_LISTS_H
