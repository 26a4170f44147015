// backend.cpp - the CUDA device (tidalrt/device.h, TIDALRT_DEVICE_CUDA):
// the backend functions that device.cpp, stream.cpp and event.cpp call
// (../device/backend.h).
//
// - The arena is one cudaMalloc of exactly the budget (at least 256 bytes,
//   so that an empty budget still has a valid base).
// - Streams are non-blocking CUDA streams. A compute stream's launch calls
//   the work on the calling thread with the stream current; the work (a
//   kernel of runtime/src/cuda) enqueues on it. A host stream's launch is a
//   cudaLaunchHostFunc, so CUDA events order host-placed kernels with the
//   GPU's streams, and the calling thread never blocks.
// - Copies are cudaMemcpyAsync between the arena and pinned host memory,
//   each between two timing events, so that the device's stats hold the
//   time copies really took on the link.
// - Events are CUDA events without timing.
// The device to use is TIDAL_CUDA_DEVICE (an ordinal); else, in a process
// that a launcher started as one of several on this machine, its local
// rank modulo the devices (each rank of a data-parallel run gets its own
// GPU); else device 0.
#include "cuda_device.h"
#include "kernel_table.h"
#ifdef TIDALRT_HAVE_NCCL
#include "comm/nccl_state.h"
#endif

#include "../device/backend.h"

#include <cstdlib>
#include <new>

namespace tidalrt {
namespace cuda {

namespace {

thread_local cuda_stream *current_stream = nullptr;

tidalrt_status_t make_device(uint64_t bytes, void **native, uint8_t **memory) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return tidalrt_status_make(
        TIDALRT_UNSUPPORTED, "no usable CUDA device: %s (%s)",
        cudaGetErrorString(error), cudaGetErrorName(error));
  if (count == 0)
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                               "no usable CUDA device: none is present");
  int ordinal = 0;
  if (const char *text = getenv("TIDAL_CUDA_DEVICE")) {
    char *end = nullptr;
    long value = strtol(text, &end, 10);
    if (!*text || *end || value < 0 || value >= count)
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "TIDAL_CUDA_DEVICE='%s' is not a device "
                                 "ordinal below %d",
                                 text, count);
    ordinal = static_cast<int>(value);
  } else {
    // Open MPI, MPICH/Hydra, Slurm, torchrun-style launchers.
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                             "SLURM_LOCALID", "LOCAL_RANK"}) {
      const char *text = getenv(name);
      char *end = nullptr;
      long value = text ? strtol(text, &end, 10) : -1;
      if (text && *text && !*end && value >= 0) {
        ordinal = static_cast<int>(value % count);
        break;
      }
    }
  }
  if ((error = cudaSetDevice(ordinal)) != cudaSuccess)
    return cudaStatus(error, "cudaSetDevice");
  void *arena = nullptr;
  size_t size = bytes < 256 ? 256 : static_cast<size_t>(bytes);
  if ((error = cudaMalloc(&arena, size)) != cudaSuccess) {
    cudaGetLastError(); // clear the (non-sticky) allocation error
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    return tidalrt_status_make(
        TIDALRT_OUT_OF_MEMORY,
        "cuda device %d: cannot allocate an arena of %llu bytes (%zu of %zu "
        "bytes free): %s",
        ordinal, (unsigned long long)bytes, free_bytes, total_bytes,
        cudaGetErrorString(error));
  }
  auto *device = new (std::nothrow) cuda_device();
  if (!device) {
    cudaFree(arena);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_device_create: out of memory");
  }
  device->ordinal = ordinal;
  *native = device;
  *memory = static_cast<uint8_t *>(arena);
  return nullptr;
}

void destroy_device(void *native, uint8_t *memory) {
  auto *device = static_cast<cuda_device *>(native);
  cudaDeviceSynchronize();
#ifdef TIDALRT_HAVE_NCCL
  nccl_free(device);
#endif
  if (device->cublas)
    cublasDestroy(device->cublas);
  if (device->cudnn)
    cudnnDestroy(device->cudnn);
  cudaFree(device->workspace);
  cudaFree(device->cublas_workspace);
  cudaFree(memory);
  delete device;
}

tidalrt_status_t transfer(void *, tidalrt_device::transfer_kind kind,
                          uint8_t *device, const uint8_t *src_device,
                          void *host, int value, uint64_t bytes) {
  using tidalrt_device::transfer_kind;
  cudaError_t error = cudaSuccess;
  switch (kind) {
  case transfer_kind::WRITE:
    error = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
    break;
  case transfer_kind::READ:
    error = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
    break;
  case transfer_kind::MOVE:
    error = cudaMemcpy(device, src_device, bytes, cudaMemcpyDeviceToDevice);
    break;
  case transfer_kind::FILL:
    error = cudaMemset(device, value, bytes);
    break;
  }
  // Device-to-device copies and memsets return before they finish.
  if (error == cudaSuccess)
    error = cudaDeviceSynchronize();
  return error == cudaSuccess ? nullptr : cudaStatus(error, "transfer");
}

