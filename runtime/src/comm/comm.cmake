# Communicators (tidalrt/comm.h): the core (single process, dispatch) in
# tidalrt, and the MPI backend in its own library, tidalrt_mpi, built when
# CMake finds MPI (Debian: libopenmpi-dev) and linked only into programs
# that run on several processes.
list(APPEND TIDALRT_COMM_SOURCES src/comm/comm.cpp src/comm/comm_async.cpp)
list(APPEND TIDALRT_COMM_TEST_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test/comm_test.cpp)

option(TIDAL_ENABLE_MPI "Build the MPI backend when MPI is found" ON)
set(TIDALRT_HAVE_MPI OFF)
if(TIDAL_ENABLE_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(TIDALRT_HAVE_MPI ON)
  endif()
endif()
message(STATUS "tidalrt: MPI backend ${TIDALRT_HAVE_MPI}")
