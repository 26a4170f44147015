# The elementwise CUDA kernels (see ../cuda.cmake for the lists they append to).
# host.cpp holds the kernels' host-side checks and plans, shared by the
# emulated and the GPU kernels.
list(APPEND TIDALRT_EMU_SOURCES
  src/cuda/elementwise/host.cpp
  src/cuda/elementwise/elementwise_emu.cpp
)
list(APPEND TIDALRT_CUDA_KERNEL_SOURCES src/cuda/elementwise/elementwise.cu)
list(APPEND TIDALRT_EMU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_emu_arithmetic_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_emu_logic_dropout_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_emu_reduce_test.cpp)
