//===- NetworkTimes.h - the all-reduce between ranks ------------*- C++ -*-===//
//
// tidal-calibrate --network, started by an MPI launcher on N >= 2 ranks:
// times tidal's own deterministic all-reduce (tidalrt_comm_allreduce_f32,
// the gradient all-reduce of a --distributed mpi step) over a range of
// sizes and fits the cost model's formula to the medians,
//
//   t = 2 latency + 2 (N - 1) / N * bytes / bandwidth,
//
// through the smallest and the two largest sizes (DeviceProfile.h,
// allReduceMicroseconds).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_NETWORKTIMES_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_NETWORKTIMES_H

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include <string>

namespace calibrate {

struct NetworkResult {
  mlir::tidal::NetworkProfile network;
  int64_t rank = 0; ///< this process's rank: only rank 0 writes the profile
};

/// Measures the MPI network between the ranks this process was started
/// with; fails (with a one-line `error`) on one rank, without MPI, or when
/// the times do not fit the formula.
bool measureNetwork(bool quick, bool verbose, NetworkResult &out,
                    std::string &error);

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_NETWORKTIMES_H
