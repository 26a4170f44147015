//===- PlanFile.h - the plan JSON and its trace -----------------*- C++ -*-===//
//
// `tidalc --emit plan` and `--trace`: a planned module described for people
// and tools (SPEC section 3, docs/memory-plan.md). Both read only the IR: the
// block order of the step function is the schedule, the offsets are the
// plan, and lifetimes come from BufferLiveness.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TARGET_PLANFILE_H
#define TIDAL_TARGET_PLANFILE_H

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace mlir::tidal {

struct PlanFileInfo {
  std::string model;    ///< the ONNX file's name
  std::string target;   ///< cpu, sim or cuda
  std::string stepFunc; ///< the function planned in detail
  std::string mode;     ///< train or forward
  std::optional<int64_t> budgetBytes;
  std::string schedule; ///< tidal-schedule strategy
  std::string strategy; ///< tidal-plan-memory strategy
  bool inPlace = true;
  double linkGbps = 16.0;    ///< host<->device copies (sim, cuda), as planned
  double linkLatencyUs = -1; ///< per copy (negative: the default link's)
  int64_t linkShare = 1;     ///< devices sharing the link (tidalc --link-share)
  /// The kernels' device (the host CPU on the cpu and sim targets); empty
  /// name: the uncalibrated host default.
  DeviceProfile compute;
  int64_t alignment = 64;
  double planSeconds = 0; ///< compile time up to the plan
};

/// The plan document. Fails (with a diagnostic) if the step function is
/// missing or has no plan.
FailureOr<std::string> buildPlanJson(ModuleOp module, const PlanFileInfo &info);

/// The planned schedule as a Chrome/Perfetto trace: one slice per kernel
/// at its predicted start and duration, and a counter track of the bytes
/// live in the arena.
FailureOr<std::string> buildPlanTrace(ModuleOp module,
                                      const PlanFileInfo &info);

} // namespace mlir::tidal

#endif // TIDAL_TARGET_PLANFILE_H
