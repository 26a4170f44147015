// dnnl_conv.cpp - convolution forward and backward (oneDNN).
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(conv)
TIDALRT_UNIMPLEMENTED_KERNEL(conv_backward_data)
TIDALRT_UNIMPLEMENTED_KERNEL(conv_backward_weights)
