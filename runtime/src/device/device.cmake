# Devices, streams and events (tidalrt/device.h): the HOST and SIM devices,
# and what generated device programs call (program_ops.cpp).
list(APPEND TIDALRT_DEVICE_SOURCES
  src/device/device.cpp
  src/device/event.cpp
  src/device/program_attach.cpp
  src/device/program_dump.cpp
  src/device/program_ops.cpp
  src/device/shared_link.cpp
  src/device/stream.cpp
)
list(APPEND TIDALRT_DEVICE_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/device_host_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/device_sim_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/device_common_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/device_program_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/device_program_host_test.cpp
)
