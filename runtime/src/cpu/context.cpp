// context.cpp - the execution context: per-op state, scratch, seed and step.
#include "kernel.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <omp.h>
#include <vector>

#include "tidalrt/comm.h"

// tidalrt_set_parallel_grain's value, for every context.
static std::atomic<int64_t> gParallelGrain{TIDALRT_DEFAULT_PARALLEL_GRAIN};

namespace {
// One state slot per op for one team size: oneDNN plans a primitive for the
// number of threads it will run on (and keys its own cache by it), so each
// thread count the context runs at gets its own set of states.
struct StateSet {
  int threads = 0; // 0: OpenMP's own count (no tidalrt_context_set_threads)
  bool prepared = false;
  void **states = nullptr;
  void (**destroyers)(void *) = nullptr;
};

bool allocateSet(StateSet &set, size_t numOps) {
  if (!numOps)
    return true;
  set.states = static_cast<void **>(calloc(numOps, sizeof(void *)));
  set.destroyers =
      static_cast<void (**)(void *)>(calloc(numOps, sizeof(void (*)(void *))));
  return set.states && set.destroyers;
}

void freeSet(StateSet &set, size_t numOps) {
  for (size_t i = 0; i < numOps; ++i)
    if (set.states && set.states[i] && set.destroyers[i])
      set.destroyers[i](set.states[i]);
  free(set.states);
  free(set.destroyers);
  set.states = nullptr;
  set.destroyers = nullptr;
}
} // namespace

struct tidalrt_context_s {
  size_t numOps = 0;
  // Every thread count's states; `current` is the one kernels use.
  std::vector<StateSet> sets;
  size_t current = 0;
  int threads = 0; // the team size kernels run at; 0: OpenMP's own
  bool preparing = false;
  size_t scratchReserved = 0;
  size_t scratchSize = 0;
  void *scratch = nullptr;
  uint64_t seed = 0;
  uint64_t step = 0;
  // Written by the thread that runs a failing kernel (the compute stream's,
  // on a device) and read by the driver after synchronising: relaxed, so
  // that it adds no ordering that could hide a missing wait from TSan.
  std::atomic<int64_t> failedOp{-1};
  // Generated device programs' state (runtime/src/device/program_state.h).
  void *programState = nullptr;
  void (*programStateDestroy)(void *) = nullptr;
  // The run's communicator (not owned) and the ticket of each all-reduce
  // bucket in flight (comm_kernels.cpp).
  tidalrt_comm_t *comm = nullptr;
  std::vector<uint64_t> commTickets;
};

extern "C" tidalrt_status_t
tidalrt_context_create(const tidalrt_context_options_t *options,
                       tidalrt_context_t **out_context) {
  if (out_context)
    *out_context = nullptr;
  if (!options || !out_context)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_context_create: NULL argument");
  auto *ctx = new (std::nothrow) tidalrt_context_s();
  if (!ctx)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "context: out of memory");
  // oneDNN's kernels synchronise the team they were planned for
  // (omp_get_max_threads): with dynamic teams (OMP_DYNAMIC=true) a smaller
  // team waits forever at their barriers. Teams started from this thread
  // are static.
  omp_set_dynamic(0);
  // Nor may a team be asked for more threads than OMP_THREAD_LIMIT allows.
  if (omp_get_max_threads() > omp_get_thread_limit())
    omp_set_num_threads(omp_get_thread_limit());
  ctx->numOps = options->num_ops;
  ctx->seed = options->seed;
  ctx->sets.emplace_back();
  if (!allocateSet(ctx->sets[0], ctx->numOps)) {
    tidalrt_context_free(ctx);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "context: out of memory for %zu op states",
                               options->num_ops);
  }
  *out_context = ctx;
  return nullptr;
}

