//===- PlanExplain.h - the plan as a table for people -----------*- C++ -*-===//
//
// `tidalc --explain`: what the planner decided and why, read from the plan
// document (PlanFile.h), next to the all-device plan without a budget.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TARGET_PLANEXPLAIN_H
#define TIDAL_TARGET_PLANEXPLAIN_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tidal {

/// The explanation of `planJson` (buildPlanJson's document): the predicted
/// peaks and step time against `allDeviceJson` (the same step planned with
/// everything on the device and no budget; empty: not compared), what each
/// mechanism (streamed parameters, host ops, swaps, refetches,
/// recomputation) contributed, each tensor that is not simply on the
/// device with the reason, and every op with where it runs. False and
/// `error` on a malformed document.
bool explainPlan(llvm::StringRef planJson, llvm::StringRef allDeviceJson,
                 std::string &text, std::string &error);

} // namespace mlir::tidal

#endif // TIDAL_TARGET_PLANEXPLAIN_H
