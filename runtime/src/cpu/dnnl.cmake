# Batch normalization (tidal's own loops; double-precision statistics).
list(APPEND TIDALRT_CPU_SOURCES src/cpu/batch_norm.cpp src/cpu/batch_norm_loops.cpp)
# No implicit contraction: the AVX2 and scalar instantiations round alike.
# sqrt without errno (the same correctly rounded result) lets the
# per-channel coefficient loops vectorize.
set_source_files_properties(src/cpu/batch_norm.cpp src/cpu/batch_norm_loops.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fno-math-errno")
# oneDNN kernels: convolution, pooling, gemm/matmul.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/dnnl_util.cpp
  src/cpu/dnnl_conv.cpp
  src/cpu/dnnl_pool.cpp
  src/cpu/pool_loops.cpp
  src/cpu/dnnl_matmul.cpp
)
list(APPEND TIDALRT_CPU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_dnnl_conv_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_dnnl_pool_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_batch_norm_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_dnnl_matmul_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_dnnl_blocked_test.cpp
)
