// data_movement.cpp - transpose, concat, split, slice, gather and their backward.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(transpose)
TIDALRT_UNIMPLEMENTED_KERNEL(concat)
TIDALRT_UNIMPLEMENTED_KERNEL(split)
TIDALRT_UNIMPLEMENTED_KERNEL(slice)
TIDALRT_UNIMPLEMENTED_KERNEL(slice_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(gather)
TIDALRT_UNIMPLEMENTED_KERNEL(gather_backward)
