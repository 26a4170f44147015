// reduce.cpp - ReduceSum/ReduceMean and broadcast_to.
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(broadcast_to)
TIDALRT_UNIMPLEMENTED_KERNEL(reduce_mean)
TIDALRT_UNIMPLEMENTED_KERNEL(reduce_sum)
