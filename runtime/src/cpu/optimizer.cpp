// optimizer.cpp - optimizer updates (torch.optim and ONNX training ops).
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(sgd_update)
TIDALRT_UNIMPLEMENTED_KERNEL(sgd_momentum_update)
TIDALRT_UNIMPLEMENTED_KERNEL(adam_update)
TIDALRT_UNIMPLEMENTED_KERNEL(onnx_momentum)
TIDALRT_UNIMPLEMENTED_KERNEL(onnx_adagrad)
TIDALRT_UNIMPLEMENTED_KERNEL(onnx_adam)
