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
#include "PeakIndex.h"

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/FlatStep.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace mlir::tidal::fit {

/// What a swap costs even when the kernels hide its copies: four more ops
/// to issue and two waits. It keeps the planner from freeing a peak 64
/// bytes at a time.
inline constexpr double kSwapOverheadUs = 1.0;
/// The optimal mode with placement: re-solves after re-pricing the
/// placements against the last choice (FitBudgetOptions::placementEffect).
inline constexpr int kPlacementRounds = 12;
/// The optimal mode's score of a choice the greedy loop cannot complete is
/// its step plus this.
inline constexpr double kUnfittedUs = 1e9;
/// The optimal mode with placement: after the rounds, at most this many
/// solves search around the placements of at most this many of the best
/// choices, and at most this many placements not in a choice are tried
/// in.
inline constexpr int kLocalSearchSolves = 64;
inline constexpr int kLocalSearchStarts = 3;
inline constexpr int kLocalSearchAdds = 8;
/// The optimal mode with layer placement: at most this many kernels are
/// candidates (FitBudgetOptions::placeLayers).
inline constexpr int kMaxLayerCandidates = 64;
/// The price of a layer option in the MILP's first solve, which takes
/// layers only where nothing else reaches the budget.
inline constexpr double kLayersLastUs = 1e6;
/// A refetch's two ops.
inline constexpr double kRefetchOverheadUs = 0.5;
/// A choice's score (predicted cost in microseconds per byte freed) as
/// pick() compares it: the low bits of the mantissa cleared, so that two
/// costs summed in different orders compare equal, while the order stays
/// total (and monotone: a lower bound's rank is never above the bounded
/// score's).
inline double rankScore(double score) {
  int exp = 0;
  double mantissa = std::frexp(score, &exp);
  return std::ldexp(std::floor(std::ldexp(mantissa, 32)), exp - 32);
}

/// The order in which pick() prefers choices: the least score, then the
/// most bytes, then the longest idle span around the peak, then the
/// earliest candidate. A total order, so that pick() may skip a tensor
/// that cannot come first without pricing it and still choose what
/// pricing every tensor would choose. A lower bound on a score ranks at
/// or below the score (rankScore is monotone), so it prunes exactly.
struct Rank {
  double score = 0;
  int64_t bytes = 0;
  int64_t idle = 0;
  size_t order = 0;
  bool beats(const Rank &o) const {
    if (score != o.score)
      return score < o.score;
    if (bytes != o.bytes)
      return bytes > o.bytes;
    if (idle != o.idle)
      return idle > o.idle;
    return order < o.order;
  }
};

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
    /// Drop the device copy of a host-resident argument (a streamed
    /// parameter) after its use before the peak, and prefetch the host
    /// value again before its next use: half a swap, as the host still
    /// holds the bytes.
    Refetch,
    /// The optimal mode with placement: run the optimizer update `move`
    /// (place index `target`) on the host with its state, and with
    /// `streamed` its parameter in host memory too
    /// (FitBudgetOptions::placeUpdates).
    PlaceUpdate,
    /// The optimal mode with layer placement: run the kernel `move`
    /// (place index `target`) on the host, its results in host memory
    /// (FitBudgetOptions::placeLayers).
    PlaceLayer,
  } kind = Swap;
  bool streamed = false;
  Value value;
  Value source; ///< Refetch: the host value the copy was prefetched from
  /// Refetch: every idle gap of the copy that reaches the peak's level,
  /// in order (the one around the peak among them), each with its
  /// prefetch: a copy used at every step of an unrolled loop is dropped
  /// across the whole plateau at once, and priced for all of it.
  struct Gap {
    int64_t before = 0, after = 0;
    SwapPlan swap;
  };
  SmallVector<Gap, 1> gaps;
  int64_t bytes = 0;
  int64_t before = 0, after = 0; // the uses around the peak
  SwapPlan swap;
  RecomputePlan clone;
  Operation *move = nullptr; ///< the prefetch or wait to move
  int64_t target = 0;        ///< before the op at this position
  double costUs = 0;
};

/// The optimal mode's placements: place indices run on the host, and
/// those whose parameter is also streamed.
using PlacementSets = std::pair<DenseSet<int64_t>, DenseSet<int64_t>>;

