// list.h - the data-parallel CUDA kernels (see ../kernel_lists.h), the
// twins of runtime/src/cpu/comm_kernels.cpp:
//
// TIDALRT_CUDA_COMM_OWN_KERNEL_LIST(X): tidal.shard, written over a
//   launcher (shard.h), so it is also emulated and tested without a GPU;
// TIDALRT_CUDA_NCCL_KERNEL_LIST(X): the collectives, which call NCCL
//   (nccl_kernels.cpp; only in a runtime built with NCCL, which defines
//   TIDALRT_HAVE_NCCL).
#ifndef TIDALRT_CUDA_COMM_LIST_H
#define TIDALRT_CUDA_COMM_LIST_H

#include "tidalrt/kernel_list.h"

#define TIDALRT_CUDA_COMM_OWN_KERNEL_LIST(X) X(shard)

#define TIDALRT_CUDA_NCCL_KERNEL_LIST(X)                                       \
  X(all_reduce_start)                                                          \
  X(all_reduce_wait)                                                           \
  X(all_gather_start)                                                          \
  X(all_gather_wait)                                                           \
  X(reduce_scatter_start)                                                      \
  X(reduce_scatter_wait)

#endif // TIDALRT_CUDA_COMM_LIST_H
