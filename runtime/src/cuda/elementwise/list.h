// list.h - the elementwise CUDA kernels (see ../kernel_lists.h).
#ifndef TIDALRT_CUDA_ELEMENTWISE_LIST_H
#define TIDALRT_CUDA_ELEMENTWISE_LIST_H

#define TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(X)

#endif // TIDALRT_CUDA_ELEMENTWISE_LIST_H
