// The MPI backend of communicators (tidalrt/comm.h), run by ctest under
// mpirun on 1, 2 and 4 ranks (runtime/test/CMakeLists.txt): ranks and
// sizes, the all-reduce's rank-order sum (bit for bit, on every rank, at
// sizes that split unevenly), broadcasts from every root, a barrier, and a
// collective that one rank never joins (its own ctest: the others get
// UNAVAILABLE after the timeout and abort the run).
#include "kernel_test_util.h"

#include "tidalrt/comm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

// The emulated CUDA twin of tidal.shard (runtime/src/cuda/comm/shard.h).
extern "C" tidalrt_status_t tidalrt_emu_k_shard(tidalrt_context_t *context,
                                                const int64_t *desc,
                                                void *const *buffers);

namespace {

tidalrt_comm_t *world(double timeout = 60) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_MPI, timeout};
  tidalrt_comm_t *comm = nullptr;
  tidalrt_status_t status = tidalrt_comm_create(&options, &comm);
  if (status) {
    ADD_FAILURE() << tidalrt_status_message(status);
    tidalrt_status_free(status);
  }
  return comm;
}

std::string message_of(tidalrt_status_t status) {
  std::string text = status ? tidalrt_status_message(status) : "";
  tidalrt_status_free(status);
  return text;
}

// Values whose float sum depends on the order of the additions (on 4
// ranks, 909 of the first 1000 differ between rank order and reverse or
// pairwise order; two summands commute, so 2 ranks cannot tell).
float value(int64_t rank, uint64_t i) {
  float big = (i + rank) % 2 ? 3e7f : 1.0f;
  float sign = (rank / 2) % 2 ? -1.0f : 1.0f;
  return sign * big * (1.0f + float((i * 7 + rank * 3) % 11) / 16) +
         float(rank + 1) * 0.37f;
}

TEST(CommMpi, RankAndSizeFollowTheLauncher) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  EXPECT_STREQ(tidalrt_comm_backend(comm), "mpi");
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(tidalrt_comm_size(comm), size ? std::atoll(size) : 1);
  EXPECT_EQ(tidalrt_comm_rank(comm), rank ? std::atoll(rank) : 0);
  tidalrt_comm_free(comm);
}

TEST(CommMpi, AllReduceAddsInRankOrderOnEveryRank) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  for (uint64_t count : {1ull, 3ull, 5ull, 1000ull, (1ull << 20) + 7}) {
    SCOPED_TRACE("count " + std::to_string(count));
    std::vector<float> data(count), expected(count);
    for (uint64_t i = 0; i < count; ++i) {
      data[i] = value(rank, i);
      float sum = value(0, i);
      for (int64_t r = 1; r < size; ++r)
        sum += value(r, i);
      expected[i] = sum;
    }
    ASSERT_EQ(message_of(tidalrt_comm_allreduce_f32(comm, data.data(), count)),
              "");
    size_t differ = 0;
    for (uint64_t i = 0; i < count; ++i)
      differ += data[i] != expected[i];
    EXPECT_EQ(differ, 0u) << "elements not bitwise equal to the rank-order sum";
  }
  tidalrt_comm_free(comm);
}

