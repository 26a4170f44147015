// Communicators on one process (tidalrt/comm.h): rank 0 of 1, collectives
// that leave the data as it is, argument errors, and MPI where tidalrt_mpi
// is not linked in (comm_mpi_test.cpp tests the MPI backend under mpirun).
#include "test_util.h"

#include "kernel_test_util.h"

#include "tidalrt/comm.h"
#include "tidalrt/device.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

// The emulated CUDA twin of tidal.shard (runtime/src/cuda/comm/shard.h).
extern "C" tidalrt_status_t tidalrt_emu_k_shard(tidalrt_context_t *context,
                                                const int64_t *desc,
                                                void *const *buffers);

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

TEST(Comm, SingleProcessStartedAllReduceDividesAtOnce) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_SINGLE, 0};
  tidalrt_comm_t *comm = nullptr;
  ASSERT_STATUS_OK(tidalrt_comm_create(&options, &comm));
  std::vector<float> a = {1.0f, 3.0f}, b = {-6.0f};
  float *segments[] = {a.data(), b.data()};
  uint64_t counts[] = {2, 1};
  uint64_t ticket = 0;
  ASSERT_STATUS_OK(
      tidalrt_comm_allreduce_f32_start(comm, segments, counts, 2, 2, &ticket));
  EXPECT_EQ(a, (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(b, (std::vector<float>{-3.0f}));
  EXPECT_STATUS_OK(tidalrt_comm_wait(comm, ticket));
  ASSERT_STATUS_OK(
      tidalrt_comm_allreduce_f32_start(comm, segments, counts, 2, 1, &ticket));
  EXPECT_EQ(a, (std::vector<float>{0.5f, 1.5f}));
  EXPECT_STATUS_OK(tidalrt_comm_wait(comm, ticket));
  tidalrt_comm_free(comm);
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
  uint64_t ticket = 0, count = 1;
  float *segment = &x;
  expect_error(
      tidalrt_comm_allreduce_f32_start(comm, &segment, &count, 1, 0, &ticket),
      TIDALRT_INVALID_ARGUMENT, "tidalrt_comm_allreduce_f32_start: divisor 0");
  expect_error(
      tidalrt_comm_allreduce_f32_start(comm, &segment, &count, 1, 1, nullptr),
      TIDALRT_INVALID_ARGUMENT,
      "tidalrt_comm_allreduce_f32_start: NULL argument");
  expect_error(tidalrt_comm_wait(comm, 7), TIDALRT_INVALID_ARGUMENT,
               "tidalrt_comm_wait: ticket 7 was never issued");
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

// The all-reduce kernels (comm_kernels.cpp) on one process: start divides
// by the divisor (in place, or into separate results), wait completes it;
// a step compiled for more ranks than run it, and a wait without its
// start, are errors naming the kernel.
std::string runCall(tidalrt_context_t *ctx, tidalrt_kernel_fn_t kernel,
                    const tidalrt_test::KernelCall &call) {
  std::vector<int64_t> d = call.descriptor();
  tidalrt_status_t s = kernel(ctx, d.data(), call.pointers().data());
  std::string m = s ? tidalrt_status_message(s) : "";
  tidalrt_status_free(s);
  return m;
}

TEST(CommKernels, OneProcessStartAndWait) {
  for (bool withComm : {false, true}) {
    tidalrt_context_options_t options = {2, 0};
    tidalrt_context_t *ctx = nullptr;
    ASSERT_STATUS_OK(tidalrt_context_create(&options, &ctx));
    tidalrt_comm_options_t commOptions = {TIDALRT_COMM_SINGLE, 0};
    tidalrt_comm_t *comm = nullptr;
    ASSERT_STATUS_OK(tidalrt_comm_create(&commOptions, &comm));
    if (withComm)
      tidalrt_context_set_comm(ctx, comm);
    EXPECT_EQ(tidalrt_context_comm(ctx), withComm ? comm : nullptr);
    std::vector<float> g1 = {2.0f, 4.0f}, g2 = {8.0f}, r2(1, 0.0f);
    tidalrt_test::KernelCall start(0), wait(1);
    start.f32({2}, g1.data()).f32({1}, g2.data());
    start.f32({2}, g1.data()).f32({1}, r2.data());
    start.attrInt(3).attrInt(2).attrInt(1); // bucket, divisor, ranks
    wait.f32({2}, g1.data()).f32({1}, r2.data());
    wait.f32({2}, g1.data()).f32({1}, r2.data());
    wait.attrInt(3);
    EXPECT_EQ(runCall(ctx, tidalrt_k_all_reduce_wait, wait),
              "all_reduce_wait (op 1): bucket 3 was not started");
    EXPECT_EQ(runCall(ctx, tidalrt_k_all_reduce_start, start), "");
    EXPECT_EQ(runCall(ctx, tidalrt_k_all_reduce_start, start),
              "all_reduce_start (op 0): bucket 3 started twice without a "
              "wait");
    EXPECT_EQ(runCall(ctx, tidalrt_k_all_reduce_wait, wait), "");
    EXPECT_EQ(g1, (std::vector<float>{1.0f, 2.0f}));
    EXPECT_EQ(r2, (std::vector<float>{4.0f}));
    EXPECT_EQ(g2, (std::vector<float>{8.0f})) << "operand of another result";
    tidalrt_test::KernelCall twoRanks(0);
    twoRanks.f32({1}, g2.data()).f32({1}, g2.data());
    twoRanks.attrInt(0).attrInt(2).attrInt(2);
    EXPECT_EQ(runCall(ctx, tidalrt_k_all_reduce_start, twoRanks),
              "all_reduce_start (op 0): the step was compiled for 2 ranks "
              "(tidalc --ranks) but runs on 1");
    tidalrt_context_free(ctx);
    tidalrt_comm_free(comm);
  }
}

TEST(CommKernels, OneProcessShardAndGatherAreCopies) {
  tidalrt_context_options_t options = {3, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  std::vector<float> x = {1, 2, 3}, chunk(3, 0.0f), full(3, 0.0f);
  tidalrt_test::KernelCall shard(0), start(1), wait(2), wrong(0);
  shard.f32({3}, x.data()).f32({3}, chunk.data()).attrInt(1);
  EXPECT_EQ(runCall(ctx, tidalrt_k_shard, shard), "");
  EXPECT_EQ(chunk, x);
  std::vector<float> emulated(3, -1.0f);
  tidalrt_test::KernelCall emu(0);
  emu.f32({3}, x.data()).f32({3}, emulated.data()).attrInt(1);
  EXPECT_EQ(runCall(ctx, tidalrt_emu_k_shard, emu), "");
  EXPECT_EQ(emulated, x) << "the CUDA twin";
  start.f32({3}, chunk.data()).f32({3}, full.data()).attrInt(0).attrInt(1);
  wait.f32({3}, full.data()).f32({3}, full.data()).attrInt(0);
  EXPECT_EQ(runCall(ctx, tidalrt_k_all_gather_start, start), "");
  EXPECT_EQ(runCall(ctx, tidalrt_k_all_gather_wait, wait), "");
  EXPECT_EQ(full, x);
  std::vector<float> half(2, 0.0f);
  wrong.f32({3}, x.data()).f32({2}, half.data()).attrInt(2);
  EXPECT_EQ(runCall(ctx, tidalrt_k_shard, wrong),
            "shard (op 0): the step was compiled for 2 ranks (tidalc --ranks) "
            "but runs on 1");
  EXPECT_EQ(runCall(ctx, tidalrt_emu_k_shard, wrong),
            "shard (op 0): the step was compiled for 2 ranks (tidalc --ranks) "
            "but runs on 1");
  tidalrt_context_free(ctx);
}

// tidalrt_device_join_comm: HOST and SIM devices have no collectives of
// their own to join (their kernels use the context's communicator); NULL
// arguments are refused.
TEST(CommDevice, HostAndSimDevicesHaveNothingToJoin) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_SINGLE, 0};
  tidalrt_comm_t *comm = nullptr;
  ASSERT_STATUS_OK(tidalrt_comm_create(&options, &comm));
  for (tidalrt_device_kind_t kind : {TIDALRT_DEVICE_HOST, TIDALRT_DEVICE_SIM}) {
    tidalrt_device_options_t device_options = {kind, 256, 0};
    tidalrt_device_t *device = nullptr;
    ASSERT_STATUS_OK(tidalrt_device_create(&device_options, &device));
    EXPECT_STATUS_OK(tidalrt_device_join_comm(device, comm, 1.0));
    tidalrt_status_t status = tidalrt_device_join_comm(device, nullptr, 1.0);
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tidalrt_status_message(status)).find("NULL"),
              std::string::npos);
    tidalrt_status_free(status);
    tidalrt_device_free(device);
  }
  tidalrt_status_t status = tidalrt_device_join_comm(nullptr, comm, 1.0);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
  tidalrt_status_free(status);
  tidalrt_comm_free(comm);
}

} // namespace
