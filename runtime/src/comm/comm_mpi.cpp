// comm_mpi.cpp - the MPI backend of communicators (tidalrt/comm.h), in the
// library tidalrt_mpi (Open MPI).
//
// Every collective is non-blocking and polled (MPI_Test) against the
// communicator's deadline, so a rank that died or hangs gives the others
// TIDALRT_UNAVAILABLE instead of a hang. After a timeout the communicator is
// broken: the collective may still be in flight, and MPI cannot cancel it.
//
// The all-reduce is deterministic: each rank owns a contiguous chunk of the
// data, receives every rank's part of its chunk (MPI_Ialltoallv), adds them
// in rank order and sends its sum to every rank (MPI_Iallgatherv). That
// moves what a ring all-reduce moves (2 (N-1)/N of the data per rank), and
// every rank ends with the same bits, run after run.
#include "comm_backend.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct mpi_comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  double timeout = 300.0;
  bool broken = false;
  std::vector<float> scratch; // [size][chunk]: the parts of this rank's chunk
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
};

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

tidalrt_status_t mpi_failed(const char *what, int code) {
  return tidalrt_status_make(TIDALRT_INTERNAL, "%s: %s", what,
                             error_string(code).c_str());
}

tidalrt_status_t broken(const mpi_comm *c, const char *what) {
  return tidalrt_status_make(TIDALRT_UNAVAILABLE,
                             "%s: rank %d of %d: an earlier collective timed "
                             "out, so the ranks are out of step",
                             what, c->rank, c->size);
}

// Polls `request` until it completes or the deadline passes: spinning for
// the first millisecond, then sleeping 50 us between tests.
tidalrt_status_t wait(mpi_comm *c, MPI_Request *request, const char *what) {
  auto start = clock_type::now();
  auto deadline = start + std::chrono::duration<double>(c->timeout);
  for (;;) {
    int done = 0;
    int code = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS)
      return mpi_failed(what, code);
    if (done)
      return nullptr;
    auto now = clock_type::now();
    if (now >= deadline) {
      c->broken = true;
      return tidalrt_status_make(
          TIDALRT_UNAVAILABLE,
          "%s: rank %d of %d waited %.0f s for the other ranks (one of them "
          "failed or is stuck)",
          what, c->rank, c->size, c->timeout);
    }
    if (now - start > std::chrono::milliseconds(1))
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

bool initialized_here = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

tidalrt_status_t create(double timeout, void **native, int64_t *rank,
                        int64_t *size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int code =
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS)
      return mpi_failed("MPI_Init_thread", code);
    // Bucketed all-reduces run on the communicator's own thread
    // (comm_async.cpp), one MPI call at a time.
    if (provided < MPI_THREAD_SERIALIZED)
      return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                                 "MPI_Init_thread: this MPI library does not "
                                 "allow calls from a second thread "
                                 "(MPI_THREAD_SERIALIZED)");
    if (!initialized_here) {
      initialized_here = true;
      std::atexit(finalize_at_exit);
    }
  }
  auto *c = new (std::nothrow) mpi_comm();
  if (!c)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
  // Errors come back as codes, not as MPI's default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int code = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
  if (code != MPI_SUCCESS) {
    delete c;
    return mpi_failed("MPI_Comm_dup", code);
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  c->timeout = timeout;
  auto n = static_cast<size_t>(c->size);
  c->send_counts.resize(n);
  c->send_displs.resize(n);
  c->recv_counts.resize(n);
  c->recv_displs.resize(n);
  *native = c;
  *rank = c->rank;
  *size = c->size;
  return nullptr;
}

void destroy(void *native) {
  auto *c = static_cast<mpi_comm *>(native);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !c->broken && c->comm != MPI_COMM_NULL)
    MPI_Comm_free(&c->comm);
  delete c;
}