// Buckets started back to back run in order on the communicator's thread
// while this one goes on; each segment gets the rank-order sum divided by
// the divisor, bit for bit, whatever the bucketing; a synchronous
// collective after them waits for them.
TEST(CommMpi, StartedAllReducesOverlapAndMatchTheSynchronousSum) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  const std::vector<uint64_t> sizes = {5, 1000, 1, 70001, 33, 4096};
  std::vector<std::vector<float>> data(sizes.size());
  for (size_t t = 0; t < sizes.size(); ++t)
    for (uint64_t i = 0; i < sizes[t]; ++i)
      data[t].push_back(value(rank, i + 13 * t));
  tidalrt_comm_record_events(comm, 1);
  // Buckets {0,1}, {2}, {3,4,5}; the divisor is the number of ranks.
  const std::vector<std::vector<size_t>> buckets = {{0, 1}, {2}, {3, 4, 5}};
  std::vector<uint64_t> tickets;
  for (const auto &bucket : buckets) {
    std::vector<float *> segments;
    std::vector<uint64_t> counts;
    for (size_t t : bucket) {
      segments.push_back(data[t].data());
      counts.push_back(sizes[t]);
    }
    uint64_t ticket = 0;
    ASSERT_EQ(message_of(tidalrt_comm_allreduce_f32_start(
                  comm, segments.data(), counts.data(), segments.size(),
                  static_cast<uint64_t>(size), &ticket)),
              "");
    tickets.push_back(ticket);
  }
  float one = 1.0f;
  ASSERT_EQ(message_of(tidalrt_comm_allreduce_f32(comm, &one, 1)), "");
  EXPECT_EQ(one, float(size));
  for (size_t k = tickets.size(); k-- > 0;)
    ASSERT_EQ(message_of(tidalrt_comm_wait(comm, tickets[k])), "");
  tidalrt_comm_stats_t stats;
  tidalrt_comm_stats(comm, &stats);
  if (size > 1) {
    uint64_t floats = 0;
    for (uint64_t n : sizes)
      floats += n;
    EXPECT_EQ(stats.collectives, 3u);
    EXPECT_EQ(stats.bytes, floats * sizeof(float));
    EXPECT_GT(stats.busy_seconds, 0.0);
    EXPECT_GE(stats.wait_seconds, 0.0);
    // One event per bucket, in order, on the steady clock.
    tidalrt_comm_event_t events[4];
    ASSERT_EQ(tidalrt_comm_take_events(comm, events, 4), 3u);
    EXPECT_EQ(events[0].bytes, (sizes[0] + sizes[1]) * sizeof(float));
    EXPECT_EQ(events[1].bytes, sizes[2] * sizeof(float));
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(events[k].start_seconds, events[k].end_seconds);
      if (k) {
        EXPECT_LE(events[k - 1].end_seconds, events[k].start_seconds);
      }
    }
    EXPECT_EQ(tidalrt_comm_take_events(comm, events, 4), 0u);
  } else {
    EXPECT_EQ(stats.collectives, 0u) << "one rank: nothing to send";
  }
  size_t differ = 0;
  for (size_t t = 0; t < sizes.size(); ++t)
    for (uint64_t i = 0; i < sizes[t]; ++i) {
      float sum = value(0, i + 13 * t);
      for (int64_t r = 1; r < size; ++r)
        sum += value(r, i + 13 * t);
      differ += data[t][i] != sum / float(size);
    }
  EXPECT_EQ(differ, 0u);
  tidalrt_comm_free(comm);
}

