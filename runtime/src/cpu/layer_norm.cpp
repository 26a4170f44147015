// layer_norm.cpp - layer normalization forward and backward.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(layer_norm)
TIDALRT_UNIMPLEMENTED_KERNEL(layer_norm_backward)
