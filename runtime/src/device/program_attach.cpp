// program_attach.cpp - attaching a device to a context
// (tidalrt_context_set_device), and what generated device programs ask of
// the attachment: the host arena and the constants as device kernels read
// them (tidalrt/device.h).
#include "program_state.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

using namespace tidalrt_device::program;

namespace {

void destroy_state(void *state) { delete static_cast<program_state *>(state); }

} // namespace

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
  const char *dump = getenv("TIDAL_DUMP_DIR");
  state->dump_dir = dump ? dump : "";
  state->host_arena = host_arena;
  state->host_arena_bytes = host_arena_bytes;
  return nullptr;
}

extern "C" tidalrt_device_t *
tidalrt_context_device(const tidalrt_context_t *ctx) {
  return ctx ? device_of(ctx) : nullptr;
}
