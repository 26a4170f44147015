# The driver: main() of generated executables, linked after their object.
#
# Two static libraries in ${CMAKE_BINARY_DIR}/lib, linked by tidalc as
#   c++ model.o -L<build>/lib -ltidalrt_main -ltidalrt_driver -ltidalrt
#       -ldnnl -lonnx_proto -lprotobuf -fopenmp -lm -lpthread
# tidalrt_main holds main() (main.c), which calls tidalrt_driver_main with
# the program's symbols; tidalrt_driver holds everything else and does not
# refer to those symbols, so the tests link it with a fake program
# (docs/executable.md).

# ONNX's protobuf classes. The whole-project build found ONNX at the top
# level; a standalone runtime build (cmake -S runtime) finds it here.
find_package(Protobuf REQUIRED)
if(NOT TARGET onnx_proto)
  find_package(ONNX CONFIG QUIET)
endif()
if(NOT TARGET onnx_proto)
  find_library(TIDALRT_ONNX_PROTO_LIBRARY onnx_proto REQUIRED)
  find_path(TIDALRT_ONNX_INCLUDE_DIR onnx/onnx_pb.h REQUIRED)
  add_library(onnx_proto UNKNOWN IMPORTED)
  set_target_properties(onnx_proto PROPERTIES
    IMPORTED_LOCATION "${TIDALRT_ONNX_PROTO_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${TIDALRT_ONNX_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "ONNX_ML=1;ONNX_NAMESPACE=onnx"
    INTERFACE_LINK_LIBRARIES protobuf::libprotobuf)
endif()
# The manifest is JSON (nlohmann-json3-dev, header-only).
find_path(TIDALRT_NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp REQUIRED)

add_library(tidalrt_driver STATIC
  src/driver/checkpoint.cpp
  src/driver/cpu_contention.cpp
  src/driver/data.cpp
  src/driver/distributed.cpp
  src/driver/driver.cpp
  src/driver/error.cpp
  src/driver/file_util.cpp
  src/driver/forward.cpp
  src/driver/manifest.cpp
  src/driver/memory.cpp
  src/driver/nonfinite_guard.cpp
  src/driver/onnx_weights.cpp
  src/driver/options.cpp
  src/driver/program.cpp
  src/driver/step_state.cpp
  src/driver/trainer_lib.cpp
  src/driver/progress.cpp
  src/driver/step_log.cpp
  src/driver/thread_adapter.cpp
  src/driver/thread_governor.cpp
  src/driver/trace.cpp
  src/driver/trainer.cpp
)
target_include_directories(tidalrt_driver
  PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src/driver
  PRIVATE ${TIDALRT_NLOHMANN_JSON_INCLUDE_DIR})
# Debian's onnx targets may not carry these definitions to every consumer.
target_compile_definitions(tidalrt_driver PRIVATE ONNX_ML=1
  ONNX_NAMESPACE=onnx)
target_compile_options(tidalrt_driver PRIVATE ${TIDALRT_WARNINGS})
target_link_libraries(tidalrt_driver
  PUBLIC tidalrt
  PUBLIC onnx_proto protobuf::libprotobuf)

add_library(tidalrt_main STATIC src/driver/main.c)
target_compile_options(tidalrt_main PRIVATE ${TIDALRT_WARNINGS})
target_link_libraries(tidalrt_main PUBLIC tidalrt_driver)

# The entry of `tidalc --emit lib` shared libraries (lib_entry.c), linked
# whole into them in place of tidalrt_main.
add_library(tidalrt_lib STATIC src/driver/lib_entry.c)
target_compile_options(tidalrt_lib PRIVATE ${TIDALRT_WARNINGS})
target_link_libraries(tidalrt_lib PUBLIC tidalrt_driver)

set_target_properties(tidalrt_driver tidalrt_main tidalrt_lib PROPERTIES
  C_STANDARD 11
  C_STANDARD_REQUIRED ON
  C_EXTENSIONS OFF
  CXX_STANDARD 17
  CXX_STANDARD_REQUIRED ON
  CXX_EXTENSIONS OFF
  POSITION_INDEPENDENT_CODE ON
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
)

list(APPEND TIDALRT_CPU_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_options_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_train_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_eval_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_sim_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_checkpoint_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_nonfinite_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/trainer_lib_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_forward_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_device_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test/driver_thread_governor_test.cpp
)
set(TIDALRT_TEST_EXTRA_LIBS tidalrt_driver)