/// What the optimal mode's search after its first solve works on
/// (Fitter::searchAround): the problem and its options (choices[k][o] is
/// option o of candidate k), the placement candidates, and solveExact's
/// measures of placements; what it did (solves scored, the kept choice's
/// predicted step) comes back in it.
struct MilpSearch {
  const BufferLiveness &liveness;
  MilpProblem &problem;
  SmallVectorImpl<SmallVector<Choice, 2>> &choices;
  ArrayRef<std::pair<int, Operation *>> placements; ///< candidate, op
  std::function<PlacementSets(ArrayRef<int>)> placedBy;
  std::function<double(const PlacementSets &)> stepWith;
  std::function<void(const PlacementSets &)> repricePlacements;
  std::function<double()> secondsLeft;
  double priceS = 0; ///< what pricing every placement once took
  int solves = 0;
  double scoreUs = -1;
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
  /// Whether run() keeps the smallest packed arena along its steps, for the
  /// error's smallest budget. Packing every state is most of the time on a
  /// large graph; without it a failed run returns failure silently.
  bool trackSmallest = true;

private:
  LogicalResult solveExact();
  double opUs(Operation *op);
  double spare(DenseMap<Operation *, double> &used, Operation *op) {
    return std::max(0.0, opUs(op) - used.lookup(op));
  }
  /// spare() at position `p` of the current analysis (collectCandidates),
  /// from `usedAt` (hostUsedAt or deviceUsedAt) without a map lookup.
  double spareAt(const std::vector<double> &usedAt, int64_t p) const {
    return std::max(0.0, usAt[p] - usedAt[p]);
  }
  /// A copy's bytes over the link, plus its fixed cost where a profile
  /// gave one (FitBudgetOptions::linkLatencyUs).
  double copyUs(int64_t bytes) const {
    return bytes / (options.linkGbps * 1e3) +
           std::max(options.linkLatencyUs, 0.0);
  }
  std::optional<Choice> pick(const BufferLiveness &liveness,
                             const PeakIndex &peaks, int64_t peak);
  /// The values pick() may choose in this analysis, in the order it
  /// considers them: device tensors with a buffer of their own that is not
  /// persistent or returned (function arguments, kernel results, and waited
  /// prefetches of host-resident arguments with their `source`) and that
  /// only kernels use, with their definition, last use and the sorted
  /// positions of their users (userPositions[firstUser, +numUsers)). pick()
  /// looks only at those live across its peak: a scan of this array
  /// instead of every value's liveness lookups and use lists (the step loop
  /// runs thousands of picks on deep nets). A value's users change within
  /// an analysis only when a step touches it, and pick() skips those.
  struct Candidate {
    Value value, source;
    int64_t def, last;
    size_t firstUser, numUsers;
    int64_t bytes;
    bool defined; ///< a kernel's result (def is its op's position)
  };
  void collectCandidates(const BufferLiveness &liveness);
  std::vector<Candidate> candidates;
  /// The candidates by increasing lower bound on their score (no choice of
  /// one costs less per byte than a swap's or refetch's overhead, or its
  /// defining op's time), with what pick() tests first, side by side (a
  /// scan per pick over the whole graph's tensors).
  struct Bound {
    double lowerBound;
    int64_t def, last;
    unsigned index;
  };
  std::vector<Bound> byBound;
  std::vector<int64_t> userPositions;
  /// The spare link time (spare()) under the kernels at positions 1..p,
  /// each direction, as at the analysis' start: copies applied since then
  /// only took from it, so a copy placed between two positions hides at
  /// most the difference.
  std::vector<double> toHostSpare, toDeviceSpare;
  /// More than the rounding of a difference of two of those sums.
  double spareSlack = 0;
  /// By position of the analysis collectCandidates saw last
  /// (`positionsOf`): each op's opUs() and the link time copies take under
  /// it (toHostUsed, toDeviceUsed), which claimLink keeps up to date. The
  /// pricing loops walk positions; a map lookup per op and position was a
  /// tenth of a deep net's fit.
  std::vector<double> usAt, hostUsedAt, deviceUsedAt;
  const BufferLiveness *positionsOf = nullptr;
  /// The ops of that analysis, in order, while those arrays agree with the
  /// maps (claimLink on another analysis updates the maps alone and clears
  /// this): the next analysis carries their values over. Ops are never
  /// erased while the fitter runs, so an op here is the op there.
  std::vector<Operation *> lastOps;
  /// How far ahead in lastOps an op is looked for.
  static constexpr size_t kCarryWindow = 8;
  /// Keeps `c` in `best` if its rank (`order`: its place among the
  /// choices offered) beats `bestRank`.
  void offerTo(std::optional<Choice> &best, Rank &bestRank, Choice c,
               size_t order);
  SwapPlan planSwap(const BufferLiveness &liveness, ArrayRef<int64_t> live,
                    const Choice &c, int64_t peak);
  /// Where a prefetch after `peak` hides its copy before `c.after`, and the
  /// stall left: part of planSwap, and all of a refetch.
  void planPrefetch(const BufferLiveness &liveness, ArrayRef<int64_t> live,
                    const Choice &c, int64_t peak, SwapPlan &plan);
  std::optional<RecomputePlan> planRecompute(const BufferLiveness &liveness,
                                             ArrayRef<int64_t> live,
                                             const Choice &c, int64_t peak);
  bool chainFor(const BufferLiveness &liveness, Value v, int64_t at,
                RecomputePlan &plan, DenseSet<Operation *> &inChain,
                SmallVectorImpl<Operation *> &visited);
  /// planRecompute's chain for a value before its use at `at`, kept for
  /// the rest of the liveness analysis: the chain depends only on the
  /// analysis and on the operands of the ops it looked at (`visited`), so
  /// it stays exact until a step rewires one of those (`rewired`). The
  /// picks of one analysis then walk each candidate's chain once instead
  /// of once per pick.
  struct ChainMemo {
    int64_t at = 0;
    bool ok = false;
    RecomputePlan plan;
    SmallVector<Operation *, 4> visited;
    int64_t extra = 0; ///< the aligned bytes of the chain's other results
  };
  DenseMap<Value, ChainMemo> chainMemo;
  /// Ops whose operands replaceFrom changed since the analysis began.
  DenseSet<Operation *> rewired;
  /// The copies of this analysis and their waits' positions (pick's moves
  /// of earlier copies look at these only, at those in flight at the peak).
  struct CopyWait {
    int64_t at, waited;
  };
  std::vector<CopyWait> copyWaits;
  void applySwap(const BufferLiveness &liveness, const Choice &c);
  void applyRecompute(const BufferLiveness &liveness, const Choice &c);
  void applyRefetch(const BufferLiveness &liveness, const Choice &c);
  /// The optimal mode's choice (option `choice[k]` of candidate k, -1:
  /// none) applied: refetches first, each copy's gaps together and in
  /// order; then swaps; then clones, which may read the swapped or
  /// refetched copies. Placements are left to the caller.
  void applyChosen(const BufferLiveness &liveness,
                   ArrayRef<SmallVector<Choice, 2>> choices,
                   ArrayRef<int> choice);
  /// The optimal mode: a choice applied to a copy of the function (its
  /// swaps, recomputations and refetches, then the placements `hosted`
  /// and `streamed`), the rest fitted by the greedy loop as after the
  /// solve, and predicted. By position p of the analysis (0:
  /// before the first op), just after the op there: the compute stream's
  /// clock and when a copy issued there could start on each direction of
  /// the link (StepTimeline's computeDoneUs, toHostReadyUs,
  /// toDeviceReadyUs).
  struct ChoiceTimes {
    double stepUs = 0;
    /// Whether the greedy loop fitted the rest of the budget.
    bool fits = true;
    std::vector<double> computeDone, toHostReady, toDeviceReady;
  };
  /// False if the placements do not apply.
  bool predictChoice(const BufferLiveness &liveness,
                     ArrayRef<SmallVector<Choice, 2>> choices,
                     ArrayRef<int> choice, const DenseSet<int64_t> &hosted,
                     const DenseSet<int64_t> &streamed, ChoiceTimes &out);
  /// After the first solve (and, with layers, the layers-last one): the
  /// rounds and the search around the best choice's placements; the best
  /// choice scored replaces `solution`.
  LogicalResult searchAround(MilpSearch &search, MilpSolution *solution,
                             const std::optional<MilpSolution> &layersLast);
  /// A swap's or refetch's cost against a predicted choice: each copy
  /// starts after its op once the link's direction is free of the copies
  /// and host ops before it, and stalls the compute stream where it is
  /// waited for; plus the ops' overhead. Other kinds: their own cost.
  double copyCostUs(const ChoiceTimes &times, const Choice &c) const;
  /// The link time a copy of `bytes` takes under the kernels at positions
  /// [from, to), claimed in `used`.
  /// `usedAt`: `used` by position (hostUsedAt or deviceUsedAt), updated
  /// too where `liveness` is the one they describe.
  void claimLink(const BufferLiveness &liveness,
                 DenseMap<Operation *, double> &used,
                 std::vector<double> &usedAt, int64_t bytes, int64_t from,
                 int64_t to);
  /// Uses of `from` at `next` or later (copies of it excepted) read `to`.
  void replaceFrom(Value from, Value to, Operation *next);

  /// The ops the apply functions insert and the copies run() moves, for
  /// the FlatStep that run() keeps up to date between analyses (with
  /// `rewired`, the ops whose operands changed).
  struct Insertions : OpBuilder::Listener {
    std::vector<Operation *> ops;
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
  };
  Insertions inserted;
  std::vector<Operation *> moved;
  std::unique_ptr<FlatStep> flat;

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

/// The value that `v` is a view of (through any views), or `v`.
Value viewSource(Value v);

/// A host value whose bytes still hold it at position `at`: no other value
/// of its buffer (an in-place update, such as a host-placed optimizer's
/// new parameter) is written before `at`.
bool hostIntactAt(const BufferLiveness &liveness, Value v, int64_t at);

} // namespace mlir::tidal::fit

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITTER_H