// The generated code's view: all_reduce_start / all_reduce_wait kernels on
// a context whose communicator is the run's; two buckets in flight at once.
TEST(CommMpi, AllReduceKernelsAverageOverTheRanks) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  tidalrt_context_options_t options = {4, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_EQ(message_of(tidalrt_context_create(&options, &ctx)), "");
  tidalrt_context_set_comm(ctx, comm);
  std::vector<float> a(300), b(7);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = value(rank, i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = value(rank, 500 + i);
  auto call = [&](tidalrt_kernel_fn_t kernel, int64_t index, float *data,
                  int64_t n, int64_t bucket, bool start) {
    tidalrt_test::KernelCall c(index);
    c.f32({n}, data).f32({n}, data).attrInt(bucket);
    if (start)
      c.attrInt(size).attrInt(size);
    std::vector<int64_t> d = c.descriptor();
    return message_of(kernel(ctx, d.data(), c.pointers().data()));
  };
  EXPECT_EQ(call(tidalrt_k_all_reduce_start, 0, a.data(), 300, 0, true), "");
  EXPECT_EQ(call(tidalrt_k_all_reduce_start, 1, b.data(), 7, 1, true), "");
  EXPECT_EQ(call(tidalrt_k_all_reduce_wait, 2, b.data(), 7, 1, false), "");
  EXPECT_EQ(call(tidalrt_k_all_reduce_wait, 3, a.data(), 300, 0, false), "");
  size_t differ = 0;
  for (size_t i = 0; i < a.size() + b.size(); ++i) {
    size_t at = i < a.size() ? i : 500 + (i - a.size());
    float sum = value(0, at);
    for (int64_t r = 1; r < size; ++r)
      sum += value(r, at);
    float got = i < a.size() ? a[i] : b[i - a.size()];
    differ += got != sum / float(size);
  }
  EXPECT_EQ(differ, 0u);
  tidalrt_context_free(ctx);
  tidalrt_comm_free(comm);
}

// A sharded optimizer's view: every rank takes its chunk of two tensors
// (tidal.shard; the last chunk short and zero-padded), changes it, and the
// all-gather assembles the full tensors on every rank.
TEST(CommMpi, ShardAndAllGatherKernelsReassembleTensors) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  tidalrt_context_options_t options = {4, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_EQ(message_of(tidalrt_context_create(&options, &ctx)), "");
  tidalrt_context_set_comm(ctx, comm);
  for (int64_t n : {int64_t(1), int64_t(7), int64_t(4096 + 3)}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t c = (n + size - 1) / size, c2 = (2 * n + size - 1) / size;
    std::vector<float> a(n), b(2 * n), ca(c, -1.0f), cb(c2, -1.0f);
    for (int64_t i = 0; i < n; ++i)
      a[i] = float(i);
    for (int64_t i = 0; i < 2 * n; ++i)
      b[i] = float(-i);
    auto shard = [&](std::vector<float> &full, std::vector<float> &chunk) {
      tidalrt_test::KernelCall call(0);
      call.f32({int64_t(full.size())}, full.data())
          .f32({int64_t(chunk.size())}, chunk.data())
          .attrInt(size);
      std::vector<int64_t> d = call.descriptor();
      return message_of(tidalrt_k_shard(ctx, d.data(), call.pointers().data()));
    };
    ASSERT_EQ(shard(a, ca), "");
    ASSERT_EQ(shard(b, cb), "");
    // The emulated CUDA twin (runtime/src/cuda/comm/shard.h) takes the same
    // chunk, padding included.
    for (auto *pair : {&a, &b}) {
      std::vector<float> &full = *pair;
      std::vector<float> emulated(&full == &a ? c : c2, -1.0f);
      tidalrt_test::KernelCall call(0);
      call.f32({int64_t(full.size())}, full.data())
          .f32({int64_t(emulated.size())}, emulated.data())
          .attrInt(size);
      std::vector<int64_t> d = call.descriptor();
      ASSERT_EQ(message_of(
                    tidalrt_emu_k_shard(ctx, d.data(), call.pointers().data())),
                "");
      EXPECT_EQ(emulated, &full == &a ? ca : cb);
    }
    for (int64_t i = 0; i < c; ++i)
      EXPECT_EQ(ca[i], rank * c + i < n ? float(rank * c + i) : 0.0f);
    for (float &x : ca)
      x += 1000.0f; // this rank's update
    for (float &x : cb)
      x -= 1000.0f;
    std::vector<float> outA(n, 0.0f), outB(2 * n, 0.0f);
    tidalrt_test::KernelCall start(1), wait(2);
    start.f32({int64_t(ca.size())}, ca.data())
        .f32({int64_t(cb.size())}, cb.data())
        .f32({n}, outA.data())
        .f32({2 * n}, outB.data())
        .attrInt(7)
        .attrInt(size);
    wait.f32({n}, outA.data())
        .f32({2 * n}, outB.data())
        .f32({n}, outA.data())
        .f32({2 * n}, outB.data())
        .attrInt(7);
    std::vector<int64_t> ds = start.descriptor(), dw = wait.descriptor();
    ASSERT_EQ(message_of(tidalrt_k_all_gather_start(ctx, ds.data(),
                                                    start.pointers().data())),
              "");
    ASSERT_EQ(message_of(tidalrt_k_all_gather_wait(ctx, dw.data(),
                                                   wait.pointers().data())),
              "");
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(outA[i], float(i) + 1000.0f) << i;
    for (int64_t i = 0; i < 2 * n; ++i)
      EXPECT_EQ(outB[i], float(-i) - 1000.0f) << i;
  }
  tidalrt_context_free(ctx);
  tidalrt_comm_free(comm);
}

// ZeRO stage 2's reduction: each rank gets the rank-order mean of its chunk
// of every tensor; all-gathering the chunks gives the all-reduce's result
// bit for bit.
TEST(CommMpi, ReduceScatterThenAllGatherIsTheAllReduce) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  const std::vector<uint64_t> ns = {7, 4096 + 3, 1};
  std::vector<std::vector<float>> in(ns.size()), reduced(ns.size()),
      chunk(ns.size()), gathered(ns.size());
  std::vector<const float *> inputs, chunkIn;
  std::vector<float *> chunkOut, outs;
  std::vector<uint64_t> cs;
  for (size_t t = 0; t < ns.size(); ++t) {
    for (uint64_t i = 0; i < ns[t]; ++i)
      in[t].push_back(value(rank, i + 31 * t));
    reduced[t] = in[t];
    cs.push_back((ns[t] + size - 1) / size);
    chunk[t].assign(cs[t], -1.0f);
    gathered[t].assign(ns[t], 0.0f);
  }
  for (size_t t = 0; t < ns.size(); ++t) {
    inputs.push_back(in[t].data());
    chunkOut.push_back(chunk[t].data());
    chunkIn.push_back(chunk[t].data());
    outs.push_back(gathered[t].data());
  }
  uint64_t ticket = 0;
  ASSERT_EQ(message_of(tidalrt_comm_reduce_scatter_f32_start(
                comm, inputs.data(), chunkOut.data(), ns.data(), cs.data(),
                ns.size(), static_cast<uint64_t>(size), &ticket)),
            "");
  ASSERT_EQ(message_of(tidalrt_comm_wait(comm, ticket)), "");
  ASSERT_EQ(message_of(tidalrt_comm_allgather_f32_start(
                comm, chunkIn.data(), outs.data(), cs.data(), ns.data(),
                ns.size(), &ticket)),
            "");
  ASSERT_EQ(message_of(tidalrt_comm_wait(comm, ticket)), "");
  std::vector<float *> segments;
  for (auto &r : reduced)
    segments.push_back(r.data());
  ASSERT_EQ(message_of(tidalrt_comm_allreduce_f32_start(
                comm, segments.data(), ns.data(), ns.size(),
                static_cast<uint64_t>(size), &ticket)),
            "");
  ASSERT_EQ(message_of(tidalrt_comm_wait(comm, ticket)), "");
  for (size_t t = 0; t < ns.size(); ++t)
    EXPECT_EQ(gathered[t], reduced[t]) << "tensor " << t;
  tidalrt_comm_free(comm);
}

