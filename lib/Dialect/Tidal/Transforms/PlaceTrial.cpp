//===- PlaceTrial.cpp - one of tidal-place auto's candidate plans ---------===//
//
// Part of tidal-place (Place.cpp): a copy of the step placed and fitted, and
// its predicted step time.
//
//===----------------------------------------------------------------------===//

#include "PlaceTrial.h"
#include "Placer.h"

#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::tidal;

namespace mlir::tidal::place {

OwningOpRef<func::FuncOp> fittedTrial(func::FuncOp func, StringRef mode,
                                      const FitBudgetOptions &options,
                                      bool &moved, int64_t &smallest,
                                      const DenseSet<int64_t> &layers,
                                      int64_t *peakIndex, bool streamed,
                                      const DenseSet<int64_t> &streamOnly) {
  OwningOpRef<func::FuncOp> trial(func.clone());
  PlaceStats placed;
  Placer(*trial, options, hostOpsFor(*trial, mode, layers),
         streamed || mode == "stream",
         streamOnly.empty() ? DenseSet<Operation *>()
                            : hostOpsFor(*trial, "device", streamOnly))
      .run(placed);
  ScopedDiagnosticHandler quiet(func.getContext(),
                                [](Diagnostic &) { return success(); });
  FitBudgetStats stats;
  bool fits = succeeded(fitBudget(*trial, options, stats));
  if (FitBudgetOptions::TrialCounts *counts = options.trialCounts) {
    ++counts->trials;
    counts->fitted += fits;
    counts->unreachable += stats.unreachable;
  }
  if (!fits) {
    if (!options.exactSmallest) {
      if (peakIndex)
        *peakIndex = -1;
      return nullptr;
    }
    smallest = stats.smallestBudget;
    if (peakIndex) {
      IntegerAttr index =
          stats.peakOp
              ? stats.peakOp->getAttrOfType<IntegerAttr>(kPlaceIndexAttr)
              : IntegerAttr();
      *peakIndex = index ? index.getInt() : -1;
    }
    return nullptr;
  }
  moved = stats.swapped + stats.recomputed > 0;
  return trial;
}

StepTimeline predictedTimeline(func::FuncOp func,
                               const FitBudgetOptions &options) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  return predictTimeline(ops, options.device, defaultHostProfile(),
                         options.linkGbps, options.sharedCpu,
                         options.linkLatencyUs);
}

double predictedStepUs(func::FuncOp func, const FitBudgetOptions &options) {
  return predictedTimeline(func, options).stepUs;
}

} // namespace mlir::tidal::place
