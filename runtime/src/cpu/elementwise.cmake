# Element-wise, activation-backward, dropout and reduction kernels.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/elementwise_binary.cpp
  src/cpu/elementwise_unary.cpp
  src/cpu/activation_backward.cpp
  src/cpu/dropout.cpp
  src/cpu/reduce.cpp
)