tidalrt_status_t allreduce_f32(void *native, float *data, uint64_t count) {
  static const char what[] = "all-reduce";
  auto *c = static_cast<mpi_comm *>(native);
  if (c->broken)
    return broken(c, what);
  const uint64_t n = static_cast<uint64_t>(c->size);
  const uint64_t chunk = (count + n - 1) / n; // the first chunks' length
  if (chunk > static_cast<uint64_t>(INT_MAX) / n)
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                               "%s of %llu floats over %d ranks: more than "
                               "2^31 floats per message",
                               what, (unsigned long long)count, c->size);
  auto begin = [&](uint64_t r) {
    return r * chunk < count ? r * chunk : count;
  };
  auto length = [&](uint64_t r) { return begin(r + 1) - begin(r); };
  const uint64_t mine = length(static_cast<uint64_t>(c->rank));
  try {
    if (c->scratch.size() < n * chunk)
      c->scratch.resize(n * chunk);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "%s: %llu floats of scratch", what,
                               (unsigned long long)(n * chunk));
  }
  // Rank r sends me its part of my chunk; I send rank r my part of its.
  for (uint64_t r = 0; r < n; ++r) {
    c->send_counts[r] = static_cast<int>(length(r));
    c->send_displs[r] = static_cast<int>(begin(r));
    c->recv_counts[r] = static_cast<int>(mine);
    c->recv_displs[r] = static_cast<int>(r * mine);
  }
  MPI_Request request;
  int code =
      MPI_Ialltoallv(data, c->send_counts.data(), c->send_displs.data(),
                     MPI_FLOAT, c->scratch.data(), c->recv_counts.data(),
                     c->recv_displs.data(), MPI_FLOAT, c->comm, &request);
  if (code != MPI_SUCCESS)
    return mpi_failed("MPI_Ialltoallv", code);
  if (tidalrt_status_t status = wait(c, &request, what))
    return status;
  // My chunk's sum, in rank order, into place.
  float *out = data + begin(static_cast<uint64_t>(c->rank));
  for (uint64_t k = 0; k < mine; ++k) {
    float sum = c->scratch[k];
    for (uint64_t r = 1; r < n; ++r)
      sum += c->scratch[r * mine + k];
    out[k] = sum;
  }
  for (uint64_t r = 0; r < n; ++r) {
    c->recv_counts[r] = static_cast<int>(length(r));
    c->recv_displs[r] = static_cast<int>(begin(r));
  }
  code =
      MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, data, c->recv_counts.data(),
                      c->recv_displs.data(), MPI_FLOAT, c->comm, &request);
  if (code != MPI_SUCCESS)
    return mpi_failed("MPI_Iallgatherv", code);
  return wait(c, &request, what);
}

tidalrt_status_t broadcast(void *native, void *data, uint64_t bytes,
                           int64_t root) {
  static const char what[] = "broadcast";
  auto *c = static_cast<mpi_comm *>(native);
  if (c->broken)
    return broken(c, what);
  auto *p = static_cast<char *>(data);
  const uint64_t piece = 1u << 30;
  for (uint64_t done = 0; done < bytes; done += piece) {
    int n = static_cast<int>(bytes - done < piece ? bytes - done : piece);
    MPI_Request request;
    int code = MPI_Ibcast(p + done, n, MPI_BYTE, static_cast<int>(root),
                          c->comm, &request);
    if (code != MPI_SUCCESS)
      return mpi_failed("MPI_Ibcast", code);
    if (tidalrt_status_t status = wait(c, &request, what))
      return status;
  }
  return nullptr;
}

tidalrt_status_t barrier(void *native) {
  static const char what[] = "barrier";
  auto *c = static_cast<mpi_comm *>(native);
  if (c->broken)
    return broken(c, what);
  MPI_Request request;
  int code = MPI_Ibarrier(c->comm, &request);
  if (code != MPI_SUCCESS)
    return mpi_failed("MPI_Ibarrier", code);
  return wait(c, &request, what);
}

tidalrt_status_t allgather_f32(void *native, const float *mine, float *all,
                               uint64_t count) {
  static const char what[] = "all-gather";
  auto *c = static_cast<mpi_comm *>(native);
  if (c->broken)
    return broken(c, what);
  if (count > static_cast<uint64_t>(INT_MAX))
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                               "%s of %llu floats per rank: more than 2^31",
                               what, (unsigned long long)count);
  MPI_Request request;
  int code =
      MPI_Iallgather(mine, static_cast<int>(count), MPI_FLOAT, all,
                     static_cast<int>(count), MPI_FLOAT, c->comm, &request);
  if (code != MPI_SUCCESS)
    return mpi_failed("MPI_Iallgather", code);
  return wait(c, &request, what);
}

tidalrt_status_t reduce_scatter_f32(void *native, const float *send, float *out,
                                    uint64_t count) {
  static const char what[] = "reduce-scatter";
  auto *c = static_cast<mpi_comm *>(native);
  if (c->broken)
    return broken(c, what);
  const uint64_t n = static_cast<uint64_t>(c->size);
  if (count > static_cast<uint64_t>(INT_MAX))
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                               "%s of %llu floats per rank: more than 2^31",
                               what, (unsigned long long)count);
  try {
    if (c->scratch.size() < n * count)
      c->scratch.resize(n * count);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "%s: %llu floats of scratch", what,
                               (unsigned long long)(n * count));
  }
  MPI_Request request;
  int code =
      MPI_Ialltoall(send, static_cast<int>(count), MPI_FLOAT, c->scratch.data(),
                    static_cast<int>(count), MPI_FLOAT, c->comm, &request);
  if (code != MPI_SUCCESS)
    return mpi_failed("MPI_Ialltoall", code);
  if (tidalrt_status_t status = wait(c, &request, what))
    return status;
  // Every rank's part of this rank's chunk, added in rank order.
  for (uint64_t k = 0; k < count; ++k) {
    float sum = c->scratch[k];
    for (uint64_t r = 1; r < n; ++r)
      sum += c->scratch[r * count + k];
    out[k] = sum;
  }
  return nullptr;
}

void abort_run(void *, int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

const tidalrt_comm::backend the_backend = {
    "mpi",   create,    destroy,       allreduce_f32,      broadcast,
    barrier, abort_run, allgather_f32, reduce_scatter_f32,
};

} // namespace

extern "C" const tidalrt_comm::backend *tidalrt_mpi_comm_backend(void) {
  return &the_backend;
}