TEST(CommMpi, BroadcastFromEveryRoot) {
  tidalrt_comm_t *comm = world();
  ASSERT_NE(comm, nullptr);
  const int64_t rank = tidalrt_comm_rank(comm), size = tidalrt_comm_size(comm);
  for (int64_t root = 0; root < size; ++root) {
    std::vector<int> data(1001, int(rank));
    ASSERT_EQ(message_of(tidalrt_comm_broadcast(
                  comm, data.data(), data.size() * sizeof(int), root)),
              "");
    EXPECT_EQ(data, std::vector<int>(1001, int(root)));
  }
  EXPECT_EQ(message_of(tidalrt_comm_barrier(comm)), "");
  tidalrt_comm_free(comm);
}

// Run alone (its own ctest): rank 1 never joins the all-reduce; rank 0
// reports UNAVAILABLE after its 2 s timeout, a second collective fails at
// once, and abort ends both with status 3.
TEST(CommMpi, DISABLED_ATimedOutCollectiveAborts) {
  tidalrt_comm_t *comm = world(2);
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(tidalrt_comm_size(comm), 2);
  if (tidalrt_comm_rank(comm) == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    std::exit(0); // never reached: rank 0 aborts the run first
  }
  float x = 1;
  auto start = std::chrono::steady_clock::now();
  tidalrt_status_t status = tidalrt_comm_allreduce_f32(comm, &x, 1);
  double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(tidalrt_status_code(status), TIDALRT_UNAVAILABLE);
  EXPECT_GE(waited, 2.0);
  EXPECT_LT(waited, 10.0);
  std::printf("%s\n", tidalrt_status_message(status));
  tidalrt_status_free(status);
  std::string again = message_of(tidalrt_comm_barrier(comm));
  EXPECT_NE(again.find("an earlier collective timed out"), std::string::npos)
      << again;
  std::fflush(stdout);
  tidalrt_comm_abort(comm, 3);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints (every rank runs every test).
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank && std::atoi(rank) != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
