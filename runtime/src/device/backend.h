// backend.h - what a device kind implemented outside the core runtime
// provides: the CUDA device (runtime/src/cuda/backend.cpp, library
// tidalrt_cuda) fills one of these. The public calls of device.cpp,
// stream.cpp and event.cpp check their arguments, keep the handles, names,
// numbering, stats and sticky failures, and hand the work to the backend.
#ifndef TIDALRT_DEVICE_BACKEND_H
#define TIDALRT_DEVICE_BACKEND_H

#include "tidalrt/comm.h"
#include "tidalrt/device.h"

namespace tidalrt_device {

enum class transfer_kind { WRITE, READ, MOVE, FILL };

struct backend {
  const char *name; // "cuda"

  // Allocates the arena of `bytes` (at least 1 byte, so the base is valid)
  // and the device's own state.
  tidalrt_status_t (*create)(uint64_t bytes, void **native, uint8_t **memory);
  // Waits for the device, then frees the arena and the state.
  void (*destroy)(void *native, uint8_t *memory);
  // Synchronous transfer: WRITE host -> device, READ device -> host, MOVE
  // src_device -> device, FILL device bytes with `value`.
  tidalrt_status_t (*transfer)(void *native, transfer_kind kind,
                               uint8_t *device, const uint8_t *src_device,
                               void *host, int value, uint64_t bytes);

  tidalrt_status_t (*stream_create)(void *native_device,
                                    tidalrt_stream_kind_t kind,
                                    void **native_stream);
  // Waits for the stream's work, then frees it.
  void (*stream_destroy)(void *native_stream);
  // Compute stream: calls fn(arg) now with the stream current (kernels
  // enqueue on it) and returns fn's status. Host stream: enqueues fn(arg)
  // as a host function and returns only enqueue errors; a failure of fn is
  // reported by stream_synchronize and later host work is skipped.
  tidalrt_status_t (*launch)(void *native_stream, tidalrt_work_fn_t fn,
                             void *arg);
  // Enqueues an asynchronous copy (to_host: device -> host).
  tidalrt_status_t (*copy)(void *native_stream, void *host, uint8_t *device,
                           uint64_t bytes, bool to_host);
  // Blocks until the stream's work is done; returns a new status for an
  // asynchronous failure (a CUDA error, a failed host function), or NULL.
  // Adds the time its copies took since the last call to *copy_seconds.
  tidalrt_status_t (*stream_synchronize)(void *native_stream,
                                         double *copy_seconds);

  tidalrt_status_t (*event_create)(void *native_device, void **native_event);
  void (*event_destroy)(void *native_event);
  tidalrt_status_t (*event_record)(void *native_event, void *native_stream);
  tidalrt_status_t (*stream_wait_event)(void *native_stream,
                                        void *native_event);
  tidalrt_status_t (*event_synchronize)(void *native_event);
  int (*event_query)(void *native_event);

  // Pins (page-locks) host memory that copies use, so that they run
  // asynchronously at full bandwidth; unpin undoes it.
  tidalrt_status_t (*pin)(void *host, uint64_t bytes);
  void (*unpin)(void *host);

  // A program's constants in device memory, outside the arena: copies
  // `bytes` of `host` into a new device allocation (synchronously);
  // release frees it.
  tidalrt_status_t (*upload)(const void *host, uint64_t bytes, void **device);
  void (*release)(void *device);

  // Generated programs: the CUDA kernel of a CPU kernel (NULL: none), and
  // the stream that kernels prepared on the calling thread enqueue on
  // (NULL: none).
  tidalrt_kernel_fn_t (*kernel_for)(tidalrt_kernel_fn_t cpu);
  void (*set_current_stream)(void *native_stream);
  // Data-parallel runs (tidalrt_device_join_comm): joins the device's
  // collectives to the ranks of `comm`.
  tidalrt_status_t (*join_comm)(void *native_device, tidalrt_comm_s *comm,
                                double timeout_seconds);
};

// The CUDA backend, or NULL when tidalrt_cuda is not linked in.
const backend *cuda_backend();

} // namespace tidalrt_device

#endif // TIDALRT_DEVICE_BACKEND_H
