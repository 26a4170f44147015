# The other CUDA kernels (see ../cuda.cmake for the lists they append to):
# softmax, losses, layer norm, optimizer updates, data movement.
list(APPEND TIDALRT_EMU_SOURCES src/cuda/other/other_emu.cpp)
list(APPEND TIDALRT_CUDA_KERNEL_SOURCES src/cuda/other/other.cu)
list(APPEND TIDALRT_EMU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_emu_other_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/scatter_extreme_test.cpp)
# No floating-point contraction beyond the explicit fmaf calls, as for the
# CPU twins (src/cpu/other.cmake): the optimizer updates reproduce PyTorch's
# operation order exactly, and every body rounds as the CPU's scalar code.
# nvcc contracts device code unless --fmad=false; its host pass and g++
# follow -ffp-contract.
set_source_files_properties(src/cuda/other/other_emu.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
set_source_files_properties(src/cuda/other/other.cu
  PROPERTIES COMPILE_OPTIONS "--fmad=false;-Xcompiler=-ffp-contract=off")
