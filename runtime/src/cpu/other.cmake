# Softmax, losses, layer norm, optimizer updates, data movement.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/softmax.cpp
  src/cpu/loss.cpp
  src/cpu/layer_norm.cpp
  src/cpu/optimizer.cpp
  src/cpu/data_movement.cpp
  src/cpu/gather.cpp
  src/cpu/pad.cpp
  src/cpu/comm_kernels.cpp
)
# No implicit floating-point contraction: the optimizer updates reproduce
# PyTorch's float32 operation order, its fused multiply-adds included,
# exactly (optimizer.cpp), and elsewhere the scalar tails of the AVX2 code
# must round as the scalar fallback does. Explicit FMAs (intrinsics,
# std::fma) are unaffected.
set_source_files_properties(
  src/cpu/softmax.cpp
  src/cpu/loss.cpp
  src/cpu/layer_norm.cpp
  src/cpu/optimizer.cpp
  src/cpu/data_movement.cpp
  src/cpu/gather.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
list(APPEND TIDALRT_CPU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_other_softmax_loss_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_other_layer_norm_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_other_optimizer_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_other_data_movement_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cpu_pad_test.cpp
)
