// Communicators on one process (tidalrt/comm.h): rank 0 of 1, collectives
// that leave the data as it is, argument errors, and MPI where tidalrt_mpi
// is not linked in (comm_mpi_test.cpp tests the MPI backend under mpirun).
#include "test_util.h"

#include "tidalrt/comm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(Comm, SingleProcessIsRankZeroOfOne) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_SINGLE, 0};
  tidalrt_comm_t *comm = nullptr;
  ASSERT_STATUS_OK(tidalrt_comm_create(&options, &comm));
  EXPECT_STREQ(tidalrt_comm_backend(comm), "single");
  EXPECT_EQ(tidalrt_comm_rank(comm), 0);
  EXPECT_EQ(tidalrt_comm_size(comm), 1);
  std::vector<float> data = {1.5f, -2.0f, 3.25f};
  std::vector<float> before = data;
  EXPECT_STATUS_OK(tidalrt_comm_allreduce_f32(comm, data.data(), 3));
  EXPECT_EQ(data, before);
  EXPECT_STATUS_OK(tidalrt_comm_broadcast(comm, data.data(), 12, 0));
  EXPECT_EQ(data, before);
  EXPECT_STATUS_OK(tidalrt_comm_barrier(comm));
  EXPECT_STATUS_OK(tidalrt_comm_allreduce_f32(comm, nullptr, 0));
  tidalrt_comm_free(comm);
  tidalrt_comm_free(nullptr);
}

void expect_error(tidalrt_status_t status, tidalrt_status_code_t code,
                  const std::string &message) {
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(tidalrt_status_code(status), code);
  EXPECT_EQ(tidalrt_status_message(status), message);
  tidalrt_status_free(status);
}

TEST(Comm, Errors) {
  tidalrt_comm_t *comm = nullptr;
  expect_error(tidalrt_comm_create(nullptr, &comm), TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_create: NULL argument");
  tidalrt_comm_options_t bad = {static_cast<tidalrt_comm_kind_t>(9), 0};
  expect_error(tidalrt_comm_create(&bad, &comm), TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_create: unknown communicator kind 9");
  tidalrt_comm_options_t options = {TIDALRT_COMM_SINGLE, 0};
  ASSERT_STATUS_OK(tidalrt_comm_create(&options, &comm));
  expect_error(tidalrt_comm_allreduce_f32(comm, nullptr, 2),
               TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_allreduce_f32: NULL argument");
  float x = 0;
  expect_error(tidalrt_comm_broadcast(comm, &x, 4, 1), TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_broadcast: root 1 outside the 1 ranks");
  expect_error(tidalrt_comm_barrier(nullptr), TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_barrier: NULL argument");
  tidalrt_comm_free(comm);
}

// tidalrt-tests does not link tidalrt_mpi: asking for MPI says so.
TEST(Comm, MpiNeedsItsLibrary) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_MPI, 0};
  tidalrt_comm_t *comm = nullptr;
  expect_error(tidalrt_comm_create(&options, &comm), TIDALRT_UNSUPPORTED,
               "tidalrt_comm_create: this program was built without MPI "
               "(tidalrt_mpi is not linked in)");
  EXPECT_EQ(comm, nullptr);
}

TEST(Comm, UnavailableHasAName) {
  tidalrt_status_t status =
      tidalrt_status_make(TIDALRT_UNAVAILABLE, "rank %d", 1);
  EXPECT_EQ(tidalrt_status_code(status), TIDALRT_UNAVAILABLE);
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_UNAVAILABLE), "UNAVAILABLE");
  tidalrt_status_free(status);
}

} // namespace
