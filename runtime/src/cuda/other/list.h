// list.h - the other CUDA kernels (see ../kernel_lists.h).
#ifndef TIDALRT_CUDA_OTHER_LIST_H
#define TIDALRT_CUDA_OTHER_LIST_H

#define TIDALRT_CUDA_OTHER_KERNEL_LIST(X)

#endif // TIDALRT_CUDA_OTHER_LIST_H
