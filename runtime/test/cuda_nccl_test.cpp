// cuda_nccl_test.cpp - the NCCL collectives of the CUDA device
// (runtime/src/cuda/comm/): a device joined to a one-process run
// (tidalrt_device_join_comm over TIDALRT_COMM_SINGLE), and the
// all-reduce, all-gather and reduce-scatter kernels started and waited for
// through device programs, against what the CPU kernels give on one rank.
// Skips, naming the reason, without a usable GPU. Several ranks need a GPU
// each: python/test/test_data_parallel_cuda.py runs them where a machine
// has them.
#include "cuda_test_util.h"
#include "device_test_util.h"

#include "tidalrt/comm.h"
#include "tidalrt/tidalrt.h"

#include <string>
#include <vector>

using namespace tidalrt_test;

namespace {

// A CUDA device of 4 KiB joined to a one-rank run, with a context of
// `ops` ops on it.
struct joined_device {
  device_ptr device;
  tidalrt_comm_t *comm = nullptr;
  tidalrt_context_t *ctx = nullptr;
  std::vector<uint8_t> host_arena = std::vector<uint8_t>(64);

  explicit joined_device(size_t ops)
      : device(make_device(TIDALRT_DEVICE_CUDA, 4096)) {
    tidalrt_comm_options_t options = {TIDALRT_COMM_SINGLE, 30.0};
    EXPECT_EQ(message_of(tidalrt_comm_create(&options, &comm)), "");
    EXPECT_EQ(message_of(tidalrt_device_join_comm(device.get(), comm, 30.0)),
              "");
    tidalrt_context_options_t context_options = {ops, 0};
    EXPECT_EQ(message_of(tidalrt_context_create(&context_options, &ctx)), "");
    EXPECT_EQ(message_of(tidalrt_context_set_device(ctx, device.get(),
                                                    host_arena.data(), 64, 0)),
              "");
    tidalrt_context_set_comm(ctx, comm);
  }
  ~joined_device() {
    tidalrt_context_free(ctx);
    device.reset();
    tidalrt_comm_free(comm);
  }
  uint8_t *at(uint64_t offset) {
    return tidalrt_device_memory(device.get()) + offset;
  }
};

// One launch of a program: `kernel` on `call`'s tensors at `offsets`.
struct launch {
  tidalrt_kernel_fn_t kernel;
  KernelCall call;
  std::vector<uint64_t> offsets;
};

// Runs the launches as a program (prepared, then run once) and returns the
// first failure.
std::string run_program(joined_device &d, std::vector<launch> &program) {
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0)
      tidalrt_context_begin_prepare(d.ctx);
    for (size_t op = 0; op < program.size(); ++op) {
      launch &l = program[op];
      std::vector<int64_t> desc = l.call.descriptor();
      std::vector<void *> buffers;
      for (uint64_t offset : l.offsets)
        buffers.push_back(d.at(offset));
      std::string error = message_of(tidalrt_dev_launch(
          d.ctx, l.kernel, desc.data(), buffers.data(), (int64_t)buffers.size(),
          (int64_t)op, nullptr, 0, 0));
      if (!error.empty())
        return error;
    }
    if (pass == 0) {
      std::string error = message_of(tidalrt_context_end_prepare(d.ctx));
      if (!error.empty())
        return error;
    }
  }
  return message_of(tidalrt_dev_synchronize(d.ctx));
}

