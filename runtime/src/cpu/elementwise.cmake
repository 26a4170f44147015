# Element-wise, activation-backward, dropout and reduction kernels: AVX-512
# (simd_avx512.cpp) and AVX2 (simd_avx2.cpp), per-function target
# attributes, with a scalar fallback (simd_scalar.cpp), picked at run time
# (simd_dispatch.cpp).
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/elementwise_binary.cpp
  src/cpu/elementwise_unary.cpp
  src/cpu/activation_backward.cpp
  src/cpu/activation.cpp
  src/cpu/logic.cpp
  src/cpu/cast.cpp
  src/cpu/dropout.cpp
  src/cpu/random.cpp
  src/cpu/reduce.cpp
  src/cpu/reduce_extreme.cpp
  src/cpu/simd_dispatch.cpp
  src/cpu/simd_scalar.cpp
  src/cpu/simd_avx2.cpp
  src/cpu/simd_avx512.cpp
  src/cpu/broadcast.cpp
  src/cpu/fused_elementwise.cpp
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
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_random_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_elementwise_reduce_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_reduce_extreme_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_simd_isa_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_fused_elementwise_test.cpp
)
