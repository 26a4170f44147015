// comm_kernels.cpp - the gradient all-reduce of data-parallel training:
// tidal.all_reduce_start hands a bucket of float32 tensors to the context's
// communicator (tidalrt/comm.h), which sums them over the ranks on its own
// thread while the backward pass goes on; tidal.all_reduce_wait, before the
// bucket's optimizer updates, waits for it. The results are written in place
// over the operands when the memory plan allows (it does unless in-place
// reuse is off); otherwise the operands are copied first.
#include "kernel.h"

#include "tidalrt/comm.h"

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

extern "C" tidalrt_status_t tidalrt_k_all_reduce_wait(tidalrt_context_t *ctx,
                                                      const int64_t *desc,
                                                      void *const *buffers) {
  return runKernel(ctx, desc, buffers, "all_reduce_wait", [&](OpCall &op) {
    if (op.numTensors % 2 != 0)
      fail(TIDALRT_INTERNAL,
           "%d tensors: expected operands and results in "
           "pairs",
           op.numTensors);
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
