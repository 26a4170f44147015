# The library CUDA kernels (see ../cuda.cmake for the lists they append to).
