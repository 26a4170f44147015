// program_ops.cpp - what generated device programs call (tidalrt/device.h,
// "Generated device programs"): kernel launches on the context's compute
// stream, host-placed kernel launches on its host stream, offloads and
// prefetches on its copy streams, waits and the end of the step.
//
// The context owns a program_state (kernel.h, programState): the attached
// device, its four streams (compute, copy to host, copy to device, host),
// two events per copy, the host_reached event and one launch record per op.
// A launch record holds what a stream's thread needs to call the kernel
// (the context, fn, desc and a copy of the buffer pointers); it is
// allocated while the context prepares, so a step allocates none.
//
// Threads: while a step is in flight kernels run on two threads (SIM): the
// compute stream's (device kernels) and the host stream's (host-placed
// kernels). Both kinds share the context's scratch buffer and per-op state
// machinery, so run_record holds program_state::kernel_mutex around every
// kernel that runs on the CPU: on SIM host-placed and device kernels run one
// at a time (they share the CPU and the context's scratch), while copies
// overlap them both. On CUDA a device kernel only enqueues GPU work on the
// calling thread and takes no lock, so host-placed kernels (on the CUDA
// driver's thread) and the GPU run concurrently. The
// calling thread writes a record before enqueueing its launch and reads it
// again only after the launch has run (after tidalrt_dev_synchronize, or the
// wait below for an op launched twice in one step); both hand-offs go
// through the stream's mutex.
//
// Host-placed kernels touch only the host arena, which copies also touch;
// the order between them is the protocol of tidalrt_dev_launch_host (see
// device.h): a host launch waits for the "done" event of every copy
// enqueued since the previous host launch, and a copy enqueued after a host
// launch waits for host_reached, recorded on the host stream.
#include "device_internal.h"

#include "../cpu/kernel.h"
#include "../cuda/emu_table.h"

#include <cstdlib>
#include <cstring>

#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace {

struct launch_record {
  // program_state::kernel_mutex; NULL for a CUDA device's compute launches,
  // which only enqueue GPU work.
  std::mutex *kernel_mutex = nullptr;
  tidalrt_context_t *ctx = nullptr;
  tidalrt_kernel_fn_t fn = nullptr;
  const int64_t *desc = nullptr;
  std::vector<void *> buffers;
  int64_t op_index = -1;
  // The kernel the compute stream runs for `cpu_fn`, the one generated code
  // passed (device_kernel): found once, reused every step.
  tidalrt_kernel_fn_t cpu_fn = nullptr;
  tidalrt_kernel_fn_t device_fn = nullptr;
  // The program_state::epoch of the last launch: an op launched twice
  // between two tidalrt_dev_synchronize() calls waits for its first launch
  // before its record is overwritten.
  uint64_t epoch = 0;
  // The stream of the last launch (compute or host): the one to wait for.
  tidalrt_stream_t *stream = nullptr;
};

struct program_state {
  tidalrt_device_t *device = nullptr;
  uint8_t *host_arena = nullptr;
  uint64_t host_arena_bytes = 0;
  tidalrt_stream_t *compute = nullptr;
  tidalrt_stream_t *to_host = nullptr;
  tidalrt_stream_t *to_device = nullptr;
  tidalrt_stream_t *host = nullptr;       // host-placed kernels (a host stream)
  std::vector<tidalrt_event_t *> reached; // per copy: compute got there
  std::vector<tidalrt_event_t *> done;    // per copy: the copy finished
  std::vector<launch_record *> records;   // per op; NULL until launched
  uint64_t epoch = 1; // grows at each tidalrt_dev_synchronize()
  // The device's backend (CUDA), or NULL (HOST, SIM).
  const tidalrt_device::backend *backend = nullptr;
  // SIM with TIDAL_SIM_KERNELS=emulated: compute launches run the host
  // emulation of the CUDA kernel where one exists (runtime/src/cuda).
  bool emulate = false;
  // CUDA with TIDAL_CUDA_SYNC=1: wait for every kernel, so that a fault
  // names its op (as CUDA_LAUNCH_BLOCKING does).
  bool sync_each_launch = false;
  // The host arena pinned by the backend (unpinned at detach).
  void *pinned = nullptr;
  // The program's constants uploaded by the backend (released at detach):
  // the host image they came from and their device copy.
  const uint8_t *constants_host = nullptr;
  void *constants_device = nullptr;
  // Held by run_record around every kernel that runs on the CPU (all of
  // them on HOST and SIM; host-placed ones on CUDA).
  std::mutex kernel_mutex;

