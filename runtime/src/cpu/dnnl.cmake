# oneDNN kernels: convolution, pooling, batch norm, gemm/matmul.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/dnnl_conv.cpp
  src/cpu/dnnl_pool.cpp
  src/cpu/dnnl_batch_norm.cpp
  src/cpu/dnnl_matmul.cpp
)
