// device.cpp - devices: the arena, the link bandwidth, stats, bounds checks.
#include "device_internal.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

using namespace tidalrt_device;

// Defined by tidalrt_cuda; NULL (weak) when that library is not linked in.
extern "C" const tidalrt_device::backend *tidalrt_cuda_backend(void)
    __attribute__((weak));

const backend *tidalrt_device::cuda_backend() {
  return tidalrt_cuda_backend ? tidalrt_cuda_backend() : nullptr;
}

namespace {

const char *kind_name(tidalrt_device_kind_t kind) {
  switch (kind) {
  case TIDALRT_DEVICE_HOST:
    return "host";
  case TIDALRT_DEVICE_SIM:
    return "sim";
  case TIDALRT_DEVICE_CUDA:
    return "cuda";
  }
  return "unknown";
}

bool is_bandwidth(double gbps) { return std::isfinite(gbps) && gbps >= 0; }

// The SIM link bandwidth: the option, or TIDAL_SIM_LINK_GBPS when the option
// is 0.
tidalrt_status_t link_bandwidth(double option, double *out_gbps) {
  *out_gbps = 0;
  if (!is_bandwidth(option))
    return tidalrt_status_make(
        TIDALRT_INVALID_ARGUMENT,
        "tidalrt_device_create: link_gbps %g is not a bandwidth in GB/s "
        "(finite, >= 0)",
        option);
  if (option > 0) {
    *out_gbps = option;
    return nullptr;
  }
  const char *env = getenv("TIDAL_SIM_LINK_GBPS");
  if (!env || !*env)
    return nullptr;
  char *end = nullptr;
  errno = 0;
  double value = strtod(env, &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\n'))
    ++end;
  if (errno || end == env || *end || !is_bandwidth(value))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "TIDAL_SIM_LINK_GBPS='%s' is not a bandwidth "
                               "in GB/s (a number >= 0; 0 = unthrottled)",
                               env);
  *out_gbps = value;
  return nullptr;
}

void raise_peak(tidalrt_device_s *device, uint64_t end) {
  uint64_t peak = device->peak_device_bytes.load(std::memory_order_relaxed);
  while (peak < end && !device->peak_device_bytes.compare_exchange_weak(
                           peak, end, std::memory_order_relaxed)) {
  }
}

} // namespace

namespace tidalrt_device {

tidalrt_status_t copy_status(tidalrt_status_t status) {
  if (!status)
    return nullptr;
  return tidalrt_status_make(tidalrt_status_code(status), "%s",
                             tidalrt_status_message(status));
}

tidalrt_status_t check_range(const tidalrt_device_s *device, const char *call,
                             const char *what, uint64_t offset, uint64_t bytes,
                             uint64_t *end) {
  uint64_t size = device->memory_bytes;
  if (bytes > size || offset > size - bytes) {
    // offset + bytes may wrap; print the sum only when it does not.
    if (offset <= UINT64_MAX - bytes)
      return tidalrt_status_make(
          TIDALRT_INVALID_ARGUMENT,
          "%s: %s [%llu, %llu) (%llu bytes at offset %llu) is outside the "
          "device arena of %llu bytes",
          call, what, (unsigned long long)offset,
          (unsigned long long)(offset + bytes), (unsigned long long)bytes,
          (unsigned long long)offset, (unsigned long long)size);
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: %s (%llu bytes at offset %llu) is outside "
                               "the device arena of %llu bytes",
                               call, what, (unsigned long long)bytes,
                               (unsigned long long)offset,
                               (unsigned long long)size);
  }
  if (bytes)
    *end = std::max(*end, offset + bytes);
  return nullptr;
}

void note_launch(tidalrt_device_s *device, uint64_t end) {
  device->launches.fetch_add(1, std::memory_order_relaxed);
  raise_peak(device, end);
}

void note_copy(tidalrt_device_s *device, bool to_host, uint64_t end,
               uint64_t bytes, uint64_t nanoseconds) {
  device->copies.fetch_add(1, std::memory_order_relaxed);
  (to_host ? device->bytes_to_host : device->bytes_to_device)
      .fetch_add(bytes, std::memory_order_relaxed);
  device->copy_nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
  raise_peak(device, end);
}

} // namespace tidalrt_device

// A device whose arena and work belong to `backend`.
static tidalrt_status_t
create_backend_device(const backend *backend,
                      const tidalrt_device_options_t *options,
                      tidalrt_device_t **out_device) {
  auto *device = new (std::nothrow) tidalrt_device_s();
  if (!device)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_device_create: out of memory");
  if (tidalrt_status_t status = backend->create(
          options->memory_bytes, &device->native, &device->memory)) {
    delete device;
    return status;
  }
  device->kind = options->kind;
  device->memory_bytes = options->memory_bytes;
  device->backend = backend;
  *out_device = device;
  return nullptr;
}

