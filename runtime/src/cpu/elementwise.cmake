# Element-wise, activation-backward, dropout and reduction kernels: AVX2
# (simd.cpp, per-function target attributes) with a scalar fallback.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/elementwise_binary.cpp
  src/cpu/elementwise_unary.cpp
  src/cpu/activation_backward.cpp
  src/cpu/activation.cpp
  src/cpu/logic.cpp
  src/cpu/cast.cpp
  src/cpu/dropout.cpp
  src/cpu/reduce.cpp
  src/cpu/reduce_extreme.cpp
  src/cpu/simd.cpp
  src/cpu/broadcast.cpp
)
# The activation family's AVX2 loops must round as its scalar formulas do
# (activation_math.h): no implicit contraction into FMAs.
set_source_files_properties(src/cpu/activation.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
list(APPEND TIDALRT_CPU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_binary_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_unary_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_activation_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_logic_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_cast_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_dropout_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_reduce_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_reduce_extreme_test.cpp
)
