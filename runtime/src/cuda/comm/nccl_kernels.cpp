// nccl_kernels.cpp - the collectives of data-parallel training on the GPU
// (tidalrt_cuda_k_<name>; the twins of runtime/src/cpu/comm_kernels.cpp),
// over the NCCL communicator the device joined (nccl_state.h).
//
// A start kernel records its bucket's "ready" event on the compute stream,
// makes the collective stream wait for it, enqueues the collective there
// and records the bucket's "done" event after it; the backward pass goes on
// on the compute stream meanwhile. The wait kernel makes the compute stream
// wait for "done". Nothing blocks the host.
//
// - all-reduce: in place over the results (the operands are copied there
//   first where the memory plan put them elsewhere), one ncclAllReduce per
//   tensor in one NCCL group: ncclSum for divisor 1, ncclAvg for the number
//   of ranks, else a pre-multiplied sum by 1 / divisor;
// - all-gather: each tensor's chunk is copied into its staging buffer (ranks
//   * chunk floats, outside the arena) at this rank's place, gathered in
//   place there, and the wait copies the first `output` floats out;
// - reduce-scatter: each input is copied into its staging buffer and
//   zero-padded to ranks * chunk floats, reduced-scattered in place, and
//   the wait copies this rank's chunk out.
//
// NCCL's sums are deterministic for a fixed number of ranks and GPUs (every
// rank gets the same bits, run after run), but they are not added in rank
// order as the MPI backend's are: a run on N GPUs follows the N-rank cpu or
// sim run up to float32 summation order.
#include "list.h"
#include "nccl_state.h"

#include "../cuda_context.h"
#include "../cuda_device.h"

using namespace tidalrt;
using namespace tidalrt::cuda;