extern "C" tidalrt_status_t
tidalrt_device_create(const tidalrt_device_options_t *options,
                      tidalrt_device_t **out_device) {
  if (out_device)
    *out_device = nullptr;
  if (!options || !out_device)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_device_create: NULL argument");
  double gbps = 0;
  tidalrt_device::shared_link *link_switch = nullptr;
  int kind = enum_value(options->kind);
  switch (kind) {
  case TIDALRT_DEVICE_HOST:
    if (!is_bandwidth(options->link_gbps))
      return tidalrt_status_make(
          TIDALRT_INVALID_ARGUMENT,
          "tidalrt_device_create: link_gbps %g is not a bandwidth in GB/s "
          "(finite, >= 0)",
          options->link_gbps);
    break;
  case TIDALRT_DEVICE_SIM:
    if (tidalrt_status_t status = link_bandwidth(options->link_gbps, &gbps))
      return status;
    if (tidalrt_status_t status =
            tidalrt_device::open_shared_link_from_env(&link_switch))
      return tidalrt_status_annotate(status, "tidalrt_device_create");
    break;
  case TIDALRT_DEVICE_CUDA:
    if (!cuda_backend())
      return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                                 "tidalrt_device_create: this program was "
                                 "linked without the CUDA runtime "
                                 "(tidalrt_cuda); use the sim or host device");
    return create_backend_device(cuda_backend(), options, out_device);
  default:
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_device_create: unknown device kind %d",
                               kind);
  }
  if (options->memory_bytes > SIZE_MAX - TIDALRT_ARRAY_ALIGNMENT)
    return tidalrt_status_make(
        TIDALRT_OUT_OF_MEMORY,
        "%s device: an arena of %llu bytes does not fit in memory",
        kind_name(options->kind), (unsigned long long)options->memory_bytes);
  // One allocation of exactly the budget (a 0-byte arena still gets a
  // valid, aligned base).
  void *memory = nullptr;
  size_t bytes = options->memory_bytes ? (size_t)options->memory_bytes
                                       : (size_t)TIDALRT_ARRAY_ALIGNMENT;
  if (posix_memalign(&memory, TIDALRT_ARRAY_ALIGNMENT, bytes) != 0) {
    tidalrt_device::close_shared_link(link_switch);
    return tidalrt_status_make(
        TIDALRT_OUT_OF_MEMORY,
        "%s device: cannot allocate an arena of %llu bytes",
        kind_name(options->kind), (unsigned long long)options->memory_bytes);
  }
  auto *device = new (std::nothrow) tidalrt_device_s();
  if (!device) {
    free(memory);
    tidalrt_device::close_shared_link(link_switch);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_device_create: out of memory");
  }
  device->kind = options->kind;
  device->memory = static_cast<uint8_t *>(memory);
  device->memory_bytes = options->memory_bytes;
  device->link_gbps = gbps;
  device->link_switch = link_switch;
  *out_device = device;
  return nullptr;
}

extern "C" void tidalrt_device_free(tidalrt_device_t *device) {
  if (!device)
    return;
  std::vector<tidalrt_stream_s *> streams;
  std::vector<tidalrt_event_s *> events;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    streams.swap(device->streams);
    events.swap(device->events);
  }
  // Drain every stream before stopping any: a stream may wait on an event
  // that another stream records.
  for (tidalrt_stream_s *stream : streams)
    tidalrt_status_free(synchronize_stream(stream));
  for (tidalrt_stream_s *stream : streams)
    destroy_stream(stream);
  for (tidalrt_event_s *event : events) {
    if (device->backend)
      device->backend->event_destroy(event->native);
    delete event;
  }
  if (device->backend)
    device->backend->destroy(device->native, device->memory);
  else
    free(device->memory);
  tidalrt_device::close_shared_link(device->link_switch);
  delete device;
}

extern "C" tidalrt_device_kind_t
tidalrt_device_kind(const tidalrt_device_t *device) {
  return device->kind;
}

extern "C" uint8_t *tidalrt_device_memory(tidalrt_device_t *device) {
  return device->memory;
}

extern "C" uint64_t
tidalrt_device_memory_bytes(const tidalrt_device_t *device) {
  return device->memory_bytes;
}

extern "C" double tidalrt_device_link_gbps(const tidalrt_device_t *device) {
  return device->link_gbps;
}

extern "C" tidalrt_status_t tidalrt_device_join_comm(tidalrt_device_t *device,
                                                     tidalrt_comm_s *comm,
                                                     double timeout_seconds) {
  if (!device || !comm)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_device_join_comm: NULL argument");
  if (!device->backend)
    return nullptr; // HOST and SIM kernels use the context's communicator
  if (!device->backend->join_comm)
    return tidalrt_status_make(
        TIDALRT_UNSUPPORTED,
        "the %s device has no collectives (this runtime was built without "
        "NCCL)",
        device->backend->name);
  return device->backend->join_comm(device->native, comm, timeout_seconds);
}