extern "C" void tidalrt_context_free(tidalrt_context_t *ctx) {
  if (!ctx)
    return;
  // First: it waits for device work that may still use the op states.
  if (ctx->programState && ctx->programStateDestroy)
    ctx->programStateDestroy(ctx->programState);
  for (StateSet &set : ctx->sets)
    freeSet(set, ctx->numOps);
  free(ctx->scratch);
  delete ctx;
}

extern "C" void tidalrt_context_begin_prepare(tidalrt_context_t *ctx) {
  ctx->preparing = true;
}

static bool growScratch(tidalrt_context_t *ctx, size_t bytes) {
  size_t rounded = (bytes + TIDALRT_ARRAY_ALIGNMENT - 1) /
                   TIDALRT_ARRAY_ALIGNMENT * TIDALRT_ARRAY_ALIGNMENT;
  void *p = aligned_alloc(TIDALRT_ARRAY_ALIGNMENT, rounded ? rounded : 64);
  if (!p)
    return false;
  free(ctx->scratch);
  ctx->scratch = p;
  ctx->scratchSize = bytes;
  return true;
}

extern "C" tidalrt_status_t
tidalrt_context_end_prepare(tidalrt_context_t *ctx) {
  ctx->preparing = false;
  ctx->sets[ctx->current].prepared = true;
  if (ctx->scratchReserved > ctx->scratchSize &&
      !growScratch(ctx, ctx->scratchReserved))
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "cannot allocate %zu bytes of kernel scratch",
                               ctx->scratchReserved);
  return nullptr;
}

extern "C" void tidalrt_context_set_comm(tidalrt_context_t *ctx,
                                         tidalrt_comm_t *comm) {
  ctx->comm = comm;
}

extern "C" tidalrt_comm_t *tidalrt_context_comm(const tidalrt_context_t *ctx) {
  return ctx->comm;
}

extern "C" tidalrt_status_t tidalrt_context_set_threads(tidalrt_context_t *ctx,
                                                        int threads) {
  if (threads < 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_context_set_threads: %d threads",
                               threads);
  if (threads > omp_get_thread_limit())
    threads = omp_get_thread_limit();
  size_t found = ctx->sets.size();
  for (size_t i = 0; i < ctx->sets.size(); ++i)
    if (ctx->sets[i].threads == threads)
      found = i;
  if (found == ctx->sets.size()) {
    // A first call before preparation names the count the states are
    // built for.
    StateSet &first = ctx->sets[0];
    bool built = false;
    for (size_t i = 0; i < ctx->numOps; ++i)
      built = built || first.states[i];
    if (ctx->sets.size() == 1 && first.threads == 0 && !first.prepared &&
        !built) {
      first.threads = threads;
      found = 0;
    } else {
      StateSet set;
      set.threads = threads;
      if (!allocateSet(set, ctx->numOps)) {
        freeSet(set, ctx->numOps);
        return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                   "context: out of memory for %zu op states",
                                   ctx->numOps);
      }
      ctx->sets.push_back(set);
    }
  }
  ctx->current = found;
  ctx->threads = threads;
  if (threads > 0)
    omp_set_num_threads(threads);
  return nullptr;
}

extern "C" void tidalrt_set_parallel_grain(int64_t elements) {
  gParallelGrain.store(elements > 0 ? elements : TIDALRT_DEFAULT_PARALLEL_GRAIN,
                       std::memory_order_relaxed);
}

extern "C" int64_t tidalrt_parallel_grain(void) {
  return tidalrt::parallelGrain();
}

extern "C" int tidalrt_context_threads(const tidalrt_context_t *ctx) {
  return ctx->threads;
}

extern "C" int tidalrt_context_prepared(const tidalrt_context_t *ctx) {
  return ctx->sets[ctx->current].prepared ? 1 : 0;
}

extern "C" void tidalrt_context_set_step(tidalrt_context_t *ctx,
                                         uint64_t step) {
  ctx->step = step;
}

extern "C" void tidalrt_context_fail_at(tidalrt_context_t *ctx,
                                        int64_t op_index) {
  ctx->failedOp.store(op_index, std::memory_order_relaxed);
}

