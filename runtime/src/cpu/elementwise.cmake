# Element-wise, activation-backward, dropout and reduction kernels: AVX2
# (simd.cpp, per-function target attributes) with a scalar fallback.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/elementwise_binary.cpp
  src/cpu/elementwise_unary.cpp
  src/cpu/activation_backward.cpp
  src/cpu/dropout.cpp
  src/cpu/reduce.cpp
  src/cpu/simd.cpp
  src/cpu/broadcast.cpp
)
list(APPEND TIDALRT_CPU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_binary_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_unary_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_dropout_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_reduce_test.cpp
)
