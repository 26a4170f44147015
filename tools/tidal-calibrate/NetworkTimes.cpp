//===- NetworkTimes.cpp - the all-reduce between ranks --------------------===//
//
// See NetworkTimes.h.
//
//===----------------------------------------------------------------------===//

#include "NetworkTimes.h"
#include "Support.h"

#include "tidalrt/comm.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <memory>
#include <vector>

using namespace mlir::tidal;

namespace calibrate {

namespace {

struct CommDeleter {
  void operator()(tidalrt_comm_t *comm) const { tidalrt_comm_free(comm); }
};

std::string take(tidalrt_status_t status) {
  std::string text = tidalrt_status_message(status);
  tidalrt_status_free(status);
  return text;
}

} // namespace

bool measureNetwork(bool quick, bool verbose, NetworkResult &out,
                    std::string &error) {
  tidalrt_comm_options_t options = {TIDALRT_COMM_MPI, 120.0};
  tidalrt_comm_t *raw = nullptr;
  if (tidalrt_status_t status = tidalrt_comm_create(&options, &raw)) {
    error = "--network: cannot join the ranks: " + take(status);
    return false;
  }
  std::unique_ptr<tidalrt_comm_t, CommDeleter> comm(raw);
  const int64_t size = tidalrt_comm_size(raw);
  out.rank = tidalrt_comm_rank(raw);
  if (size < 2) {
    error = "--network times the all-reduce between ranks: start it with an "
            "MPI launcher on 2 or more (mpirun -np 2 tidal-calibrate "
            "--network ...)";
    return false;
  }
  // 4 KiB to 32 MiB (4 MiB with --quick): the small sizes fix the latency,
  // the large ones the bandwidth.
  std::vector<uint64_t> counts = {1024, 16384, 262144, 1048576};
  if (!quick) {
    counts.push_back(4194304);
    counts.push_back(8388608);
  }
  const int reps = quick ? 5 : 11;
  std::vector<float> data(counts.back(), 1.0f);
  std::vector<double> bytes, us;
  for (uint64_t count : counts) {
    std::vector<double> times;
    for (int r = -2; r < reps; ++r) {
      // Every rank starts together; the time is this rank's.
      if (tidalrt_status_t status = tidalrt_comm_barrier(raw)) {
        error = "--network: " + take(status);
        return false;
      }
      std::fill(data.begin(), data.begin() + count, 1.0f);
      Clock::time_point start = Clock::now();
      if (tidalrt_status_t status =
              tidalrt_comm_allreduce_f32(raw, data.data(), count)) {
        error = "--network: " + take(status);
        return false;
      }
      if (r >= 0)
        times.push_back(secondsSince(start) * 1e6);
    }
    // Rank 0 fits the slowest rank's medians: the step waits for it.
    double mine = median(times);
    std::vector<float> all(size, 0.0f);
    all[out.rank] = float(mine);
    if (tidalrt_status_t status =
            tidalrt_comm_allreduce_f32(raw, all.data(), uint64_t(size))) {
      error = "--network: " + take(status);
      return false;
    }
    double slowest = *std::max_element(all.begin(), all.end());
    bytes.push_back(double(count) * sizeof(float));
    us.push_back(slowest);
    if (verbose && out.rank == 0)
      llvm::errs() << llvm::format("network: %9.0f bytes: %10.1f us\n",
                                   bytes.back(), slowest);
  }
  // t = a + b * bytes: the slope from the two largest sizes (where the
  // bandwidth shows), the intercept from the smallest (where the latency
  // does); a least-squares line over all of them lets the large sizes'
  // noise swamp the latency.
  const size_t last = bytes.size() - 1;
  const double b = (us[last] - us[last - 1]) / (bytes[last] - bytes[last - 1]);
  const double a = us[0] - b * bytes[0];
  if (!(b > 0)) {
    error = "--network: the all-reduce did not take longer with more bytes "
            "(a busy machine?)";
    return false;
  }
  const double moved = 2.0 * double(size - 1) / double(size);
  NetworkProfile &p = out.network;
  p.transport = "mpi";
  p.ranks = size;
  p.link.name = "mpi (measured, " + std::to_string(size) + " ranks)";
  // bytes / us = 1e-3 GB/s.
  p.link.gbytesPerS = roundTo(moved / b * 1e-3, 3);
  p.link.latencyUs = roundTo(std::max(a / 2.0, 0.0), 2);
  p.link.calibrated = true;
  return true;
}

} // namespace calibrate
