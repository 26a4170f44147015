// list.h - the library CUDA kernels (see ../kernel_lists.h).
#ifndef TIDALRT_CUDA_LIBRARY_LIST_H
#define TIDALRT_CUDA_LIBRARY_LIST_H

#define TIDALRT_CUDA_LIBRARY_KERNEL_LIST(X)

#endif // TIDALRT_CUDA_LIBRARY_LIST_H
