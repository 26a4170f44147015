// loss.cpp - softmax cross-entropy and NLL losses forward and backward.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(softmax_cross_entropy_loss)
TIDALRT_UNIMPLEMENTED_KERNEL(softmax_cross_entropy_loss_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(nll_loss)
TIDALRT_UNIMPLEMENTED_KERNEL(nll_loss_backward)
