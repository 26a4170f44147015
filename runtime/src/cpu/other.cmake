# Softmax, losses, layer norm, optimizer updates, data movement.
list(APPEND TIDALRT_CPU_SOURCES
  src/cpu/softmax.cpp
  src/cpu/loss.cpp
  src/cpu/layer_norm.cpp
  src/cpu/optimizer.cpp
  src/cpu/data_movement.cpp
)