  // The host-launch protocol (only the calling thread uses these).
  // Copies enqueued since the previous host launch (each id once; capacity
  // num_copies, so a step never allocates), and which ids are listed.
  std::vector<int64_t> copies_since_host;
  std::vector<uint8_t> copy_listed;
  // Recorded on the host stream: copies wait on it to follow host launches.
  tidalrt_event_t *host_reached = nullptr;
  // A host launch was enqueued since host_reached was last recorded.
  bool host_unrecorded = false;
  // A host launch was enqueued since the last tidalrt_dev_synchronize (or
  // the attachment): copies must wait on host_reached.
  bool host_active = false;

  // After tidalrt_dev_synchronize (all work finished) or a detach: nothing
  // is left to order.
  void reset_host_protocol() {
    for (int64_t copy_id : copies_since_host)
      copy_listed[static_cast<size_t>(copy_id)] = 0;
    copies_since_host.clear();
    host_unrecorded = false;
    host_active = false;
  }

  ~program_state() {
    detach();
    for (launch_record *record : records)
      delete record;
  }

  // Waits for the device's work, then frees the streams and events.
  void detach() {
    if (device)
      tidalrt_status_free(tidalrt_device_synchronize(device));
    for (tidalrt_event_t *event : reached)
      tidalrt_event_free(event);
    for (tidalrt_event_t *event : done)
      tidalrt_event_free(event);
    tidalrt_event_free(host_reached);
    host_reached = nullptr;
    reached.clear();
    done.clear();
    reset_host_protocol();
    copy_listed.clear();
    tidalrt_stream_free(compute);
    tidalrt_stream_free(to_host);
    tidalrt_stream_free(to_device);
    tidalrt_stream_free(host);
    compute = to_host = to_device = host = nullptr;
    if (pinned)
      backend->unpin(pinned);
    pinned = nullptr;
    if (constants_device)
      backend->release(constants_device);
    constants_host = nullptr;
    constants_device = nullptr;
    backend = nullptr;
    emulate = sync_each_launch = false;
    for (launch_record *record : records)
      if (record)
        record->cpu_fn = record->device_fn = nullptr;
    device = nullptr;
    host_arena = nullptr;
    host_arena_bytes = 0;
    ++epoch;
  }
};

program_state *state_of(const tidalrt_context_t *ctx) {
  return static_cast<program_state *>(tidalrt::programState(ctx));
}

tidalrt_device_t *device_of(const tidalrt_context_t *ctx) {
  program_state *state = state_of(ctx);
  return state ? state->device : nullptr;
}

tidalrt_status_t null_argument(const char *call) {
  return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                             call);
}

// Runs a launch record on the compute or host stream's thread, one kernel
// at a time (they share the context's scratch and per-op state).
tidalrt_status_t run_record(void *arg) {
  auto *record = static_cast<launch_record *>(arg);
  tidalrt_status_t status;
  if (record->kernel_mutex) {
    std::lock_guard<std::mutex> lock(*record->kernel_mutex);
    status = record->fn(record->ctx, record->desc, record->buffers.data());
  } else {
    status = record->fn(record->ctx, record->desc, record->buffers.data());
  }
  if (status)
    tidalrt_context_fail_at(record->ctx, record->op_index);
  return status;
}

// The op's record, with room for `num_buffers` pointers; allocated while
// preparing (or, for a context that was never prepared, on first use).
launch_record *record_for(program_state *state, int64_t op_index,
                          size_t num_buffers) {
  launch_record *&record = state->records[static_cast<size_t>(op_index)];
  if (!record) {
    record = new launch_record();
    record->kernel_mutex = &state->kernel_mutex;
  }
  if (record->buffers.capacity() < num_buffers)
    record->buffers.reserve(num_buffers);
  return record;
}

