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
#include "program_state.h"

#include "../cpu/kernel.h"
#include "../cuda/emu_table.h"

#include <cstdlib>
#include <cstring>

#include <mutex>
#include <new>
#include <string>
#include <vector>

using namespace tidalrt_device::program;

namespace {

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

// Whether a call descriptor has a channel-blocked tensor (tidalrt.h,
// "Tensor layouts").
bool has_blocked_tensor(const int64_t *desc) {
  if (!desc)
    return false;
  int64_t n = desc[1];
  const int64_t *p = desc + 2;
  for (int64_t i = 0; i < n; ++i) {
    if ((p[0] >> TIDALRT_LAYOUT_SHIFT) != TIDALRT_LAYOUT_DENSE)
      return true;
    p += 2 + (p[1] > 0 ? p[1] : 0);
  }
  return false;
}

// The kernel that the compute stream runs for generated code's `fn`: fn on
// HOST and SIM, its CUDA twin on CUDA (UNSUPPORTED if it has none), its
// host emulation on SIM with TIDAL_SIM_KERNELS=emulated (fn if none).
tidalrt_status_t device_kernel(program_state *state, launch_record *record,
                               tidalrt_kernel_fn_t fn, const int64_t *desc,
                               int64_t op_index, tidalrt_kernel_fn_t *out) {
  if (record->cpu_fn == fn && record->device_fn) {
    *out = record->device_fn;
    return nullptr;
  }
  // The CUDA kernels, and their host emulation, take the cuda target's
  // dense tensors; the cpu and sim targets' plans keep channel-blocked ones
  // (tidal-block-channels).
  if ((state->backend || state->emulate) && has_blocked_tensor(desc))
    return tidalrt_status_make(
        TIDALRT_UNSUPPORTED,
        "tidalrt_dev_launch: op %lld ('%s'): the %s take dense tensors; "
        "this program keeps channel-blocked ones (compile it with "
        "--block-channels off, or for --target cuda)",
        (long long)op_index, kernel_name(fn),
        state->backend ? "device's kernels"
                       : "CUDA kernels' host emulation "
                         "(TIDAL_SIM_KERNELS=emulated)");
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
    status = device_kernel(state, record, fn, desc, op_index, &kernel);
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
  if (!status && !state->dump_dir.empty())
    status = dump_writes(state, op_index, ranges, num_reads, num_writes);
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
