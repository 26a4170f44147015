# The library CUDA kernels (see ../cuda.cmake for the lists they append to):
# cuDNN and cuBLAS calls compiled by the host compiler, and the small device
# kernels around them (kernels.cu).
list(APPEND TIDALRT_CUDA_KERNEL_SOURCES
  src/cuda/library/common.cpp
  src/cuda/library/conv.cpp
  src/cuda/library/pool.cpp
  src/cuda/library/batch_norm.cpp
  src/cuda/library/matmul.cpp
  src/cuda/library/kernels.cu
)
list(APPEND TIDALRT_CUDA_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_library_case.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_library_conv_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_library_pool_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_library_norm_matmul_test.cpp
)
