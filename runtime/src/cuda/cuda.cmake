# CUDA kernels and the CUDA device (docs/runtime-abi.md, "The CUDA device").
#
# Lists filled by the kernel groups:
#   TIDALRT_EMU_SOURCES          host emulations of our own CUDA kernels
#                                (launch.h), compiled into tidalrt always;
#   TIDALRT_EMU_TEST_SOURCES     GoogleTest files comparing them with the CPU
#                                kernels (tidalrt-tests);
#   TIDALRT_CUDA_KERNEL_SOURCES  .cu/.cpp files of tidalrt_cuda (nvcc only);
#   TIDALRT_CUDA_TEST_SOURCES    GoogleTest files of tidalrt-cuda-tests, which
#                                skip without a GPU.
set(TIDALRT_EMU_SOURCES src/cuda/emu_table.cpp)
set(TIDALRT_EMU_TEST_SOURCES)
set(TIDALRT_CUDA_KERNEL_SOURCES)
set(TIDALRT_CUDA_TEST_SOURCES)
include(src/cuda/elementwise/elementwise.cmake)
include(src/cuda/other/other.cmake)
include(src/cuda/library/library.cmake)
include(src/cuda/comm/comm.cmake)

# nvcc is optional: without it (or with TIDAL_ENABLE_CUDA=OFF) the runtime
# has no CUDA device and tidalc cannot link --target cuda executables.
set(TIDALRT_HAVE_CUDA OFF)
if(TIDAL_ENABLE_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
     AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_library(TIDALRT_CUDNN_LIBRARY cudnn
      HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(TIDALRT_CUDNN_INCLUDE_DIR cudnn.h
      HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(CUDAToolkit_FOUND AND TIDALRT_CUDNN_LIBRARY AND
       TIDALRT_CUDNN_INCLUDE_DIR)
      set(TIDALRT_HAVE_CUDA ON)
    else()
      message(STATUS "tidalrt: nvcc found but not the CUDA toolkit's "
                     "libraries or cuDNN; no CUDA device")
    endif()
  else()
    message(STATUS "tidalrt: no nvcc; building without the CUDA device")
  endif()
endif()
message(STATUS "tidalrt: CUDA device ${TIDALRT_HAVE_CUDA}")

# NCCL, for the collectives of --distributed nccl programs (comm/).
set(TIDALRT_HAVE_NCCL OFF)
option(TIDAL_ENABLE_NCCL "Build the NCCL collectives when NCCL is found" ON)
if(TIDALRT_HAVE_CUDA AND TIDAL_ENABLE_NCCL)
  find_library(TIDALRT_NCCL_LIBRARY nccl
    HINTS ${CUDAToolkit_LIBRARY_DIR} $ENV{NCCL_ROOT}/lib)
  find_path(TIDALRT_NCCL_INCLUDE_DIR nccl.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_ROOT}/include)
  if(TIDALRT_NCCL_LIBRARY AND TIDALRT_NCCL_INCLUDE_DIR)
    set(TIDALRT_HAVE_NCCL ON)
    list(APPEND TIDALRT_CUDA_KERNEL_SOURCES
      src/cuda/comm/nccl_comm.cpp
      src/cuda/comm/nccl_kernels.cpp)
    list(APPEND TIDALRT_CUDA_TEST_SOURCES
      ${CMAKE_CURRENT_SOURCE_DIR}/test/cuda_nccl_test.cpp)
  endif()
endif()
message(STATUS "tidalrt: NCCL collectives ${TIDALRT_HAVE_NCCL}")
