// comm_kernels.cpp - the gradient all-reduce of data-parallel training:
// tidal.all_reduce_start hands a bucket of float32 tensors to the context's
// communicator (tidalrt/comm.h), which sums them over the ranks on its own
// thread while the backward pass goes on; tidal.all_reduce_wait, before the
// bucket's optimizer updates, waits for it. The results are written in place
// over the operands when the memory plan allows (it does unless in-place
// reuse is off); otherwise the operands are copied first. With a sharded
// optimizer (tidalc --shard optimizer), tidal.shard takes this rank's chunk
// of a tensor and tidal.all_gather_start/wait assemble the updated
// parameters from every rank's chunks.
#include "kernel.h"

#include "tidalrt/comm.h"

#include <algorithm>

using namespace tidalrt;

namespace {

// Attributes, in ODS name order.
enum StartAttr { kBucket = 0, kDivisor = 1, kRanks = 2 };

// Copies operand i to result i where they are different bytes.
void copyOperands(OpCall &op, int n) {
  for (int i = 0; i < n; ++i)
    if (op[n + i].data != op[i].data)
      std::memcpy(op[n + i].data, op[i].data, op[i].bytes());
}

int64_t worldSize(tidalrt_context_t *ctx) {
  tidalrt_comm_t *comm = tidalrt_context_comm(ctx);
  return comm ? tidalrt_comm_size(comm) : 1;
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_all_reduce_start(tidalrt_context_t *ctx,
                                                       const int64_t *desc,
                                                       void *const *buffers) {
  return runKernel(ctx, desc, buffers, "all_reduce_start", [&](OpCall &op) {
    if (op.numTensors % 2 != 0)
      fail(TIDALRT_INTERNAL,
           "%d tensors: expected operands and results in "
           "pairs",
           op.numTensors);
    const int n = op.numTensors / 2;
    for (int i = 0; i < n; ++i)
      if (op[i].type != TIDALRT_ELEMENT_TYPE_F32 ||
          op[n + i].type != TIDALRT_ELEMENT_TYPE_F32 ||
          op[i].numel() != op[n + i].numel())
        fail(TIDALRT_INTERNAL,
             "tensor %d: expected float32 operand and "
             "result of one size",
             i);
    const int64_t bucket = op.getInt(kBucket);
    const int64_t divisor = op.getInt(kDivisor);
    const int64_t ranks = op.getInt(kRanks);
    if (divisor < 1)
      fail(TIDALRT_INTERNAL, "divisor %lld", (long long)divisor);
    if (worldSize(ctx) != ranks)
      fail(TIDALRT_INVALID_ARGUMENT,
           "the step was compiled for %lld ranks (tidalc --ranks) but runs "
           "on %lld",
           (long long)ranks, (long long)worldSize(ctx));
    uint64_t &slot = commTicket(ctx, bucket);
    if (preparing(ctx))
      return ok();
    if (slot != kNoTicket)
      fail(TIDALRT_INTERNAL, "bucket %lld started twice without a wait",
           (long long)bucket);
    copyOperands(op, n);
    float *segments[OpCall::kMaxTensors];
    uint64_t counts[OpCall::kMaxTensors];
    for (int i = 0; i < n; ++i) {
      segments[i] = op[n + i].f32();
      counts[i] = (uint64_t)op[n + i].numel();
    }
    tidalrt_comm_t *comm = tidalrt_context_comm(ctx);
    if (!comm) {
      // One process and no communicator: the mean of one rank.
      for (int i = 0; i < n; ++i)
        for (uint64_t k = 0; k < counts[i]; ++k)
          segments[i][k] /= (float)divisor;
      slot = UINT64_MAX;
      return ok();
    }
    uint64_t ticket = 0;
    if (tidalrt_status_t s = tidalrt_comm_allreduce_f32_start(
            comm, segments, counts, (uint64_t)n, (uint64_t)divisor, &ticket))
      return s;
    slot = ticket;
    return ok();
  });
}

namespace {

// Waits for the bucket's started collective, then copies results that are
// not written over their operands.
tidalrt_status_t waitBucket(tidalrt_context_t *ctx, const int64_t *desc,
                            void *const *buffers, const char *name) {
  return runKernel(ctx, desc, buffers, name, [&](OpCall &op) {
    if (op.numTensors % 2 != 0)
      fail(TIDALRT_INTERNAL,
           "%d tensors: expected operands and results in pairs", op.numTensors);
    const int n = op.numTensors / 2;
    uint64_t &slot = commTicket(ctx, op.getInt(0));
    if (preparing(ctx))
      return ok();
    if (slot == kNoTicket)
      fail(TIDALRT_INTERNAL, "bucket %lld was not started",
           (long long)op.getInt(0));
    uint64_t ticket = slot;
    slot = kNoTicket;
    if (ticket != UINT64_MAX)
      if (tidalrt_status_t s =
              tidalrt_comm_wait(tidalrt_context_comm(ctx), ticket))
        return s;
    copyOperands(op, n);
    return ok();
  });
}

// This process's rank, checking that the run has the ranks the step was
// compiled for.
int64_t checkedRank(tidalrt_context_t *ctx, int64_t ranks) {
  if (worldSize(ctx) != ranks)
    fail(TIDALRT_INVALID_ARGUMENT,
         "the step was compiled for %lld ranks (tidalc --ranks) but runs "
         "on %lld",
         (long long)ranks, (long long)worldSize(ctx));
  tidalrt_comm_t *comm = tidalrt_context_comm(ctx);
  return comm ? tidalrt_comm_rank(comm) : 0;
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_all_reduce_wait(tidalrt_context_t *ctx,
                                                      const int64_t *desc,
                                                      void *const *buffers) {
  return waitBucket(ctx, desc, buffers, "all_reduce_wait");
}

extern "C" tidalrt_status_t tidalrt_k_all_gather_wait(tidalrt_context_t *ctx,
                                                      const int64_t *desc,
                                                      void *const *buffers) {
  return waitBucket(ctx, desc, buffers, "all_gather_wait");
}

// tidal.shard: this rank's chunk of the flattened input, zero-padded.
extern "C" tidalrt_status_t tidalrt_k_shard(tidalrt_context_t *ctx,
                                            const int64_t *desc,
                                            void *const *buffers) {
  return runKernel(ctx, desc, buffers, "shard", [&](OpCall &op) {
    if (op.numTensors != 2 || op[0].type != TIDALRT_ELEMENT_TYPE_F32 ||
        op[1].type != TIDALRT_ELEMENT_TYPE_F32)
      fail(TIDALRT_INTERNAL, "expected a float32 input and result");
    const int64_t ranks = op.getInt(0);
    const int64_t rank = checkedRank(ctx, ranks);
    const int64_t n = op[0].numel(), c = op[1].numel();
    if (c * ranks < n || (c - 1) * ranks >= n)
      fail(TIDALRT_INTERNAL, "%lld elements in %lld chunks of %lld",
           (long long)n, (long long)ranks, (long long)c);
    if (preparing(ctx))
      return ok();
    const int64_t begin = std::min(n, rank * c);
    const int64_t len = std::min(c, n - begin);
    std::memmove(op[1].f32(), op[0].f32() + begin, len * sizeof(float));
    std::memset(op[1].f32() + len, 0, (c - len) * sizeof(float));
    return ok();
  });
}

// tidal.all_gather_start: every rank's chunks into the full tensors, on the
// communicator's thread.
extern "C" tidalrt_status_t tidalrt_k_all_gather_start(tidalrt_context_t *ctx,
                                                       const int64_t *desc,
                                                       void *const *buffers) {
  return runKernel(ctx, desc, buffers, "all_gather_start", [&](OpCall &op) {
    if (op.numTensors % 2 != 0)
      fail(TIDALRT_INTERNAL,
           "%d tensors: expected operands and results in pairs", op.numTensors);
    const int n = op.numTensors / 2;
    const int64_t bucket = op.getInt(0);
    const int64_t ranks = op.getInt(1);
    checkedRank(ctx, ranks);
    const float *chunks[OpCall::kMaxTensors];
    float *outputs[OpCall::kMaxTensors];
    uint64_t chunkCounts[OpCall::kMaxTensors], counts[OpCall::kMaxTensors];
    for (int i = 0; i < n; ++i) {
      if (op[i].type != TIDALRT_ELEMENT_TYPE_F32 ||
          op[n + i].type != TIDALRT_ELEMENT_TYPE_F32)
        fail(TIDALRT_INTERNAL, "tensor %d: expected float32", i);
      chunks[i] = op[i].f32();
      outputs[i] = op[n + i].f32();
      chunkCounts[i] = (uint64_t)op[i].numel();
      counts[i] = (uint64_t)op[n + i].numel();
    }
    uint64_t &slot = commTicket(ctx, bucket);
    if (preparing(ctx))
      return ok();
    if (slot != kNoTicket)
      fail(TIDALRT_INTERNAL, "bucket %lld started twice without a wait",
           (long long)bucket);
    tidalrt_comm_t *comm = tidalrt_context_comm(ctx);
    if (!comm) {
      for (int i = 0; i < n; ++i)
        std::memmove(outputs[i], chunks[i], counts[i] * sizeof(float));
      slot = UINT64_MAX;
      return ok();
    }
    uint64_t ticket = 0;
    if (tidalrt_status_t s = tidalrt_comm_allgather_f32_start(
            comm, chunks, outputs, chunkCounts, counts, (uint64_t)n, &ticket))
      return s;
    slot = ticket;
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_reduce_scatter_wait(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return waitBucket(ctx, desc, buffers, "reduce_scatter_wait");
}

// tidal.reduce_scatter_start: this rank's chunks of the rank-order sums of
// the inputs (divided), on the communicator's thread.
extern "C" tidalrt_status_t
tidalrt_k_reduce_scatter_start(tidalrt_context_t *ctx, const int64_t *desc,
                               void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_scatter_start", [&](OpCall &op) {
    if (op.numTensors % 2 != 0)
      fail(TIDALRT_INTERNAL,
           "%d tensors: expected operands and results in pairs", op.numTensors);
    const int n = op.numTensors / 2;
    // Attributes in ODS name order: bucket, divisor, ranks.
    const int64_t bucket = op.getInt(0);
    const int64_t divisor = op.getInt(1);
    const int64_t ranks = op.getInt(2);
    checkedRank(ctx, ranks);
    if (divisor < 1)
      fail(TIDALRT_INTERNAL, "divisor %lld", (long long)divisor);
    const float *inputs[OpCall::kMaxTensors];
    float *chunks[OpCall::kMaxTensors];
    uint64_t counts[OpCall::kMaxTensors], chunkCounts[OpCall::kMaxTensors];
    for (int i = 0; i < n; ++i) {
      if (op[i].type != TIDALRT_ELEMENT_TYPE_F32 ||
          op[n + i].type != TIDALRT_ELEMENT_TYPE_F32)
        fail(TIDALRT_INTERNAL, "tensor %d: expected float32", i);
      inputs[i] = op[i].f32();
      chunks[i] = op[n + i].f32();
      counts[i] = (uint64_t)op[i].numel();
      chunkCounts[i] = (uint64_t)op[n + i].numel();
    }
    uint64_t &slot = commTicket(ctx, bucket);
    if (preparing(ctx))
      return ok();
    if (slot != kNoTicket)
      fail(TIDALRT_INTERNAL, "bucket %lld started twice without a wait",
           (long long)bucket);
    tidalrt_comm_t *comm = tidalrt_context_comm(ctx);
    if (!comm) {
      for (int i = 0; i < n; ++i)
        for (uint64_t k = 0; k < chunkCounts[i]; ++k)
          chunks[i][k] = inputs[i][k] / (float)divisor;
      slot = UINT64_MAX;
      return ok();
    }
    uint64_t ticket = 0;
    if (tidalrt_status_t s = tidalrt_comm_reduce_scatter_f32_start(
            comm, inputs, chunks, counts, chunkCounts, (uint64_t)n,
            (uint64_t)divisor, &ticket))
      return s;
    slot = ticket;
    return ok();
  });
}