TEST(CudaNccl, OneRankAllReduceDividesInPlaceAndIntoOtherResults) {
  TIDALRT_REQUIRE_GPU();
  joined_device d(2);
  std::vector<float> a = {2, 4, 6}, b = {8, -10};
  ASSERT_STATUS_OK(tidalrt_device_write(d.device.get(), 0, a.data(), 12));
  ASSERT_STATUS_OK(tidalrt_device_write(d.device.get(), 256, b.data(), 8));
  // a in place (result at 0), b into another result (at 512); divisor 2.
  std::vector<launch> program(2);
  program[0].kernel = tidalrt_k_all_reduce_start;
  program[0]
      .call.f32({3}, nullptr)
      .f32({2}, nullptr)
      .f32({3}, nullptr)
      .f32({2}, nullptr)
      .attrInt(0)
      .attrInt(2)
      .attrInt(1);
  program[0].offsets = {0, 256, 0, 512};
  program[1].kernel = tidalrt_k_all_reduce_wait;
  program[1]
      .call.f32({3}, nullptr)
      .f32({2}, nullptr)
      .f32({3}, nullptr)
      .f32({2}, nullptr)
      .attrInt(0);
  program[1].offsets = {0, 512, 1024, 512};
  ASSERT_EQ(run_program(d, program), "");
  std::vector<float> ra(3), rb(2), wa(3);
  ASSERT_STATUS_OK(tidalrt_device_read(d.device.get(), 0, ra.data(), 12));
  ASSERT_STATUS_OK(tidalrt_device_read(d.device.get(), 512, rb.data(), 8));
  ASSERT_STATUS_OK(tidalrt_device_read(d.device.get(), 1024, wa.data(), 12));
  EXPECT_EQ(ra, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(rb, (std::vector<float>{4, -5}));
  EXPECT_EQ(wa, ra) << "the wait copies into a result elsewhere";
}

TEST(CudaNccl, OneRankGatherAndScatterAreStagedCopies) {
  TIDALRT_REQUIRE_GPU();
  joined_device d(4);
  std::vector<float> chunk = {1, 2, 3}, grad = {5, 6, 7};
  ASSERT_STATUS_OK(tidalrt_device_write(d.device.get(), 0, chunk.data(), 12));
  ASSERT_STATUS_OK(tidalrt_device_write(d.device.get(), 512, grad.data(), 12));
  std::vector<launch> program(4);
  program[0].kernel = tidalrt_k_all_gather_start; // bucket 3, 1 rank
  program[0].call.f32({3}, nullptr).f32({3}, nullptr).attrInt(3).attrInt(1);
  program[0].offsets = {0, 256};
  program[1].kernel = tidalrt_k_all_gather_wait;
  program[1].call.f32({3}, nullptr).f32({3}, nullptr).attrInt(3);
  program[1].offsets = {256, 256};
  program[2].kernel = tidalrt_k_reduce_scatter_start; // bucket 3, divisor 1
  program[2]
      .call.f32({3}, nullptr)
      .f32({3}, nullptr)
      .attrInt(3)
      .attrInt(1)
      .attrInt(1);
  program[2].offsets = {512, 768};
  program[3].kernel = tidalrt_k_reduce_scatter_wait;
  program[3].call.f32({3}, nullptr).f32({3}, nullptr).attrInt(3);
  program[3].offsets = {768, 1024};
  ASSERT_EQ(run_program(d, program), "");
  std::vector<float> full(3), mine(3);
  ASSERT_STATUS_OK(tidalrt_device_read(d.device.get(), 256, full.data(), 12));
  ASSERT_STATUS_OK(tidalrt_device_read(d.device.get(), 1024, mine.data(), 12));
  EXPECT_EQ(full, chunk);
  EXPECT_EQ(mine, grad);
}

TEST(CudaNccl, AStepForOtherRanksOrAnUnjoinedDeviceFails) {
  TIDALRT_REQUIRE_GPU();
  joined_device d(2);
  std::vector<launch> program(1);
  program[0].kernel = tidalrt_k_all_reduce_start;
  program[0]
      .call.f32({3}, nullptr)
      .f32({3}, nullptr)
      .attrInt(0)
      .attrInt(2)
      .attrInt(2);
  program[0].offsets = {0, 0};
  EXPECT_NE(run_program(d, program).find("compiled for 2 ranks"),
            std::string::npos);

  device_ptr alone = make_device(TIDALRT_DEVICE_CUDA, 4096);
  tidalrt_context_options_t options = {1, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  ASSERT_STATUS_OK(tidalrt_context_set_device(ctx, alone.get(), nullptr, 0, 0));
  KernelCall call;
  call.f32({3}, nullptr).f32({3}, nullptr).attrInt(0).attrInt(1).attrInt(1);
  std::vector<int64_t> desc = call.descriptor();
  uint8_t *base = tidalrt_device_memory(alone.get());
  void *buffers[2] = {base, base};
  tidalrt_context_begin_prepare(ctx);
  EXPECT_NE(
      message_of(tidalrt_dev_launch(ctx, tidalrt_k_all_reduce_start,
                                    desc.data(), buffers, 2, 0, nullptr, 0, 0))
          .find("did not join"),
      std::string::npos);
  tidalrt_status_free(tidalrt_context_end_prepare(ctx));
  tidalrt_context_free(ctx);
}

} // namespace