// The checks every launch makes, preparing or not; `call` names the caller
// (tidalrt_dev_launch or tidalrt_dev_launch_host, which has no ranges).
tidalrt_status_t check_launch(tidalrt_context_t *ctx, program_state *state,
                              const char *call, int64_t num_buffers,
                              void *const *buffers, int64_t op_index,
                              const tidalrt_range_t *ranges, int64_t num_reads,
                              int64_t num_writes) {
  if (num_buffers < 0 || num_reads < 0 || num_writes < 0 ||
      (num_buffers && !buffers) || ((num_reads || num_writes) && !ranges))
    return tidalrt_status_make(
        TIDALRT_INVALID_ARGUMENT,
        "%s: op %lld: bad counts (%lld buffers, %lld reads, %lld writes) or a "
        "NULL list",
        call, (long long)op_index, (long long)num_buffers, (long long)num_reads,
        (long long)num_writes);
  if (op_index < 0 || static_cast<uint64_t>(op_index) >= tidalrt::numOps(ctx) ||
      static_cast<uint64_t>(op_index) >= state->records.size())
    return tidalrt_status_make(TIDALRT_INTERNAL,
                               "%s: op index %lld outside the program's %zu "
                               "ops",
                               call, (long long)op_index, tidalrt::numOps(ctx));
  return nullptr;
}

// Bounds of every range, as tidalrt_stream_launch() checks them (used while
// preparing, when nothing is enqueued).
tidalrt_status_t check_ranges(program_state *state, int64_t op_index,
                              const tidalrt_range_t *ranges, int64_t num_reads,
                              int64_t num_writes) {
  uint64_t end = 0;
  for (int64_t i = 0; i < num_reads + num_writes; ++i) {
    bool read = i < num_reads;
    std::string what = std::string(read ? "read" : "write") + " range " +
                       std::to_string(read ? i : i - num_reads);
    if (tidalrt_status_t status = tidalrt_device::check_range(
            state->device, "tidalrt_dev_launch", what.c_str(), ranges[i].offset,
            ranges[i].bytes, &end))
      return tidalrt_status_annotate(status, "op %lld", (long long)op_index);
  }
  return nullptr;
}

// What offload, prefetch and wait check; `call` names the caller.
tidalrt_status_t check_copy_id(const tidalrt_context_t *ctx, const char *call,
                               int64_t copy_id, program_state **out_state) {
  program_state *state = state_of(ctx);
  *out_state = state;
  if (!state || !state->device)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: no device is attached to the context "
                               "(tidalrt_context_set_device)",
                               call);
  if (copy_id < 0 || static_cast<uint64_t>(copy_id) >= state->done.size())
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: copy %lld outside the %zu copies of the "
                               "attached device",
                               call, (long long)copy_id, state->done.size());
  return nullptr;
}

tidalrt_status_t copy(tidalrt_context_t *ctx, bool to_host, int64_t copy_id,
                      uint64_t host_offset, uint64_t device_offset,
                      uint64_t bytes) {
  const char *call = to_host ? "tidalrt_dev_offload" : "tidalrt_dev_prefetch";
  if (!ctx)
    return null_argument(call);
  program_state *state = nullptr;
  if (tidalrt_status_t status = check_copy_id(ctx, call, copy_id, &state))
    return status;
  uint64_t size = state->host_arena_bytes;
  if (bytes > size || host_offset > size - bytes)
    return tidalrt_status_make(
        TIDALRT_INVALID_ARGUMENT,
        "%s: copy %lld: host range (%llu bytes at offset %llu) is outside the "
        "host arena of %llu bytes",
        call, (long long)copy_id, (unsigned long long)bytes,
        (unsigned long long)host_offset, (unsigned long long)size);
  uint64_t end = 0;
  if (tidalrt_status_t status = tidalrt_device::check_range(
          state->device, call, "device range", device_offset, bytes, &end))
    return tidalrt_status_annotate(status, "copy %lld", (long long)copy_id);
  if (tidalrt::preparing(ctx))
    return nullptr; // no data yet
  size_t k = static_cast<size_t>(copy_id);
  tidalrt_stream_t *stream = to_host ? state->to_host : state->to_device;
  tidalrt_status_t status =
      tidalrt_event_record(state->reached[k], state->compute);
  if (!status)
    status = tidalrt_stream_wait_event(stream, state->reached[k]);
  // After every host launch enqueued so far (this step's and, until the
  // next tidalrt_dev_synchronize, the previous ones'): the host bytes may
  // have been written by a host kernel, or still be read by one.
  if (!status && state->host_unrecorded) {
    status = tidalrt_event_record(state->host_reached, state->host);
    if (!status)
      state->host_unrecorded = false;
  }
  if (!status && state->host_active)
    status = tidalrt_stream_wait_event(stream, state->host_reached);
  if (!status)
    status = tidalrt_stream_copy(stream, state->host_arena + host_offset,
                                 device_offset, bytes);
  if (!status)
    status = tidalrt_event_record(state->done[k], stream);
  if (!status && !state->copy_listed[k]) {
    // The next host launch waits for this copy (capacity: num_copies).
    state->copy_listed[k] = 1;
    state->copies_since_host.push_back(copy_id);
  }
  return tidalrt_status_annotate(status, "%s: copy %lld", call,
                                 (long long)copy_id);
}

