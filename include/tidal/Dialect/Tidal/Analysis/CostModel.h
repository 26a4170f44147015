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

#include <string>

namespace mlir::tidal {

struct OpCost {
  double flops = 0;
  double bytes = 0; ///< operand and result bytes
  double us = 0;    ///< predicted duration
  bool kernel = false;
};

/// The cost of `op` on `device` (zero for views, constants and copies,
/// whose time is the link's). A time measured for `op`'s signature
/// (`device.opUs`) replaces the roofline's.
OpCost estimateCost(Operation *op, const DeviceProfile &device);

/// The `opUs` entry that holds the microseconds a call takes in a step
/// beyond its time in a loop of itself (added to every measured op).
inline constexpr const char *kSequenceOpKey = "(sequence)";

/// What determines a kernel call's time: the op's name, its operand and
/// result types, and its attributes other than the planner's (`tidal.*`),
/// as one line of text, e.g.
/// `tidal.relu(tensor<4x8xf32>)->(tensor<4x8xf32>)`, then, if some of its
/// operands and results (counted in that order) are channel-blocked
/// (tidal-block-channels), `[blocked:0,3]`. Ops with equal signatures run
/// the same kernel on the same shapes and layouts.
std::string opSignature(Operation *op);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_COSTMODEL_H