tidalrt_status_t stream_create(void *native_device, tidalrt_stream_kind_t kind,
                               void **native_stream) {
  auto *stream = new (std::nothrow) cuda_stream();
  if (!stream)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
  stream->device = static_cast<cuda_device *>(native_device);
  stream->kind = kind;
  cudaError_t error =
      cudaStreamCreateWithFlags(&stream->stream, cudaStreamNonBlocking);
  if (error != cudaSuccess) {
    delete stream;
    return cudaStatus(error, "cudaStreamCreateWithFlags");
  }
  *native_stream = stream;
  return nullptr;
}

void stream_destroy(void *native_stream) {
  auto *stream = static_cast<cuda_stream *>(native_stream);
  cudaStreamSynchronize(stream->stream);
  cudaStreamDestroy(stream->stream);
  for (auto &pair : stream->timing) {
    cudaEventDestroy(pair.first);
    cudaEventDestroy(pair.second);
  }
  tidalrt_status_free(stream->failure);
  delete stream;
}

struct host_call {
  cuda_stream *stream;
  tidalrt_work_fn_t fn;
  void *arg;
};

// Runs a host-stream launch on the CUDA driver's thread.
void CUDART_CB run_host_call(void *data) {
  auto *call = static_cast<host_call *>(data);
  cuda_stream *stream = call->stream;
  if (!stream->failed.load(std::memory_order_acquire)) {
    if (tidalrt_status_t status = call->fn(call->arg)) {
      std::lock_guard<std::mutex> lock(stream->mutex);
      if (stream->failure)
        tidalrt_status_free(status);
      else
        stream->failure = status;
      stream->failed.store(true, std::memory_order_release);
    }
  }
  delete call;
}

tidalrt_status_t launch(void *native_stream, tidalrt_work_fn_t fn, void *arg) {
  auto *stream = static_cast<cuda_stream *>(native_stream);
  if (stream->kind == TIDALRT_STREAM_HOST) {
    auto *call = new (std::nothrow) host_call{stream, fn, arg};
    if (!call)
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
    cudaError_t error = cudaLaunchHostFunc(stream->stream, run_host_call, call);
    if (error != cudaSuccess) {
      delete call;
      return cudaStatus(error, "cudaLaunchHostFunc");
    }
    return nullptr;
  }
  cuda_stream *previous = current_stream;
  current_stream = stream;
  tidalrt_status_t status = fn(arg);
  current_stream = previous;
  return status;
}

tidalrt_status_t copy(void *native_stream, void *host, uint8_t *device,
                      uint64_t bytes, bool to_host) {
  auto *stream = static_cast<cuda_stream *>(native_stream);
  if (stream->timed == stream->timing.size()) {
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaError_t error = cudaEventCreate(&start);
    if (error == cudaSuccess)
      error = cudaEventCreate(&stop);
    if (error != cudaSuccess) {
      if (start)
        cudaEventDestroy(start);
      return cudaStatus(error, "cudaEventCreate");
    }
    try {
      stream->timing.emplace_back(start, stop);
    } catch (const std::bad_alloc &) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
    }
  }
  auto &pair = stream->timing[stream->timed++];
  cudaError_t error = cudaEventRecord(pair.first, stream->stream);
  if (error == cudaSuccess)
    error = to_host ? cudaMemcpyAsync(host, device, bytes,
                                      cudaMemcpyDeviceToHost, stream->stream)
                    : cudaMemcpyAsync(device, host, bytes,
                                      cudaMemcpyHostToDevice, stream->stream);
  if (error == cudaSuccess)
    error = cudaEventRecord(pair.second, stream->stream);
  return error == cudaSuccess ? nullptr : cudaStatus(error, "cudaMemcpyAsync");
}

