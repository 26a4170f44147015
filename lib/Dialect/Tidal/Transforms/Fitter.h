//===- Fitter.h - the budget-fitting engine's internals ---------*- C++ -*-===//
//
// The state and choices of the engine behind fitBudget (FitBudget.h),
// shared by its greedy loop (FitBudget.cpp) and its optimal mode
// (FitBudgetMilp.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITTER_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITTER_H

#include "FitBudget.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::tidal::fit {

/// What a swap costs even when the kernels hide its copies: four more ops
/// to issue and two waits. It keeps the planner from freeing a peak 64
/// bytes at a time.
inline constexpr double kSwapOverheadUs = 1.0;

/// Where a swap's copies go (positions: insert before the op there).
struct SwapPlan {
  int64_t waitAt = 0;
  int64_t prefetchAt = 0;
  double stallUs = 0;
};

/// The ops a recomputation clones, in definition order (the last defines
/// the tensor), and their predicted time.
struct RecomputePlan {
  SmallVector<Operation *, 3> chain;
  double us = 0;
};

struct Choice {
  enum Kind {
    Swap,
    Recompute,
    /// Move an earlier swap's prefetch to just after the peak, or the wait
    /// for its offload to just before it: the copy hides behind fewer
    /// kernels, but its bytes are not live at the peak.
    DelayPrefetch,
    AdvanceWait,
  } kind = Swap;
  Value value;
  int64_t bytes = 0;
  int64_t before = 0, after = 0; // the uses around the peak
  SwapPlan swap;
  RecomputePlan clone;
  Operation *move = nullptr; ///< the prefetch or wait to move
  int64_t target = 0;        ///< before the op at this position
  double costUs = 0;
};

class Fitter {
public:
  Fitter(func::FuncOp func, const FitBudgetOptions &options,
         FitBudgetStats &stats)
      : func(func), options(options), stats(stats),
        body(&func.getBody().front()) {
    func.walk([&](Operation *op) {
      if (auto id = op->getAttrOfType<IntegerAttr>(kRecomputeIdAttr))
        nextRecomputeId = std::max(nextRecomputeId, id.getInt() + 1);
    });
  }

  LogicalResult run();

private:
  LogicalResult solveExact();
  double opUs(Operation *op);
  double spare(DenseMap<Operation *, double> &used, Operation *op) {
    return std::max(0.0, opUs(op) - used.lookup(op));
  }
  double copyUs(int64_t bytes) const {
    return bytes / (options.linkGbps * 1e3);
  }
  std::optional<Choice> pick(const BufferLiveness &liveness,
                             ArrayRef<int64_t> live, int64_t peak);
  void offerTo(std::optional<Choice> &best, double &bestScore, Choice c);
  SwapPlan planSwap(const BufferLiveness &liveness, ArrayRef<int64_t> live,
                    const Choice &c, int64_t peak);
  std::optional<RecomputePlan> planRecompute(const BufferLiveness &liveness,
                                             ArrayRef<int64_t> live,
                                             const Choice &c, int64_t peak);
  bool chainFor(const BufferLiveness &liveness, Value v, int64_t at,
                RecomputePlan &plan, DenseSet<Operation *> &inChain);
  void applySwap(const BufferLiveness &liveness, const Choice &c);
  void applyRecompute(const BufferLiveness &liveness, const Choice &c);
  /// Uses of `from` at `next` or later (copies of it excepted) read `to`.
  void replaceFrom(Value from, Value to, Operation *next);

  func::FuncOp func;
  const FitBudgetOptions &options;
  FitBudgetStats &stats;
  Block *body;
  DenseMap<Operation *, double> kernelUs;
  /// Link time that copies already placed take under each kernel.
  DenseMap<Operation *, double> toHostUsed, toDeviceUsed;
  int64_t nextRecomputeId = 0;
  /// Each swapped or recomputed tensor's replacement, and the op from which
  /// on it replaces it (for clones placed later that read the tensor).
  DenseMap<Value, std::pair<Value, Operation *>> replacedFrom;
  /// Values given users since the last liveness analysis.
  DenseSet<Value> touched;
};

} // namespace mlir::tidal::fit

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITTER_H
