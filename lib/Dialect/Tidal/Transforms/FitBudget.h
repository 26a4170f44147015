//===- FitBudget.h - fit a device arena to a budget -------------*- C++ -*-===//
//
// The engine behind tidal-schedule-swaps and tidal-recompute. While the
// packed device arena exceeds the budget, it takes the peak position P and
// the tensors idle across it (no use strictly between the uses u < P < w
// around it), and for each prices the ways to free its bytes over (u, w):
//
//  * swap: offload after u, wait before P, prefetch after P early enough to
//    hide the copy behind the kernels before w, wait just before w. Its
//    cost is the predicted stall: the part of each copy that the kernels
//    around it cannot hide, with the link time the earlier copies took
//    under each kernel already spent (one direction each way, as PCIe and
//    the sim device's copy streams are full duplex).
//  * recompute: clone the op that defines it (and, up to a small depth, the
//    ops defining operands no longer live at w) just before w, from
//    operands still live there. Its cost is the clones' predicted time;
//    their results replace the uses from w on. Clones are bitwise the same
//    computation, so the values do not change.
//  * refetch (a device copy of a host-resident argument, a parameter that
//    tidal-place streams in): drop it after u and prefetch the host value
//    again before w, while the host bytes still hold it, and the same in
//    its other idle gaps near the peak's level. Its cost is the
//    prefetches' stalls. Allowed whenever the placement put the value on
//    the host, swaps or not.
//
// It applies the cheapest option per byte freed (ties: the larger tensor),
// and repeats. Placement depends on the peak's level, never on the budget,
// so a smaller budget takes the same steps first and the smallest budget
// reached is exact.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITBUDGET_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITBUDGET_H

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <string>

