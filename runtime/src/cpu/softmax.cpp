// softmax.cpp - softmax and log-softmax forward and backward.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(softmax)
TIDALRT_UNIMPLEMENTED_KERNEL(log_softmax)
TIDALRT_UNIMPLEMENTED_KERNEL(softmax_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(log_softmax_backward)
