// dropout.cpp - Dropout forward and backward.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(dropout)
TIDALRT_UNIMPLEMENTED_KERNEL(dropout_backward)
