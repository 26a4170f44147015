// list.h - the other CUDA kernels (see ../kernel_lists.h): softmax, losses,
// layer norm, optimizer updates and data movement, written over a launcher
// in this folder's headers.
#ifndef TIDALRT_CUDA_OTHER_LIST_H
#define TIDALRT_CUDA_OTHER_LIST_H

#define TIDALRT_CUDA_OTHER_KERNEL_LIST(X)                                      \
  X(softmax)                                                                   \
  X(log_softmax)                                                               \
  X(softmax_backward)                                                          \
  X(log_softmax_backward)                                                      \
  X(softmax_cross_entropy_loss)                                                \
  X(softmax_cross_entropy_loss_backward)                                       \
  X(nll_loss)                                                                  \
  X(nll_loss_backward)                                                         \
  X(layer_norm)                                                                \
  X(layer_norm_backward)                                                       \
  X(sgd_update)                                                                \
  X(sgd_momentum_update)                                                       \
  X(adam_update)                                                               \
  X(onnx_momentum)                                                             \
  X(onnx_adagrad)                                                              \
  X(onnx_adam)                                                                 \
  X(transpose)                                                                 \
  X(concat)                                                                    \
  X(split)                                                                     \
  X(slice)                                                                     \
  X(slice_backward)                                                            \
  X(gather)                                                                    \
  X(gather_backward)

#endif // TIDALRT_CUDA_OTHER_LIST_H
