# The data-parallel CUDA kernels (see ../cuda.cmake for the lists they
# append to): tidal.shard over a launcher (emulated too), and the NCCL
# collectives, built when the CUDA device is and CMake finds NCCL
# (nccl.h and libnccl beside the CUDA toolkit, or where NCCL_ROOT says).
list(APPEND TIDALRT_EMU_SOURCES src/cuda/comm/comm_emu.cpp)
list(APPEND TIDALRT_CUDA_KERNEL_SOURCES src/cuda/comm/comm.cu)
# The emulated shard is tested against the CPU kernel on 1, 2 and 4 ranks
# in test/comm_test.cpp and test/comm_mpi_test.cpp.