namespace mlir::tidal {

struct FitBudgetOptions {
  int64_t budget = 0;
  double linkGbps = 16;
  /// A copy's fixed cost (the profile's link.latency_us, e.g. the sim's
  /// measured by tidal-calibrate --link-gbps): the fitter adds it to each
  /// copy, the placement's predictions price it; negative (no profile):
  /// the fitter prices bytes alone and the predictions the default link's.
  double linkLatencyUs = -1;
  int64_t alignment = 64;
  DeviceProfile device;
  /// The device is the host's own CPU (tidal-place's shared-cpu, the sim
  /// target): host ops are priced with `device` and never overlap its
  /// kernels in the predicted step (predictTimeline's sharedCpu).
  bool sharedCpu = false;
  bool swap = true;
  bool recompute = false;
  /// The most ops one recomputation may clone.
  int64_t maxChain = 3;
  /// Steps per liveness analysis: one per this many ops (at least one).
  int64_t opsPerStep = 4000;
  /// The optimal mode: first choose swaps and recomputations for every
  /// tensor's longest idle gap at once with an MILP (BudgetMilp.h), then
  /// let the greedy loop fit what the packing still exceeds.
  bool milp = false;
  /// `planner=auto`: the optimal mode on functions of at most
  /// kAutoMilpMaxOps ops (small enough to solve within the time limit),
  /// the greedy loop on larger ones; `milp` is then decided per function.
  bool milpAuto = false;
  double milpTimeLimitS = 10;
  /// The optimal mode with placement (tidal-place auto, --planner milp):
  /// each optimizer update that carries `tidal.place_index` is also a
  /// candidate of the same MILP, with two options: run it on the host with
  /// its state in host memory, or also keep its parameter there, streamed
  /// to the device before each use. `placementEffect` applies a set of
  /// such choices (place indices run on the host, and those streamed) to a
  /// copy of the function as it stands and reports the predicted step
  /// time and, if `live` is asked for, the device bytes then live at each
  /// of the function's positions; false if nothing applies. The options'
  /// bytes come from each choice alone; their costs first too, then, while
  /// the choice changes (at most kPlacementRounds), from the step with the
  /// MILP's last choice (each option priced against it without that
  /// update), so that updates that share the host and the link are priced
  /// together. After the chosen swaps and recomputations are applied,
  /// `placeUpdates` is called with the place indices the MILP moved (host
  /// updates, streamed); it rewrites the function (tidal-place's Placer),
  /// and the greedy loop then fits the result.
  struct PlacementEffect {
    /// Asked for by the caller: the times below, and with `fit` the
    /// placed copy fitted to the budget by the greedy loop
    /// (fitBudgetGreedy) before it is predicted; `fits` says whether it
    /// did.
    bool wantTimes = false;
    bool fit = false;
    bool fits = true;
    double stepUs = 0;
    SmallVector<int64_t> live;
    /// With `wantTimes`, by op of the function given (its body in order,
    /// without the terminator): StepTimeline's computeDoneUs,
    /// toHostReadyUs and toDeviceReadyUs of the op in the placed copy.
    std::vector<double> computeDoneUs, toHostReadyUs, toDeviceReadyUs;
  };
  std::function<bool(func::FuncOp, const llvm::DenseSet<int64_t> &hosted,
                     const llvm::DenseSet<int64_t> &streamed, bool wantLive,
                     PlacementEffect &)>
      placementEffect;
  std::function<void(func::FuncOp, const llvm::DenseSet<int64_t> &hosted,
                     const llvm::DenseSet<int64_t> &streamed)>
      placeUpdates;
  /// Layers too: each other kernel that carries `tidal.place_index` is a
  /// candidate of the same MILP, with one option, to run on the host (its
  /// results in host memory, its device operands copied out, device
  /// readers prefetching its results), measured and re-priced as the
  /// updates are; the chosen ones are among the `hosted` indices given to
  /// `placeUpdates`. At most kMaxLayerCandidates, the largest results
  /// first, while measuring stays within half the time limit.
  bool placeLayers = false;
  /// A warm start: placements (hosted, streamed) the options are priced
  /// against before the first solve (the greedy planner's choice).
  std::pair<llvm::DenseSet<int64_t>, llvm::DenseSet<int64_t>> placementStart;
  /// On failure, the greedy planner's run is redone from the start with the
  /// smallest budget's bookkeeping (a packing at every state), for the
  /// error's exact smallest budget and the op at its peak (the stats'
  /// smallestBudget and peakOp). tidal-place's trials that only ask
  /// whether a plan fits turn it off: a failed run then reports neither,
  /// and on a graph whose trials mostly fail the redo was most of the plan
  /// time (Inception-v3 at 10% of its peak: 15 of 19 s).
  bool exactSmallest = true;
  /// With `exactSmallest`: a run without the bookkeeping first, which is
  /// faster where it fits (the second run only follows a failure). Trials
  /// that are expected to fail (tidal-place's host-layer steps, taken while
  /// nothing fits) turn it off and run once, with the bookkeeping.
  bool fastFirst = true;
  /// tidal-place's trial counts (`tidal.place_trials`), if given: each
  /// fittedTrial adds to them.
  struct TrialCounts {
    int64_t trials = 0, fitted = 0, unreachable = 0;
  };
  TrialCounts *trialCounts = nullptr;
  /// The pass name for diagnostics.
  std::string passName;
};

/// `planner=auto` uses the MILP on functions of at most this many ops: the
/// zoo's MLPs, LeNet and transformer blocks, not ResNet-20 (about 240 ops
/// at batch 8, whose joint placement solve takes the whole 10 s limit).
inline constexpr int64_t kAutoMilpMaxOps = 200;

/// Whether `planner` (greedy, milp or auto) means the MILP for `func`.
bool plannerUsesMilp(StringRef planner, func::FuncOp func);

struct FitBudgetStats {
  int64_t swapped = 0, swappedBytes = 0;
  int64_t recomputed = 0, recomputedBytes = 0, recomputedOps = 0;
  /// Device copies of host values dropped and prefetched again.
  int64_t refetched = 0, refetchedBytes = 0;
  /// Earlier swaps' prefetches delayed or offload waits advanced.
  int64_t copiesMoved = 0;
  /// The optimal mode: the MILP's candidates, whether its choice was
  /// proven optimal, and its predicted cost.
  int64_t milpCandidates = 0;
  bool milpOptimal = false;
  double milpCostUs = 0;
  /// On failure (with `exactSmallest`): the smallest budget the steps
  /// reached (the error's), and the device kernel at (or nearest) the peak
  /// where they stopped, whose working set bounds it.
  int64_t smallestBudget = 0;
  Operation *peakOp = nullptr;
  /// Failed before any step (without `exactSmallest`): no state the steps
  /// can reach fits (the persistent device bytes and the largest kernel's
  /// working set exceed the budget).
  bool unreachable = false;
};

/// The greedy loop alone (`options.milp` aside), without the smallest
/// budget's bookkeeping: on failure `func` is left part-fitted and nothing
/// is reported. The optimal mode scores its choices with it.
LogicalResult fitBudgetGreedy(func::FuncOp func,
                              const FitBudgetOptions &options);

/// Fits `func` (one block, scheduled) to `options.budget`, adding
/// `tidal.device_budget`. On failure the error states the smallest budget
/// that the same steps reach.
LogicalResult fitBudget(func::FuncOp func, const FitBudgetOptions &options,
                        FitBudgetStats &stats);

/// The device profile from a pass's cost-model options (0 or negative:
/// the host default's figure).
DeviceProfile profileFromOptions(double gflops, double gbytesPerS,
                                 double opOverheadUs);

/// The same on top of the host section of the machine profile at
/// `profilePath` (empty: the host default), into `device`, and its link's
/// latency into `*linkLatencyUs` if asked for (left as it is without a
/// profile); on a bad profile, an error on `op` naming `passName`, the file
/// and the field.
LogicalResult profileFromOptions(Operation *op, StringRef passName,
                                 StringRef profilePath, double gflops,
                                 double gbytesPerS, double opOverheadUs,
                                 DeviceProfile &device,
                                 double *linkLatencyUs = nullptr);

} // namespace mlir::tidal

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_FITBUDGET_H