// Fills the op's launch record and enqueues it on `stream` (compute or
// host), first waiting for the op's previous launch if it has not run yet.
tidalrt_status_t enqueue_record(program_state *state, launch_record *record,
                                tidalrt_stream_t *stream,
                                tidalrt_context_t *ctx, tidalrt_kernel_fn_t fn,
                                const int64_t *desc, void *const *buffers,
                                int64_t num_buffers, int64_t op_index,
                                const tidalrt_range_t *ranges,
                                int64_t num_reads, int64_t num_writes) {
  // A CUDA device's compute launch has consumed its record when it
  // returned (the kernel ran on this thread and enqueued its work): no wait,
  // and so no host synchronisation inside a step.
  bool consumed = state->backend && record->stream == state->compute;
  if (record->epoch == state->epoch && record->stream && !consumed) {
    // Launched already since the last synchronisation: the stream it was
    // launched on may not have run that launch yet, whose record this is.
    tidalrt_status_free(tidalrt_stream_synchronize(record->stream));
  }
  record->ctx = ctx;
  record->kernel_mutex = state->backend && stream == state->compute
                             ? nullptr
                             : &state->kernel_mutex;
  record->fn = fn;
  record->desc = desc;
  record->buffers.assign(buffers, buffers + num_buffers); // capacity suffices
  record->op_index = op_index;
  record->epoch = state->epoch;
  record->stream = stream;
  return tidalrt_stream_launch(
      stream, run_record, record, ranges, static_cast<size_t>(num_reads),
      ranges ? ranges + num_reads : nullptr, static_cast<size_t>(num_writes));
}

