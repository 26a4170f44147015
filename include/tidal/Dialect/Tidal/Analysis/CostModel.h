//===- CostModel.h - predicted op and step times ----------------*- C++ -*-===//
//
// A roofline estimate of each op's time on a device: the larger of its
// arithmetic (flops / peak flop rate) and its memory traffic (bytes read and
// written / bandwidth), plus a fixed per-kernel overhead. Views and
// constants cost nothing. The device figures come from a profile; until
// profiles are calibrated by measurement (docs/memory-plan.md), the host
// default is a documented guess for one AVX2/AVX-512 server core pair.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::tidal {

struct DeviceProfile {
  std::string name;
  double gflops = 0;       ///< sustained GFLOP/s of the dense kernels
  double gbytesPerS = 0;   ///< memory bandwidth, GB/s
  double opOverheadUs = 0; ///< fixed cost of one kernel call, microseconds
  bool calibrated = false;
};

/// The uncalibrated host default: 100 GFLOP/s, 10 GB/s, 2 us per kernel.
DeviceProfile defaultHostProfile();

struct OpCost {
  double flops = 0;
  double bytes = 0; ///< operand and result bytes
  double us = 0;    ///< predicted duration
  bool kernel = false;
};

/// The cost of `op` on `device` (zero for views and constants).
OpCost estimateCost(Operation *op, const DeviceProfile &device);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H
