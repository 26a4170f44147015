//===- ScheduleSwaps.cpp - offload idle tensors to fit a device budget ----===//
//
// tidal-schedule-swaps: FitBudget.h's engine with swaps (and, with the
// `recompute` option, recomputation priced against them).
//
//===----------------------------------------------------------------------===//

#include "FitBudget.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALSCHEDULESWAPSPASS
#define GEN_PASS_DEF_TIDALRECOMPUTEPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// Runs the engine on every function of `module` (or only `function`).
LogicalResult fitFunctions(ModuleOp module, StringRef function,
                           const FitBudgetOptions &options,
                           FitBudgetStats &stats) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() ||
        (!function.empty() && func.getSymName() != function))
      continue;
    if (failed(fitBudget(func, options, stats)))
      return failure();
  }
  return success();
}

struct ScheduleSwaps : tidal::impl::TidalScheduleSwapsPassBase<ScheduleSwaps> {
  using TidalScheduleSwapsPassBase::TidalScheduleSwapsPassBase;

  void runOnOperation() override {
    if (budget < 0 || linkGbps <= 0 || opsPerStep < 1) {
      getOperation().emitError("tidal-schedule-swaps: budget must be "
                               "non-negative, link-gbps positive and "
                               "ops-per-step at least 1");
      return signalPassFailure();
    }
    if (strategy != "greedy" && strategy != "milp" && strategy != "auto") {
      getOperation().emitError("tidal-schedule-swaps: unknown strategy '")
          << strategy << "' (expected greedy, milp or auto)";
      return signalPassFailure();
    }
    if (budget == 0)
      return;
    FitBudgetOptions options;
    options.budget = budget;
    options.linkGbps = linkGbps;
    options.alignment = alignment;
    if (failed(profileFromOptions(getOperation(), getArgument(), profile,
                                  gflops, gbytesPerS, opOverheadUs,
                                  options.device, &options.linkLatencyUs)))
      return signalPassFailure();
    options.swap = swap;
    options.recompute = recompute;
    options.milp = strategy == "milp";
    options.milpAuto = strategy == "auto";
    options.milpTimeLimitS = milpTimeLimit;
    options.opsPerStep = opsPerStep;
    options.passName = getArgument().str();
    FitBudgetStats stats;
    if (failed(fitFunctions(getOperation(), function, options, stats)))
      signalPassFailure();
    numMoved += stats.copiesMoved;
    numMilpCandidates += stats.milpCandidates;
    numSwapped += stats.swapped;
    bytesSwapped += stats.swappedBytes;
    numRefetched += stats.refetched;
    numRecomputed += stats.recomputed;
    numClones += stats.recomputedOps;
  }
};

struct Recompute : tidal::impl::TidalRecomputePassBase<Recompute> {
  using TidalRecomputePassBase::TidalRecomputePassBase;

  void runOnOperation() override {
    if (budget < 0 || maxChain < 1) {
      getOperation().emitError("tidal-recompute: budget must be "
                               "non-negative and max-chain at least 1");
      return signalPassFailure();
    }
    if (budget == 0)
      return;
    FitBudgetOptions options;
    options.budget = budget;
    options.alignment = alignment;
    if (failed(profileFromOptions(getOperation(), getArgument(), profile,
                                  gflops, gbytesPerS, opOverheadUs,
                                  options.device, &options.linkLatencyUs)))
      return signalPassFailure();
    options.swap = false;
    options.recompute = true;
    options.maxChain = maxChain;
    options.passName = getArgument().str();
    FitBudgetStats stats;
    if (failed(fitFunctions(getOperation(), function, options, stats)))
      signalPassFailure();
    numRecomputed += stats.recomputed;
    numClones += stats.recomputedOps;
  }
};

} // namespace
