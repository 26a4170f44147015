// comm.cpp - communicators (tidalrt/comm.h): argument checks, the
// single-process backend, and dispatch to the MPI backend when tidalrt_mpi
// is linked in.
#include "comm_backend.h"

#include <cstdlib>
#include <new>

// Defined by tidalrt_mpi; NULL (weak) when that library is not linked in.
extern "C" const tidalrt_comm::backend *tidalrt_mpi_comm_backend(void)
    __attribute__((weak));

const tidalrt_comm::backend *tidalrt_comm::mpi_backend() {
  return tidalrt_mpi_comm_backend ? tidalrt_mpi_comm_backend() : nullptr;
}

namespace {

tidalrt_status_t invalid(const char *call, const char *what) {
  return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: %s", call, what);
}

} // namespace

extern "C" tidalrt_status_t
tidalrt_comm_create(const tidalrt_comm_options_t *options,
                    tidalrt_comm_t **out) {
  static const char call[] = "tidalrt_comm_create";
  if (!options || !out)
    return invalid(call, "NULL argument");
  *out = nullptr;
  const tidalrt_comm::backend *backend = nullptr;
  switch (options->kind) {
  case TIDALRT_COMM_SINGLE:
    break;
  case TIDALRT_COMM_MPI:
    backend = tidalrt_comm::mpi_backend();
    if (!backend)
      return tidalrt_status_make(
          TIDALRT_UNSUPPORTED,
          "%s: this program was built without MPI (tidalrt_mpi is not "
          "linked in)",
          call);
    break;
  default:
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: unknown communicator kind %d", call,
                               (int)options->kind);
  }
  auto *comm = new (std::nothrow) tidalrt_comm_s();
  if (!comm)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "%s: out of memory",
                               call);
  if (backend) {
    double timeout =
        options->timeout_seconds > 0 ? options->timeout_seconds : 300.0;
    if (tidalrt_status_t status =
            backend->create(timeout, &comm->native, &comm->rank, &comm->size)) {
      delete comm;
      return tidalrt_status_annotate(status, "%s", call);
    }
    comm->backend = backend;
  }
  *out = comm;
  return nullptr;
}

extern "C" void tidalrt_comm_free(tidalrt_comm_t *comm) {
  if (!comm)
    return;
  tidalrt_comm::free_queue(comm->queue);
  if (comm->backend)
    comm->backend->destroy(comm->native);
  delete comm;
}

extern "C" const char *tidalrt_comm_backend(const tidalrt_comm_t *comm) {
  return comm && comm->backend ? comm->backend->name : "single";
}

extern "C" int64_t tidalrt_comm_rank(const tidalrt_comm_t *comm) {
  return comm ? comm->rank : 0;
}

extern "C" int64_t tidalrt_comm_size(const tidalrt_comm_t *comm) {
  return comm ? comm->size : 1;
}

extern "C" tidalrt_status_t
tidalrt_comm_allreduce_f32(tidalrt_comm_t *comm, float *data, uint64_t count) {
  static const char call[] = "tidalrt_comm_allreduce_f32";
  if (!comm || (!data && count))
    return invalid(call, "NULL argument");
  if (!comm->backend || comm->size == 1 || count == 0)
    return nullptr;
  tidalrt_comm::drain_queue(comm->queue);
  return comm->backend->allreduce_f32(comm->native, data, count);
}

extern "C" tidalrt_status_t tidalrt_comm_broadcast(tidalrt_comm_t *comm,
                                                   void *data, uint64_t bytes,
                                                   int64_t root) {
  static const char call[] = "tidalrt_comm_broadcast";
  if (!comm || (!data && bytes))
    return invalid(call, "NULL argument");
  if (root < 0 || root >= comm->size)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: root %lld outside the %lld ranks", call,
                               (long long)root, (long long)comm->size);
  if (!comm->backend || comm->size == 1 || bytes == 0)
    return nullptr;
  tidalrt_comm::drain_queue(comm->queue);
  return comm->backend->broadcast(comm->native, data, bytes, root);
}

extern "C" tidalrt_status_t tidalrt_comm_barrier(tidalrt_comm_t *comm) {
  if (!comm)
    return invalid("tidalrt_comm_barrier", "NULL argument");
  if (!comm->backend || comm->size == 1)
    return nullptr;
  tidalrt_comm::drain_queue(comm->queue);
  return comm->backend->barrier(comm->native);
}

extern "C" void tidalrt_comm_abort(tidalrt_comm_t *comm, int code) {
  if (comm && comm->backend)
    comm->backend->abort(comm->native, code);
  std::exit(code);
}
