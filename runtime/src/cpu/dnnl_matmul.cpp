// dnnl_matmul.cpp - Gemm and MatMul (oneDNN matmul).
#include "kernel.h"

TIDALRT_UNIMPLEMENTED_KERNEL(gemm)
TIDALRT_UNIMPLEMENTED_KERNEL(matmul)
