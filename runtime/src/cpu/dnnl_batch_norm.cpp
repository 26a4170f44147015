// dnnl_batch_norm.cpp - batch normalization forward and backward (oneDNN).
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(batch_norm_inference)
TIDALRT_UNIMPLEMENTED_KERNEL(batch_norm_training)
TIDALRT_UNIMPLEMENTED_KERNEL(batch_norm_backward)