namespace {

nccl_state *joined(tidalrt_context_t *ctx, int64_t ranks) {
  nccl_state *state = contextDevice(ctx)->nccl;
  if (!state)
    fail(TIDALRT_INTERNAL, "the CUDA device did not join the data-parallel run "
                           "(tidalrt_device_join_comm)");
  if (state->size != ranks)
    fail(TIDALRT_INVALID_ARGUMENT,
         "the step was compiled for %lld ranks (tidalc --ranks) but runs "
         "on %d",
         (long long)ranks, state->size);
  if (!state->comm)
    fail(TIDALRT_UNAVAILABLE,
         "rank %d of %d: an earlier collective failed or timed out, so the "
         "ranks are out of step",
         state->rank, state->size);
  return state;
}

nccl_bucket &bucketOf(nccl_state *state, nccl_kind kind, int64_t id) {
  nccl_bucket &b = state->buckets[{static_cast<int>(kind), id}];
  if (!b.ready) {
    check(cudaEventCreateWithFlags(&b.ready, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
    check(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
  }
  return b;
}

// The bucket's staging buffer of `floats`: reserved while preparing,
// allocated at the first run (before the step's kernels use it).
float *staging(tidalrt_context_t *ctx, nccl_bucket &b, size_t floats) {
  if (preparing(ctx)) {
    if (floats > b.staging_needed)
      b.staging_needed = floats;
    return nullptr;
  }
  if (floats > b.staging_floats) {
    size_t size = floats > b.staging_needed ? floats : b.staging_needed;
    check(cudaStreamSynchronize(currentStream(ctx)), "cudaStreamSynchronize");
    check(cudaFree(b.staging), "cudaFree (collective staging)");
    b.staging = nullptr;
    b.staging_floats = 0;
    check(
        cudaMalloc(reinterpret_cast<void **>(&b.staging), size * sizeof(float)),
        "cudaMalloc (collective staging)");
    b.staging_floats = size;
  }
  return b.staging;
}

// Lays out the bucket's staging buffer for an all-gather or a
// reduce-scatter: per tensor, `ranks` chunks of chunk(i) floats covering
// the whole(i) floats of the full tensor (the last chunk cut or padded).
// Returns the buffer (nullptr while preparing).
template <class Chunk, class Whole>
float *stageBucket(tidalrt_context_t *ctx, nccl_state *state, nccl_bucket &b,
                   int n, Chunk chunk, Whole whole) {
  const int64_t ranks = state->size;
  b.offsets.assign(n, 0);
  b.chunks.assign(n, 0);
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t c = chunk(i), w = whole(i);
    if (w > c * ranks || w <= c * (ranks - 1))
      fail(TIDALRT_INTERNAL, "tensor %d: %lld elements in %lld chunks of %lld",
           i, (long long)w, (long long)ranks, (long long)c);
    b.offsets[i] = total;
    b.chunks[i] = (uint64_t)c;
    total += (size_t)(c * ranks);
  }
  return staging(ctx, b, total);
}

// Tensor i's full extent in the bucket's staging buffer, and this rank's
// chunk of it.
float *stagedWhole(const nccl_bucket &b, int i) {
  return b.staging + b.offsets[i];
}
float *stagedMine(const nccl_state *state, const nccl_bucket &b, int i) {
  return stagedWhole(b, i) + state->rank * b.chunks[i];
}

// The reduction that divides the sum by `divisor`.
ncclRedOp_t reduction(nccl_state *state, int64_t divisor) {
  if (divisor < 1)
    fail(TIDALRT_INTERNAL, "divisor %lld", (long long)divisor);
  if (divisor == 1)
    return ncclSum;
  if (divisor == state->size)
    return ncclAvg;
  auto found = state->scaled_sums.find(divisor);
  if (found != state->scaled_sums.end())
    return found->second;
  float scale = 1.0f / static_cast<float>(divisor);
  ncclRedOp_t op;
  nccl_settle(state,
              ncclRedOpCreatePreMulSum(&op, &scale, ncclFloat32,
                                       ncclScalarHostImmediate, state->comm),
              "ncclRedOpCreatePreMulSum");
  state->scaled_sums[divisor] = op;
  return op;
}

void copyOnStream(tidalrt_context_t *ctx, void *dst, const void *src,
                  size_t bytes) {
  if (bytes && dst != src)
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                          currentStream(ctx)),
          "cudaMemcpyAsync");
}

int pairs(OpCall &op) {
  if (op.numTensors % 2 != 0)
    fail(TIDALRT_INTERNAL, "%d tensors: expected operands and results in pairs",
         op.numTensors);
  for (int i = 0; i < op.numTensors; ++i)
    if (op[i].type != TIDALRT_ELEMENT_TYPE_F32)
      fail(TIDALRT_INTERNAL, "tensor %d: expected float32", i);
  return op.numTensors / 2;
}

// Hands the bucket to the collective stream once the compute stream has
// reached this point.
void beginCollective(tidalrt_context_t *ctx, nccl_state *state, nccl_bucket &b,
                     int64_t id) {
  if (b.started)
    fail(TIDALRT_INTERNAL, "bucket %lld started twice without a wait",
         (long long)id);
  check(cudaEventRecord(b.ready, currentStream(ctx)), "cudaEventRecord");
  check(cudaStreamWaitEvent(state->stream, b.ready, 0), "cudaStreamWaitEvent");
  nccl_settle(state, ncclGroupStart(), "ncclGroupStart");
}

void endCollective(nccl_state *state, nccl_bucket &b, const char *what) {
  nccl_settle(state, ncclGroupEnd(), what);
  check(cudaEventRecord(b.done, state->stream), "cudaEventRecord");
  b.started = true;
}

// The wait kernels: the compute stream waits for the bucket; `unstage`
// then copies the staged results into the operands (the start's results).
template <class Unstage>
tidalrt_status_t waitKernel(tidalrt_context_t *ctx, const int64_t *desc,
                            void *const *buffers, const char *name,
                            nccl_kind kind, Unstage unstage) {
  return runKernel(ctx, desc, buffers, name, [&](OpCall &op) {
    const int n = pairs(op);
    nccl_state *state = contextDevice(ctx)->nccl;
    if (!state)
      fail(TIDALRT_INTERNAL, "the CUDA device did not join the data-parallel "
                             "run (tidalrt_device_join_comm)");
    const int64_t id = op.getInt(0);
    nccl_bucket &b = bucketOf(state, kind, id);
    if (preparing(ctx))
      return ok();
    if (!b.started)
      fail(TIDALRT_INTERNAL, "bucket %lld was not started", (long long)id);
    if (!b.offsets.empty() && (int)b.offsets.size() != n)
      fail(TIDALRT_INTERNAL, "%d tensors, started with %d", n,
           (int)b.offsets.size());
    b.started = false;
    check(cudaStreamWaitEvent(currentStream(ctx), b.done, 0),
          "cudaStreamWaitEvent");
    unstage(op, n, b);
    for (int i = 0; i < n; ++i)
      copyOnStream(ctx, op[n + i].data, op[i].data, op[i].bytes());
    return ok();
  });
}

} // namespace

