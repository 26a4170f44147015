// activation_backward.cpp - backward passes of the activations.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(relu_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(leaky_relu_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(sigmoid_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(tanh_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(erf_backward)