extern "C" tidalrt_status_t
tidalrt_device_synchronize(tidalrt_device_t *device) {
  if (!device)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_device_synchronize: NULL device");
  std::lock_guard<std::mutex> lock(device->mutex);
  tidalrt_status_t first = nullptr;
  for (tidalrt_stream_s *stream : device->streams) {
    tidalrt_status_t status = synchronize_stream(stream);
    if (first)
      tidalrt_status_free(status);
    else
      first = status;
  }
  return first;
}

extern "C" void tidalrt_device_stats(const tidalrt_device_t *device,
                                     tidalrt_device_stats_t *out_stats) {
  constexpr auto relaxed = std::memory_order_relaxed;
  out_stats->peak_device_bytes = device->peak_device_bytes.load(relaxed);
  out_stats->bytes_to_host = device->bytes_to_host.load(relaxed);
  out_stats->bytes_to_device = device->bytes_to_device.load(relaxed);
  out_stats->launches = device->launches.load(relaxed);
  out_stats->copies = device->copies.load(relaxed);
  out_stats->copy_seconds =
      (double)device->copy_nanoseconds.load(relaxed) * 1e-9;
  out_stats->compute_wait_seconds =
      (double)device->compute_wait_nanoseconds.load(relaxed) * 1e-9;
}

extern "C" void tidalrt_device_reset_stats(tidalrt_device_t *device) {
  constexpr auto relaxed = std::memory_order_relaxed;
  device->peak_device_bytes.store(0, relaxed);
  device->bytes_to_host.store(0, relaxed);
  device->bytes_to_device.store(0, relaxed);
  device->launches.store(0, relaxed);
  device->copies.store(0, relaxed);
  device->copy_nanoseconds.store(0, relaxed);
  device->compute_wait_nanoseconds.store(0, relaxed);
}

// The transfers of drivers (device.h, 0.6).
static tidalrt_status_t transfer(tidalrt_device_t *device, const char *call,
                                 transfer_kind kind, uint64_t offset,
                                 uint64_t src_offset, void *host, int value,
                                 uint64_t bytes) {
  if (!device)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL device",
                               call);
  if (!host && bytes &&
      (kind == transfer_kind::WRITE || kind == transfer_kind::READ))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: NULL host pointer for %llu bytes", call,
                               (unsigned long long)bytes);
  uint64_t end = 0;
  if (tidalrt_status_t status =
          check_range(device, call, "range", offset, bytes, &end))
    return status;
  if (kind == transfer_kind::MOVE)
    if (tidalrt_status_t status =
            check_range(device, call, "source range", src_offset, bytes, &end))
      return status;
  if (!bytes)
    return nullptr;
  uint8_t *at = device->memory + offset;
  if (device->backend)
    return tidalrt_status_annotate(
        device->backend->transfer(device->native, kind, at,
                                  device->memory + src_offset, host, value,
                                  bytes),
        "%s", call);
  switch (kind) {
  case transfer_kind::WRITE:
    memcpy(at, host, bytes);
    break;
  case transfer_kind::READ:
    memcpy(host, at, bytes);
    break;
  case transfer_kind::MOVE:
    memmove(at, device->memory + src_offset, bytes);
    break;
  case transfer_kind::FILL:
    memset(at, value, bytes);
    break;
  }
  return nullptr;
}

extern "C" tidalrt_status_t tidalrt_device_write(tidalrt_device_t *device,
                                                 uint64_t offset,
                                                 const void *host,
                                                 uint64_t bytes) {
  return transfer(device, "tidalrt_device_write", transfer_kind::WRITE, offset,
                  0, const_cast<void *>(host), 0, bytes);
}

extern "C" tidalrt_status_t tidalrt_device_read(tidalrt_device_t *device,
                                                uint64_t offset, void *host,
                                                uint64_t bytes) {
  return transfer(device, "tidalrt_device_read", transfer_kind::READ, offset, 0,
                  host, 0, bytes);
}

extern "C" tidalrt_status_t tidalrt_device_move(tidalrt_device_t *device,
                                                uint64_t dst_offset,
                                                uint64_t src_offset,
                                                uint64_t bytes) {
  return transfer(device, "tidalrt_device_move", transfer_kind::MOVE,
                  dst_offset, src_offset, nullptr, 0, bytes);
}

extern "C" tidalrt_status_t tidalrt_device_fill(tidalrt_device_t *device,
                                                uint64_t offset, int value,
                                                uint64_t bytes) {
  return transfer(device, "tidalrt_device_fill", transfer_kind::FILL, offset, 0,
                  nullptr, value, bytes);
}