// The op name of a CPU kernel, for messages.
const char *kernel_name(tidalrt_kernel_fn_t fn) {
#define TIDALRT_NAME_ENTRY(name)                                               \
  if (fn == &tidalrt_k_##name)                                                 \
    return #name;
  TIDALRT_KERNEL_LIST(TIDALRT_NAME_ENTRY)
#undef TIDALRT_NAME_ENTRY
  return "an unknown kernel";
}

// The kernel that the compute stream runs for generated code's `fn`: fn on
// HOST and SIM, its CUDA twin on CUDA (UNSUPPORTED if it has none), its
// host emulation on SIM with TIDAL_SIM_KERNELS=emulated (fn if none).
tidalrt_status_t device_kernel(program_state *state, launch_record *record,
                               tidalrt_kernel_fn_t fn, int64_t op_index,
                               tidalrt_kernel_fn_t *out) {
  if (record->cpu_fn == fn && record->device_fn) {
    *out = record->device_fn;
    return nullptr;
  }
  tidalrt_kernel_fn_t kernel = fn;
  if (state->backend) {
    kernel = state->backend->kernel_for(fn);
    if (!kernel)
      return tidalrt_status_make(
          TIDALRT_UNSUPPORTED,
          "tidalrt_dev_launch: op %lld: the %s device has no kernel for "
          "'%s' (compile with --placement host to run it on the CPU)",
          (long long)op_index, state->backend->name, kernel_name(fn));
  } else if (state->emulate) {
    if (tidalrt_kernel_fn_t emulated = tidalrt::cuda::emulatedKernelFor(fn))
      kernel = emulated;
  }
  record->cpu_fn = fn;
  record->device_fn = kernel;
  *out = kernel;
  return nullptr;
}

// Preparation: kernels build their state and reserve scratch on this
// thread, once the streams that run kernels are idle (they are, before the
// first step; a failure of earlier work stays with its stream, which
// reports it again at the next synchronisation).
// Calls the kernel on this thread; a failure names its op.
tidalrt_status_t run_now(tidalrt_context_t *ctx, tidalrt_kernel_fn_t fn,
                         const int64_t *desc, void *const *buffers,
                         int64_t op_index) {
  tidalrt_status_t status = fn(ctx, desc, buffers);
  if (status)
    tidalrt_context_fail_at(ctx, op_index);
  return status;
}

// A CUDA kernel (`on_compute`) prepares with the compute stream current,
// so that it can bind its library handles to it.
tidalrt_status_t prepare_kernel(program_state *state, tidalrt_context_t *ctx,
                                tidalrt_kernel_fn_t fn, const int64_t *desc,
                                void *const *buffers, int64_t op_index,
                                bool on_compute) {
  tidalrt_status_free(tidalrt_stream_synchronize(state->compute));
  tidalrt_status_free(tidalrt_stream_synchronize(state->host));
  bool current = on_compute && state->backend;
  if (current)
    state->backend->set_current_stream(state->compute->native);
  tidalrt_status_t status = run_now(ctx, fn, desc, buffers, op_index);
  if (current)
    state->backend->set_current_stream(nullptr);
  return status;
}

// The op's launch record, or OUT_OF_MEMORY naming the call.
tidalrt_status_t get_record(program_state *state, const char *call,
                            int64_t op_index, int64_t num_buffers,
                            launch_record **out_record) {
  try {
    *out_record = record_for(state, op_index, static_cast<size_t>(num_buffers));
  } catch (const std::bad_alloc &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "%s: op %lld: out of memory for its launch "
                               "record",
                               call, (long long)op_index);
  }
  return nullptr;
}

void destroy_state(void *state) { delete static_cast<program_state *>(state); }

} // namespace

extern "C" tidalrt_status_t tidalrt_dev_launch(
    tidalrt_context_t *ctx, tidalrt_kernel_fn_t fn, const int64_t *desc,
    void *const *buffers, int64_t num_buffers, int64_t op_index,
    const tidalrt_range_t *ranges, int64_t num_reads, int64_t num_writes) {
  static const char call[] = "tidalrt_dev_launch";
  if (!ctx || !fn)
    return null_argument(call);
  program_state *state = state_of(ctx);
  if (!state || !state->device) {
    // The cpu target: the kernel runs now, on this thread.
    return run_now(ctx, fn, desc, buffers, op_index);
  }
  tidalrt_status_t status =
      check_launch(ctx, state, call, num_buffers, buffers, op_index, ranges,
                   num_reads, num_writes);
  if (!status && tidalrt::preparing(ctx))
    status = check_ranges(state, op_index, ranges, num_reads, num_writes);
  launch_record *record = nullptr;
  if (!status)
    status = get_record(state, call, op_index, num_buffers, &record);
  tidalrt_kernel_fn_t kernel = fn;
  if (!status)
    status = device_kernel(state, record, fn, op_index, &kernel);
  if (status) {
    tidalrt_context_fail_at(ctx, op_index);
    return status;
  }
  if (tidalrt::preparing(ctx))
    return prepare_kernel(state, ctx, kernel, desc, buffers, op_index, true);
  status =
      enqueue_record(state, record, state->compute, ctx, kernel, desc, buffers,
                     num_buffers, op_index, ranges, num_reads, num_writes);
  if (!status && state->sync_each_launch)
    status = tidalrt_stream_synchronize(state->compute);
  if (status) {
    tidalrt_context_fail_at(ctx, op_index);
    return tidalrt_status_annotate(status, "op %lld", (long long)op_index);
  }
  return nullptr;
}

