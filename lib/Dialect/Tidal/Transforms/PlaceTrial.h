//===- PlaceTrial.h - one of tidal-place auto's candidate plans -*- C++ -*-===//
//
// A trial is a copy of the step with one placement applied (Placer.h) and
// fitted to the budget by tidal-schedule-swaps's engine; auto compares
// trials by their predicted step (Place.cpp). Host layers by cost
// (HostLayersByCost.cpp) extends the chosen trial.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACETRIAL_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACETRIAL_H

#include "FitBudget.h"

#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::tidal::place {

/// How much faster (predicted) the host optimizer's plan must be than an
/// all-device plan that fits to be taken: a margin for what the timeline
/// leaves out (thread hand-offs, the host's memory shared with the copies).
constexpr double kHostMargin = 0.95;

/// One of auto's candidate plans: a copy of the step placed and fitted.
struct Trial {
  StringRef mode;
  OwningOpRef<func::FuncOp> fitted;
  bool moved = false;
  int64_t smallest = std::numeric_limits<int64_t>::max();
  bool tried = false;
  /// Whether `smallest` is known: a trial fitted with `exactSmallest` off
  /// (Place.cpp's quick trials) reports it only once it is asked for
  /// (Place.cpp's knowFloor), by fitting again with it on.
  bool floorKnown = false;
  /// What was placed (so that more layers can be added): the mode given to
  /// hostOpsFor, the ops on the host besides that mode's, and whether the
  /// parameters host ops update live in host memory.
  StringRef fitMode = "device";
  DenseSet<int64_t> layers;
  bool streamed = false;
  /// With `streamed`: only the parameters of these updates (the joint
  /// MILP's choice); empty: those of every host update.
  DenseSet<int64_t> streamOnly;
};

/// A copy of `func` with `mode`'s placement, fitted to the budget by
/// tidal-schedule-swaps's engine (its diagnostics dropped); null if it does
/// not fit, and then, with `options.exactSmallest`, `smallest` (and
/// `*peakIndex`) say where its steps stopped. `moved`: whether the engine
/// swapped or recomputed anything.
/// `streamed`: the parameters that host ops update live in host memory
/// (mode "stream", or "device" with updates among `layers`); with
/// `streamOnly`, only those of the updates with these place indices.
OwningOpRef<func::FuncOp>
fittedTrial(func::FuncOp func, StringRef mode, const FitBudgetOptions &options,
            bool &moved, int64_t &smallest,
            const DenseSet<int64_t> &layers = {}, int64_t *peakIndex = nullptr,
            bool streamed = false, const DenseSet<int64_t> &streamOnly = {});

/// The predicted timeline of `func`'s step (StepTimeline.h), and its step
/// time.
StepTimeline predictedTimeline(func::FuncOp func,
                               const FitBudgetOptions &options);
double predictedStepUs(func::FuncOp func, const FitBudgetOptions &options);

/// Host layers by cost, after auto chose `chosen` (fitted): where its plan
/// swaps or recomputes a kernel's result, or copies it out for a host op,
/// that kernel runs on the host instead (its result then lives in host
/// memory and device readers prefetch it), alone or with the kernels that
/// read the result (which then never crosses the link). If that is
/// predicted at least 5% faster (kHostMargin), `chosen` becomes that plan,
/// with `tidal.host_layers_by_cost`, and the kernels added are inserted
/// into `added`; returns whether.
bool addLayersByCost(func::FuncOp func, const FitBudgetOptions &options,
                     Trial &chosen, DenseSet<int64_t> &added);

} // namespace mlir::tidal::place

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACETRIAL_H
