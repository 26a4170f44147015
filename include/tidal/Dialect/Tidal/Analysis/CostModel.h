//===- CostModel.h - predicted op and step times ----------------*- C++ -*-===//
//
// A roofline estimate of each op's time on a device: the larger of its
// arithmetic (flops / peak flop rate) and its memory traffic (bytes read and
// written / bandwidth), plus a fixed per-kernel overhead. Views and
// constants cost nothing. The device figures come from a profile
// (DeviceProfile.h, docs/cost-model.md): measured by `tidal-calibrate`, or
// the documented defaults.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include "mlir/IR/Operation.h"

namespace mlir::tidal {

struct OpCost {
  double flops = 0;
  double bytes = 0; ///< operand and result bytes
  double us = 0;    ///< predicted duration
  bool kernel = false;
};

/// The cost of `op` on `device` (zero for views, constants and copies,
/// whose time is the link's).
OpCost estimateCost(Operation *op, const DeviceProfile &device);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H
