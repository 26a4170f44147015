// dnnl_pool.cpp - max/average/global-average pooling forward and backward (oneDNN).
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(max_pool)
TIDALRT_UNIMPLEMENTED_KERNEL(max_pool_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(average_pool)
TIDALRT_UNIMPLEMENTED_KERNEL(average_pool_backward)
TIDALRT_UNIMPLEMENTED_KERNEL(global_average_pool)
