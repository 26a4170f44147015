// list.h - the library CUDA kernels (see ../kernel_lists.h): cuDNN for
// convolution, pooling and batch norm, cuBLAS for gemm and matmul.
#ifndef TIDALRT_CUDA_LIBRARY_LIST_H
#define TIDALRT_CUDA_LIBRARY_LIST_H

#define TIDALRT_CUDA_LIBRARY_KERNEL_LIST(X)                                    \
  X(conv)                                                                      \
  X(conv_backward_data)                                                        \
  X(conv_backward_weights)                                                     \
  X(max_pool)                                                                  \
  X(max_pool_backward)                                                         \
  X(average_pool)                                                              \
  X(average_pool_backward)                                                     \
  X(global_average_pool)                                                       \
  X(batch_norm_inference)                                                      \
  X(batch_norm_training)                                                       \
  X(batch_norm_backward)                                                       \
  X(gemm)                                                                      \
  X(matmul)

#endif // TIDALRT_CUDA_LIBRARY_LIST_H
