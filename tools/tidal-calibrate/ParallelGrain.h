//===- ParallelGrain.h - where a parallel loop starts to pay ----*- C++ -*-===//
//
// The runtime runs a kernel's loop on the calling thread below its parallel
// grain (tidalrt_set_parallel_grain): opening an OpenMP team and meeting at
// its barrier costs microseconds, more than a small loop takes. Where the
// crossover lies depends on the machine (core count, cache, how fast the
// team wakes up), so tidal-calibrate measures it and the profile carries it
// (host.parallel_grain, docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_PARALLELGRAIN_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_PARALLELGRAIN_H

#include <cstdint>
#include <string>
#include <vector>

namespace calibrate {

/// One measured size: microseconds per add call on one thread and on the
/// team.
struct GrainPoint {
  int64_t elements;
  double serialUs, parallelUs;
};

/// The grain from measured points (sorted by size): the smallest size from
/// which the team takes at most `gain` of the one-thread time, at that size
/// and at every larger one; twice the largest size when the team never
/// wins.
int64_t grainFromPoints(const std::vector<GrainPoint> &points,
                        double gain = 0.9);

/// Times the add kernel (three float32 arrays, as the bandwidth figure) at
/// 16Ki to 1Mi elements, doubling, on one thread and on OpenMP's current
/// team, each about `secondsPerSize`, and returns grainFromPoints of them.
/// 0 on one thread (nothing to measure). Restores the runtime's grain.
/// Errors go to `error`.
int64_t measureParallelGrain(double secondsPerSize, bool verbose,
                             std::string &error);

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_PARALLELGRAIN_H