extern "C" tidalrt_status_t
tidalrt_dev_launch_host(tidalrt_context_t *ctx, tidalrt_kernel_fn_t fn,
                        const int64_t *desc, void *const *buffers,
                        int64_t num_buffers, int64_t op_index) {
  static const char call[] = "tidalrt_dev_launch_host";
  if (!ctx || !fn)
    return null_argument(call);
  program_state *state = state_of(ctx);
  if (!state || !state->device) {
    // No device: the kernel runs now, on this thread.
    return run_now(ctx, fn, desc, buffers, op_index);
  }
  tidalrt_status_t status = check_launch(ctx, state, call, num_buffers, buffers,
                                         op_index, nullptr, 0, 0);
  launch_record *record = nullptr;
  if (!status)
    status = get_record(state, call, op_index, num_buffers, &record);
  if (status) {
    tidalrt_context_fail_at(ctx, op_index);
    return status;
  }
  if (tidalrt::preparing(ctx))
    return prepare_kernel(state, ctx, fn, desc, buffers, op_index, false);
  // Protocol (a): after every copy enqueued since the previous host launch
  // (earlier copies were waited for by earlier host launches, which run
  // before this one on the host stream, or finished by the last
  // tidalrt_dev_synchronize). Not after the compute stream's kernels.
  for (int64_t copy_id : state->copies_since_host) {
    size_t k = static_cast<size_t>(copy_id);
    state->copy_listed[k] = 0;
    if (!status)
      status = tidalrt_stream_wait_event(state->host, state->done[k]);
  }
  state->copies_since_host.clear();
  if (!status)
    status = enqueue_record(state, record, state->host, ctx, fn, desc, buffers,
                            num_buffers, op_index, nullptr, 0, 0);
  if (status) {
    tidalrt_context_fail_at(ctx, op_index);
    return tidalrt_status_annotate(status, "%s: op %lld", call,
                                   (long long)op_index);
  }
  // Protocol (b): later copies follow this launch.
  state->host_unrecorded = true;
  state->host_active = true;
  return nullptr;
}

extern "C" uint8_t *tidalrt_dev_host_arena(tidalrt_context_t *ctx) {
  program_state *state = ctx ? state_of(ctx) : nullptr;
  if (!state || !state->device || !state->host_arena_bytes)
    return nullptr;
  return state->host_arena;
}

extern "C" tidalrt_status_t tidalrt_dev_constants(tidalrt_context_t *ctx,
                                                  const uint8_t *host,
                                                  uint64_t bytes,
                                                  const uint8_t **out) {
  if (!ctx || !out || (!host && bytes))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_dev_constants: NULL argument");
  *out = host;
  program_state *state = state_of(ctx);
  if (!state || !state->device || !state->backend)
    return nullptr; // no device, or one whose memory is host memory
  if (state->constants_host != host) {
    if (state->constants_device) {
      tidalrt_dev_synchronize(ctx);
      state->backend->release(state->constants_device);
      state->constants_device = nullptr;
      state->constants_host = nullptr;
    }
    if (tidalrt_status_t s =
            state->backend->upload(host, bytes, &state->constants_device))
      return s;
    state->constants_host = host;
  }
  *out = static_cast<const uint8_t *>(state->constants_device);
  return nullptr;
}

extern "C" tidalrt_status_t tidalrt_dev_offload(tidalrt_context_t *ctx,
                                                int64_t copy_id,
                                                uint64_t host_offset,
                                                uint64_t device_offset,
                                                uint64_t bytes) {
  return copy(ctx, /*to_host=*/true, copy_id, host_offset, device_offset,
              bytes);
}

extern "C" tidalrt_status_t tidalrt_dev_prefetch(tidalrt_context_t *ctx,
                                                 int64_t copy_id,
                                                 uint64_t host_offset,
                                                 uint64_t device_offset,
                                                 uint64_t bytes) {
  return copy(ctx, /*to_host=*/false, copy_id, host_offset, device_offset,
              bytes);
}

extern "C" tidalrt_status_t tidalrt_dev_wait(tidalrt_context_t *ctx,
                                             int64_t copy_id) {
  if (!ctx)
    return null_argument("tidalrt_dev_wait");
  program_state *state = nullptr;
  if (tidalrt_status_t status =
          check_copy_id(ctx, "tidalrt_dev_wait", copy_id, &state))
    return status;
  if (tidalrt::preparing(ctx))
    return nullptr;
  return tidalrt_stream_wait_event(state->compute,
                                   state->done[static_cast<size_t>(copy_id)]);
}

