// list.h - the elementwise CUDA kernels (see ../kernel_lists.h): our own,
// written once over a launcher (binary.h, unary.h, dropout.h, reduce.h).
#ifndef TIDALRT_CUDA_ELEMENTWISE_LIST_H
#define TIDALRT_CUDA_ELEMENTWISE_LIST_H

#define TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(X)                                \
  X(add)                                                                       \
  X(sub)                                                                       \
  X(mul)                                                                       \
  X(div)                                                                       \
  X(pow)                                                                       \
  X(neg)                                                                       \
  X(relu)                                                                      \
  X(sigmoid)                                                                   \
  X(tanh)                                                                      \
  X(sqrt)                                                                      \
  X(erf)                                                                       \
  X(exp)                                                                       \
  X(log)                                                                       \
  X(leaky_relu)                                                                \
  X(gelu)                                                                      \
  X(relu_backward)                                                             \
  X(leaky_relu_backward)                                                       \
  X(sigmoid_backward)                                                          \
  X(tanh_backward)                                                             \
  X(erf_backward)                                                              \
  X(gelu_backward)                                                             \
  X(dropout)                                                                   \
  X(dropout_backward)                                                          \
  X(broadcast_to)                                                              \
  X(reduce_mean)                                                               \
  X(reduce_sum)

#endif // TIDALRT_CUDA_ELEMENTWISE_LIST_H