extern "C" int64_t tidalrt_context_failed_op(const tidalrt_context_t *ctx) {
  return ctx->failedOp.load(std::memory_order_relaxed);
}

extern "C" size_t tidalrt_context_scratch_bytes(const tidalrt_context_t *ctx) {
  return ctx->scratchReserved;
}

namespace tidalrt {

void fail(tidalrt_status_code_t code, const char *format, ...) {
  KernelError e;
  e.code = code;
  va_list args;
  va_start(args, format);
  vsnprintf(e.message, sizeof(e.message), format, args);
  va_end(args);
  throw e;
}

bool preparing(const tidalrt_context_t *ctx) { return ctx->preparing; }

void *getState(tidalrt_context_t *ctx, int64_t opIndex) {
  if (opIndex < 0 || (size_t)opIndex >= ctx->numOps)
    fail(TIDALRT_INTERNAL, "op index %lld outside the program's %zu ops",
         (long long)opIndex, ctx->numOps);
  return ctx->sets[ctx->current].states[opIndex];
}

void setState(tidalrt_context_t *ctx, int64_t opIndex, void *state,
              void (*destroy)(void *)) {
  if (opIndex < 0 || (size_t)opIndex >= ctx->numOps)
    fail(TIDALRT_INTERNAL, "op index %lld outside the program's %zu ops",
         (long long)opIndex, ctx->numOps);
  StateSet &set = ctx->sets[ctx->current];
  if (set.states[opIndex] && set.destroyers[opIndex])
    set.destroyers[opIndex](set.states[opIndex]);
  set.states[opIndex] = state;
  set.destroyers[opIndex] = destroy;
}

void *scratch(tidalrt_context_t *ctx, size_t bytes) {
  if (ctx->preparing) {
    if (bytes > ctx->scratchReserved)
      ctx->scratchReserved = bytes;
    return nullptr;
  }
  if (bytes > ctx->scratchSize) {
    // Only a context that skipped preparation may grow here.
    if (ctx->scratchReserved >= bytes || ctx->scratchSize == 0 ||
        ctx->scratchReserved == 0) {
      if (bytes > ctx->scratchReserved)
        ctx->scratchReserved = bytes;
      if (!growScratch(ctx, bytes))
        throw std::bad_alloc();
    } else {
      fail(TIDALRT_INTERNAL,
           "kernel scratch of %zu bytes exceeds the %zu reserved", bytes,
           ctx->scratchSize);
    }
  }
  return ctx->scratch;
}

int64_t parallelGrain() {
  return gParallelGrain.load(std::memory_order_relaxed);
}

void applyThreads(const tidalrt_context_t *ctx) {
  // The team size is per OpenMP thread: kernels run on the context's thread
  // on the cpu target and on a stream's worker on a device.
  if (ctx->threads > 0 && omp_get_max_threads() != ctx->threads)
    omp_set_num_threads(ctx->threads);
}

uint64_t seed(const tidalrt_context_t *ctx) { return ctx->seed; }
size_t numOps(const tidalrt_context_t *ctx) { return ctx->numOps; }

void *programState(const tidalrt_context_t *ctx) { return ctx->programState; }
void setProgramState(tidalrt_context_t *ctx, void *state,
                     void (*destroy)(void *)) {
  ctx->programState = state;
  ctx->programStateDestroy = destroy;
}
uint64_t step(const tidalrt_context_t *ctx) { return ctx->step; }

uint64_t &commTicket(tidalrt_context_t *ctx, int64_t bucket) {
  if (bucket < 0 || bucket > (int64_t{1} << 20))
    fail(TIDALRT_INTERNAL, "all-reduce bucket %lld out of range",
         (long long)bucket);
  if ((size_t)bucket >= ctx->commTickets.size())
    ctx->commTickets.resize((size_t)bucket + 1, kNoTicket);
  return ctx->commTickets[(size_t)bucket];
}

} // namespace tidalrt