tidalrt_status_t stream_synchronize(void *native_stream, double *seconds) {
  auto *stream = static_cast<cuda_stream *>(native_stream);
#ifdef TIDALRT_HAVE_NCCL
  // A compute stream that waits for collectives waits with the run's
  // timeout: a peer that died must not hang this rank.
  if (stream->device->nccl && stream->kind == TIDALRT_STREAM_COMPUTE) {
    if (tidalrt_status_t status =
            nccl_synchronize(stream->device->nccl, stream->stream))
      return status;
  }
#endif
  cudaError_t error = cudaStreamSynchronize(stream->stream);
  if (error != cudaSuccess)
    return tidalrt_status_annotate(
        cudaStatus(error, "the stream's work failed"),
        "kernels run asynchronously: set TIDAL_CUDA_SYNC=1 to name the "
        "failing op");
  for (size_t i = 0; i < stream->timed; ++i) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, stream->timing[i].first,
                             stream->timing[i].second) == cudaSuccess)
      *seconds += ms * 1e-3;
  }
  stream->timed = 0;
  std::lock_guard<std::mutex> lock(stream->mutex);
  tidalrt_status_t failure = stream->failure; // reported once
  stream->failure = nullptr;
  return failure;
}

tidalrt_status_t event_create(void *, void **native_event) {
  cudaEvent_t event = nullptr;
  cudaError_t error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (error != cudaSuccess)
    return cudaStatus(error, "cudaEventCreateWithFlags");
  *native_event = event;
  return nullptr;
}

void event_destroy(void *native_event) {
  cudaEventDestroy(static_cast<cudaEvent_t>(native_event));
}

tidalrt_status_t event_record(void *native_event, void *native_stream) {
  cudaError_t error =
      cudaEventRecord(static_cast<cudaEvent_t>(native_event),
                      static_cast<cuda_stream *>(native_stream)->stream);
  return error == cudaSuccess ? nullptr : cudaStatus(error, "cudaEventRecord");
}

tidalrt_status_t stream_wait_event(void *native_stream, void *native_event) {
  cudaError_t error =
      cudaStreamWaitEvent(static_cast<cuda_stream *>(native_stream)->stream,
                          static_cast<cudaEvent_t>(native_event), 0);
  return error == cudaSuccess ? nullptr
                              : cudaStatus(error, "cudaStreamWaitEvent");
}

tidalrt_status_t event_synchronize(void *native_event) {
  cudaError_t error =
      cudaEventSynchronize(static_cast<cudaEvent_t>(native_event));
  return error == cudaSuccess ? nullptr
                              : cudaStatus(error, "cudaEventSynchronize");
}

int event_query(void *native_event) {
  return cudaEventQuery(static_cast<cudaEvent_t>(native_event)) !=
         cudaErrorNotReady;
}

tidalrt_status_t pin(void *host, uint64_t bytes) {
  cudaError_t error = cudaHostRegister(host, bytes, cudaHostRegisterDefault);
  return error == cudaSuccess ? nullptr : cudaStatus(error, "cudaHostRegister");
}

void unpin(void *host) { cudaHostUnregister(host); }

tidalrt_status_t upload(const void *host, uint64_t bytes, void **device) {
  *device = nullptr;
  cudaError_t error = cudaMalloc(device, bytes ? bytes : 1);
  if (error != cudaSuccess)
    return cudaStatus(error, "cudaMalloc (the program's constants)");
  error = cudaMemcpy(*device, host, bytes, cudaMemcpyHostToDevice);
  if (error != cudaSuccess) {
    cudaFree(*device);
    *device = nullptr;
    return cudaStatus(error, "cudaMemcpy (the program's constants)");
  }
  return nullptr;
}

void release(void *device) { cudaFree(device); }

void set_current_stream(void *native_stream) {
  current_stream = static_cast<cuda_stream *>(native_stream);
}

#ifdef TIDALRT_HAVE_NCCL
tidalrt_status_t join_comm(void *native_device, tidalrt_comm_s *comm,
                           double timeout_seconds) {
  return nccl_join(static_cast<cuda_device *>(native_device), comm,
                   timeout_seconds);
}
#endif

const tidalrt_device::backend the_backend = {
    "cuda",
    make_device,
    destroy_device,
    transfer,
    stream_create,
    stream_destroy,
    launch,
    copy,
    stream_synchronize,
    event_create,
    event_destroy,
    event_record,
    stream_wait_event,
    event_synchronize,
    event_query,
    pin,
    unpin,
    upload,
    release,
    cudaKernelFor,
    set_current_stream,
#ifdef TIDALRT_HAVE_NCCL
    join_comm,
#else
    nullptr,
#endif
};

} // namespace

cuda_stream *currentLaunchStream() { return current_stream; }

tidalrt_status_t cudaStatus(cudaError_t error, const char *what) {
  return tidalrt_status_make(TIDALRT_INTERNAL, "%s: CUDA error %s: %s", what,
                             cudaGetErrorName(error),
                             cudaGetErrorString(error));
}

} // namespace cuda
} // namespace tidalrt

extern "C" const tidalrt_device::backend *tidalrt_cuda_backend(void) {
  return &tidalrt::cuda::the_backend;
}