extern "C" tidalrt_status_t tidalrt_dev_synchronize(tidalrt_context_t *ctx) {
  if (!ctx)
    return null_argument("tidalrt_dev_synchronize");
  program_state *state = state_of(ctx);
  if (!state || !state->device)
    return nullptr;
  ++state->epoch;
  tidalrt_status_t status = tidalrt_device_synchronize(state->device);
  // Everything enqueued has finished: copies need not wait for earlier host
  // launches, nor host launches for earlier copies.
  state->reset_host_protocol();
  // The failure of a kernel (compute stream, then host stream) names the
  // failing op; prefer it even if the device has another stream created
  // before it that failed.
  for (tidalrt_stream_t *stream : {state->compute, state->host}) {
    if (tidalrt_status_t kernels = tidalrt_stream_synchronize(stream)) {
      tidalrt_status_free(status);
      return kernels;
    }
  }
  return status;
}

extern "C" tidalrt_status_t
tidalrt_context_set_device(tidalrt_context_t *ctx, tidalrt_device_t *device,
                           uint8_t *host_arena, uint64_t host_arena_bytes,
                           int64_t num_copies) {
  if (!ctx)
    return null_argument("tidalrt_context_set_device");
  program_state *state = state_of(ctx);
  if (state)
    state->detach();
  if (!device)
    return nullptr;
  if (num_copies < 0 || (!host_arena && host_arena_bytes))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_context_set_device: %s",
                               num_copies < 0 ? "negative num_copies"
                                              : "NULL host arena of non-zero "
                                                "size");
  if (!state) {
    state = new (std::nothrow) program_state();
    if (!state)
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                 "tidalrt_context_set_device: out of memory");
    tidalrt::setProgramState(ctx, state, destroy_state);
  }
  try {
    state->records.resize(tidalrt::numOps(ctx), nullptr);
    state->reached.reserve(static_cast<size_t>(num_copies));
    state->done.reserve(static_cast<size_t>(num_copies));
    state->copies_since_host.reserve(static_cast<size_t>(num_copies));
    state->copy_listed.assign(static_cast<size_t>(num_copies), 0);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_context_set_device: out of memory for "
                               "%lld copies",
                               (long long)num_copies);
  }
  state->device = device;
  tidalrt_status_t status =
      tidalrt_stream_create(device, TIDALRT_STREAM_COMPUTE, &state->compute);
  if (!status)
    status = tidalrt_stream_create(device, TIDALRT_STREAM_COPY_TO_HOST,
                                   &state->to_host);
  if (!status)
    status = tidalrt_stream_create(device, TIDALRT_STREAM_COPY_TO_DEVICE,
                                   &state->to_device);
  if (!status) // host-placed kernels: their own thread on SIM
    status = tidalrt_stream_create(device, TIDALRT_STREAM_HOST, &state->host);
  if (!status)
    status = tidalrt_event_create(device, &state->host_reached);
  for (int64_t k = 0; !status && k < num_copies; ++k) {
    tidalrt_event_t *reached = nullptr, *done = nullptr;
    status = tidalrt_event_create(device, &reached);
    if (!status)
      state->reached.push_back(reached); // reserved: cannot throw
    if (!status)
      status = tidalrt_event_create(device, &done);
    if (!status)
      state->done.push_back(done);
  }
  if (status) {
    state->detach();
    return tidalrt_status_annotate(status, "tidalrt_context_set_device");
  }
  state->backend = device->backend;
  if (state->backend && host_arena_bytes) {
    // Copies run asynchronously only from page-locked memory.
    status = state->backend->pin(host_arena, host_arena_bytes);
    if (status) {
      state->detach();
      return tidalrt_status_annotate(status, "tidalrt_context_set_device: "
                                             "pinning the host arena");
    }
    state->pinned = host_arena;
  }
  const char *kernels = getenv("TIDAL_SIM_KERNELS");
  state->emulate = device->kind == TIDALRT_DEVICE_SIM && kernels &&
                   strcmp(kernels, "emulated") == 0;
  const char *sync = getenv("TIDAL_CUDA_SYNC");
  state->sync_each_launch =
      state->backend && sync && sync[0] && strcmp(sync, "0") != 0;
  state->host_arena = host_arena;
  state->host_arena_bytes = host_arena_bytes;
  return nullptr;
}

extern "C" tidalrt_device_t *
tidalrt_context_device(const tidalrt_context_t *ctx) {
  return ctx ? device_of(ctx) : nullptr;
}
