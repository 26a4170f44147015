//===- ParallelGrain.cpp - where a parallel loop starts to pay ------------===//
#include "ParallelGrain.h"
#include "KernelCall.h"
#include "Support.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <omp.h>

using namespace calibrate;

int64_t calibrate::grainFromPoints(const std::vector<GrainPoint> &points,
                                   double gain) {
  if (points.empty())
    return 0;
  int64_t grain = points.back().elements * 2;
  // From the largest size down, while the team keeps winning.
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->parallelUs > gain * it->serialUs)
      break;
    grain = it->elements;
  }
  return grain;
}

namespace {

constexpr int64_t kSerial = int64_t{1} << 40;

/// The median microseconds per call over 5 batches lasting `seconds` in
/// all, the runtime's grain at `grain`.
std::string timeCall(KernelCall &call, int64_t grain, double seconds,
                     double &us) {
  tidalrt_set_parallel_grain(grain);
  std::string error = call.run(); // warm up the team or the caches
  if (!error.empty())
    return error;
  Clock::time_point start = Clock::now();
  int64_t calls = 0;
  while (secondsSince(start) < seconds / 10) {
    if (!(error = call.run()).empty())
      return error;
    ++calls;
  }
  double once = secondsSince(start) / (double)std::max<int64_t>(1, calls);
  int64_t batch = std::max<int64_t>(1, (int64_t)(seconds / 5 / once));
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    start = Clock::now();
    if (!(error = call.run(batch)).empty())
      return error;
    times.push_back(secondsSince(start) * 1e6 / (double)batch);
  }
  us = median(times);
  return "";
}

} // namespace

int64_t calibrate::measureParallelGrain(double secondsPerSize, bool verbose,
                                        std::string &error) {
  if (omp_get_max_threads() <= 1)
    return 0;
  std::vector<GrainPoint> points;
  for (int64_t n = 16 << 10; n <= (1 << 20) && error.empty(); n *= 2) {
    Buffer x = allocate(n, error), y = allocate(n, error),
           z = allocate(n, error);
    if (!error.empty())
      break;
    KernelCall call(tidalrt_k_add, {{n}, {n}, {n}},
                    {x.get(), y.get(), z.get()});
    if (!(error = call.prepare()).empty())
      break;
    GrainPoint p{n, 0, 0};
    // Each mode twice, interleaved, the better kept: a busy moment
    // should not decide.
    double us;
    p.serialUs = p.parallelUs = 1e30;
    for (int round = 0; round < 2 && error.empty(); ++round) {
      error = timeCall(call, kSerial, secondsPerSize / 4, us);
      p.serialUs = std::min(p.serialUs, us);
      if (error.empty())
        error = timeCall(call, 1, secondsPerSize / 4, us);
      p.parallelUs = std::min(p.parallelUs, us);
    }
    if (verbose && error.empty())
      llvm::errs() << "tidal-calibrate: add [" << n
                   << "]: " << llvm::format("%.2f", p.serialUs)
                   << " us on 1 thread, " << llvm::format("%.2f", p.parallelUs)
                   << " us on " << omp_get_max_threads() << "\n";
    points.push_back(p);
  }
  tidalrt_set_parallel_grain(0);
  if (!error.empty())
    return 0;
  return grainFromPoints(points);
}