extern "C" tidalrt_status_t
tidalrt_cuda_k_all_reduce_start(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "all_reduce_start", [&](OpCall &op) {
    const int n = pairs(op);
    for (int i = 0; i < n; ++i)
      if (op[i].numel() != op[n + i].numel())
        fail(TIDALRT_INTERNAL, "tensor %d: operand and result sizes differ", i);
    // Attributes in ODS name order: bucket, divisor, ranks.
    const int64_t id = op.getInt(0), divisor = op.getInt(1);
    nccl_state *state = joined(ctx, op.getInt(2));
    nccl_bucket &b = bucketOf(state, nccl_kind::ALL_REDUCE, id);
    ncclRedOp_t sum = reduction(state, divisor);
    if (preparing(ctx))
      return ok();
    for (int i = 0; i < n; ++i)
      copyOnStream(ctx, op[n + i].data, op[i].data, op[i].bytes());
    beginCollective(ctx, state, b, id);
    for (int i = 0; i < n; ++i)
      nccl_settle(state,
                  ncclAllReduce(op[n + i].data, op[n + i].data,
                                (size_t)op[n + i].numel(), ncclFloat32, sum,
                                state->comm, state->stream),
                  "ncclAllReduce");
    endCollective(state, b, "ncclAllReduce");
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_all_reduce_wait(tidalrt_context_t *ctx, const int64_t *desc,
                               void *const *buffers) {
  return waitKernel(ctx, desc, buffers, "all_reduce_wait",
                    nccl_kind::ALL_REDUCE, [](OpCall &, int, nccl_bucket &) {});
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_all_gather_start(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "all_gather_start", [&](OpCall &op) {
    const int n = pairs(op);
    // Attributes: bucket, ranks.
    const int64_t id = op.getInt(0);
    nccl_state *state = joined(ctx, op.getInt(1));
    nccl_bucket &b = bucketOf(state, nccl_kind::ALL_GATHER, id);
    // Chunks in, full tensors out.
    stageBucket(
        ctx, state, b, n, [&](int i) { return op[i].numel(); },
        [&](int i) { return op[n + i].numel(); });
    if (preparing(ctx))
      return ok();
    // The chunks may be reused as soon as this returns: stage them now.
    for (int i = 0; i < n; ++i)
      copyOnStream(ctx, stagedMine(state, b, i), op[i].data, op[i].bytes());
    beginCollective(ctx, state, b, id);
    for (int i = 0; i < n; ++i)
      nccl_settle(state,
                  ncclAllGather(stagedMine(state, b, i), stagedWhole(b, i),
                                (size_t)b.chunks[i], ncclFloat32, state->comm,
                                state->stream),
                  "ncclAllGather");
    endCollective(state, b, "ncclAllGather");
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_all_gather_wait(tidalrt_context_t *ctx, const int64_t *desc,
                               void *const *buffers) {
  return waitKernel(
      ctx, desc, buffers, "all_gather_wait", nccl_kind::ALL_GATHER,
      [&](OpCall &op, int n, nccl_bucket &b) {
        for (int i = 0; i < n; ++i)
          copyOnStream(ctx, op[i].data, stagedWhole(b, i), op[i].bytes());
      });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_reduce_scatter_start(tidalrt_context_t *ctx, const int64_t *desc,
                                    void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_scatter_start", [&](OpCall &op) {
    const int n = pairs(op);
    // Attributes: bucket, divisor, ranks.
    const int64_t id = op.getInt(0), divisor = op.getInt(1);
    nccl_state *state = joined(ctx, op.getInt(2));
    nccl_bucket &b = bucketOf(state, nccl_kind::REDUCE_SCATTER, id);
    ncclRedOp_t sum = reduction(state, divisor);
    // Full tensors in, chunks out.
    stageBucket(
        ctx, state, b, n, [&](int i) { return op[n + i].numel(); },
        [&](int i) { return op[i].numel(); });
    if (preparing(ctx))
      return ok();
    for (int i = 0; i < n; ++i) {
      float *at = stagedWhole(b, i);
      copyOnStream(ctx, at, op[i].data, op[i].bytes());
      size_t pad = (size_t)(b.chunks[i] * state->size - op[i].numel());
      if (pad)
        check(cudaMemsetAsync(at + op[i].numel(), 0, pad * sizeof(float),
                              currentStream(ctx)),
              "cudaMemsetAsync");
    }
    beginCollective(ctx, state, b, id);
    for (int i = 0; i < n; ++i)
      nccl_settle(state,
                  ncclReduceScatter(stagedWhole(b, i), stagedMine(state, b, i),
                                    (size_t)b.chunks[i], ncclFloat32, sum,
                                    state->comm, state->stream),
                  "ncclReduceScatter");
    endCollective(state, b, "ncclReduceScatter");
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_reduce_scatter_wait(tidalrt_context_t *ctx, const int64_t *desc,
                                   void *const *buffers) {
  return waitKernel(
      ctx, desc, buffers, "reduce_scatter_wait", nccl_kind::REDUCE_SCATTER,
      [&](OpCall &op, int n, nccl_bucket &b) {
        const nccl_state *state = contextDevice(ctx)->nccl;
        for (int i = 0; i < n; ++i)
          copyOnStream(ctx, op[i].data, stagedMine(state, b, i), op[i].bytes());
      });
}
