//===- OpTimes.h - measured kernel times of a step's ops --------*- C++ -*-===//
//
// `tidal-calibrate --ops STEP.mlir`: every distinct kernel call of the
// step (by opSignature, CostModel.h) timed through the runtime's kernel ABI,
// as the generated program calls it, for the profile's `host.op_us` table.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_OPTIMES_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_OPTIMES_H

#include <map>
#include <string>
#include <vector>

namespace calibrate {

struct OpTimesOptions {
  /// Each op is called for about this long after a warm-up; its time is
  /// the fastest of five such repeats.
  double secondsPerOp = 0.02;
  /// The forked child that measures is killed after this long.
  double timeoutS = 600;
  bool verbose = false;
};

/// Measures the kernel ops of every function in `files` (MLIR of the tidal
/// dialect, such as `tidalc --emit mlir --stop-after tidal-schedule`) and
/// adds their median microseconds per call to `times`, by signature, and
/// under kSequenceOpKey (CostModel.h) what each call of the largest
/// function costs beyond that when its ops run in order on their data.
/// Returns "" or an error naming the file or op.
std::string measureOpTimes(const std::vector<std::string> &files,
                           const OpTimesOptions &options,
                           std::map<std::string, double> &times);

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_OPTIMES_H
