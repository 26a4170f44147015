// program_state.h - the state of a generated device program attached to a
// context (program_ops.cpp, program_attach.cpp): the device, its four
// streams, two events per copy, one launch record per op, the pinned host
// arena and the constants' device copy. See program_ops.cpp for the
// threads and the host-launch protocol.
#ifndef TIDALRT_DEVICE_PROGRAM_STATE_H
#define TIDALRT_DEVICE_PROGRAM_STATE_H

#include "device_internal.h"

#include "../cpu/kernel.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tidalrt_device {
namespace program {

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
  // TIDAL_DUMP_DIR: after every device kernel, its write ranges go to files
  // there (program_dump.cpp); empty: off.
  std::string dump_dir;
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

inline program_state *state_of(const tidalrt_context_t *ctx) {
  return static_cast<program_state *>(tidalrt::programState(ctx));
}

inline tidalrt_device_t *device_of(const tidalrt_context_t *ctx) {
  program_state *state = state_of(ctx);
  return state ? state->device : nullptr;
}

// Waits for op `op_index`'s kernel, then writes each of its `num_writes`
// write ranges (after `num_reads` read ranges in `ranges`) to
// state->dump_dir/op-NNNNN-wK.bin (program_dump.cpp).
tidalrt_status_t dump_writes(program_state *state, int64_t op_index,
                             const tidalrt_range_t *ranges, int64_t num_reads,
                             int64_t num_writes);

inline tidalrt_status_t null_argument(const char *call) {
  return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                             call);
}

} // namespace program
} // namespace tidalrt_device

#endif // TIDALRT_DEVICE_PROGRAM_STATE_H
