/* kernel_list.h - the kernels that generated code calls, one per tidal op. */
/*
 * TIDALRT_KERNEL_LIST(X) expands X(name) once per kernel. The kernel for the
 * op `tidal.<name>` is `tidalrt_k_<name>`; the compiler lowers exactly the ops
 * listed here to calls (see tidalrt.h, "Kernel call ABI"). Ops that are not
 * listed either cost nothing at run time (views: reshape, flatten, squeeze,
 * unsqueeze, identity alias their operand's bytes; constant lives in the
 * program's constant arena) or never reach code generation (gradient).
 */
#ifndef TIDALRT_KERNEL_LIST_H
#define TIDALRT_KERNEL_LIST_H

/* oneDNN kernels (runtime/src/cpu/dnnl_*.cpp). */
#define TIDALRT_DNNL_KERNEL_LIST(X)                                            \
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

/* Element-wise and reduction kernels, AVX2 with a scalar fallback
 * (runtime/src/cpu/elementwise_*.cpp, activation_backward.cpp, dropout.cpp,
 * random.cpp, reduce.cpp). */
#define TIDALRT_ELEMENTWISE_KERNEL_LIST(X)                                     \
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
  X(random_normal)                                                             \
  X(random_uniform)                                                            \
  X(broadcast_to)                                                              \
  X(reduce_mean)                                                               \
  X(reduce_sum)                                                                \
  X(reduce_max)                                                                \
  X(reduce_min)                                                                \
  X(reduce_prod)                                                               \
  X(argmax)                                                                    \
  X(argmin)

/* The activation family and element-wise math ops, with their backward
 * kernels: one formula per op shared with the CUDA kernels, AVX2 loops for
 * clip, hard_sigmoid, hard_swish and abs (runtime/src/cpu/activation.cpp). */
#define TIDALRT_ACTIVATION_KERNEL_LIST(X)                                      \
  X(clip)                                                                      \
  X(hard_sigmoid)                                                              \
  X(hard_swish)                                                                \
  X(elu)                                                                       \
  X(selu)                                                                      \
  X(celu)                                                                      \
  X(softplus)                                                                  \
  X(softsign)                                                                  \
  X(mish)                                                                      \
  X(abs)                                                                       \
  X(reciprocal)                                                                \
  X(sin)                                                                       \
  X(cos)                                                                       \
  X(tan)                                                                       \
  X(asin)                                                                      \
  X(acos)                                                                      \
  X(atan)                                                                      \
  X(sinh)                                                                      \
  X(cosh)                                                                      \
  X(asinh)                                                                     \
  X(acosh)                                                                     \
  X(atanh)                                                                     \
  X(sign)                                                                      \
  X(floor)                                                                     \
  X(ceil)                                                                      \
  X(round)                                                                     \
  X(clip_backward)                                                             \
  X(hard_sigmoid_backward)                                                     \
  X(hard_swish_backward)                                                       \
  X(elu_backward)                                                              \
  X(selu_backward)                                                             \
  X(celu_backward)                                                             \
  X(softplus_backward)                                                         \
  X(softsign_backward)                                                         \
  X(mish_backward)

/* Maximum, minimum, comparisons, mask logic and selection, broadcasting
 * (runtime/src/cpu/logic.cpp), and casts (cast.cpp); formulas shared with
 * the CUDA kernels. */
#define TIDALRT_LOGIC_KERNEL_LIST(X)                                           \
  X(max)                                                                       \
  X(min)                                                                       \
  X(equal)                                                                     \
  X(less)                                                                      \
  X(less_or_equal)                                                             \
  X(greater)                                                                   \
  X(greater_or_equal)                                                          \
  X(logical_and)                                                               \
  X(logical_or)                                                                \
  X(logical_xor)                                                               \
  X(logical_not)                                                               \
  X(where)                                                                     \
  X(cast)

/* Softmax, losses, normalisation, optimizer updates and data movement
 * (runtime/src/cpu/softmax.cpp, loss.cpp, layer_norm.cpp, optimizer.cpp,
 * data_movement.cpp, pad.cpp). */
#define TIDALRT_OTHER_KERNEL_LIST(X)                                           \
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
  X(gather_backward)                                                           \
  X(scatter_extreme)                                                           \
  X(pad)                                                                       \
  X(pad_backward)

/* The gradient all-reduce of data-parallel training over the context's
 * communicator (runtime/src/cpu/comm_kernels.cpp, tidalrt/comm.h). No CUDA
 * kernels: the cuda target's collectives are NCCL's. */
#define TIDALRT_COMM_KERNEL_LIST(X)                                            \
  X(all_reduce_start)                                                          \
  X(all_reduce_wait)                                                           \
  X(shard)                                                                     \
  X(all_gather_start)                                                          \
  X(all_gather_wait)                                                           \
  X(reduce_scatter_start)                                                      \
  X(reduce_scatter_wait)

/* Chains of float32 element-wise ops in one call (tidal-fuse-elementwise,
 * runtime/src/cpu/fused_elementwise.cpp, tidalrt/fused_program.h). No CUDA
 * kernel: only the cpu target fuses. */
#define TIDALRT_FUSED_KERNEL_LIST(X) X(fused_elementwise)

#define TIDALRT_KERNEL_LIST(X)                                                 \
  TIDALRT_DNNL_KERNEL_LIST(X)                                                  \
  TIDALRT_ELEMENTWISE_KERNEL_LIST(X)                                           \
  TIDALRT_ACTIVATION_KERNEL_LIST(X)                                            \
  TIDALRT_LOGIC_KERNEL_LIST(X)                                                 \
  TIDALRT_OTHER_KERNEL_LIST(X)                                                 \
  TIDALRT_COMM_KERNEL_LIST(X)                                                  \
  TIDALRT_FUSED_KERNEL_LIST(X)

#endif /* TIDALRT_KERNEL_LIST_H */
