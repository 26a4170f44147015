//===- BudgetMilp.h - the optimal device-budget choice (MILP) ---*- C++ -*-===//
//
// The exact counterpart of the memory planner's greedy budget heuristic:
// choose at most one option (swap, recompute, ...) per candidate so that
// the bytes live at every position of the step fit a device budget, at the
// least total predicted cost. Solved as a 0-1 integer program with GLPK's
// branch and cut. When nothing fits, it also solves the min-peak problem,
// so the caller can name the smallest budget that would fit.
// docs/memory-plan.md, "Optimal mode (MILP)", describes the model.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_BUDGETMILP_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_BUDGETMILP_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <utility>

namespace mlir::tidal {

/// `bytes` on the device at the positions [begin, end).
struct ByteInterval {
  int64_t begin = 0, end = 0;
  int64_t bytes = 0;
};

/// One way to treat a candidate.
struct MilpOption {
  SmallVector<ByteInterval, 1> removes; ///< bytes no longer live on the device
  SmallVector<ByteInterval, 1> adds;    ///< bytes newly live (operands kept)
  /// Predicted extra step time; negative for an option that saves time
  /// (the solver then takes it where the budget allows, fitting or not).
  double costUs = 0;
};

/// One idle gap of one tensor; at most one of its options is chosen.
struct MilpCandidate {
  SmallVector<MilpOption, 2> options;
};

struct MilpProblem {
  SmallVector<int64_t> live; ///< device bytes live at positions 0..N
  int64_t budget = 0;
  SmallVector<MilpCandidate> candidates;
  /// Pairs of candidates at most one of which may be used (optional).
  SmallVector<std::pair<int, int>> exclusive;
  /// Solver time limit; on expiry the best choice found is returned with
  /// `optimal` false. solveBudgetMilp says how the solves share it.
  double timeLimitS = 10;
};

struct MilpSolution {
  bool feasible = false; ///< a choice fits the budget
  /// Proven optimal (not cut by the time limit, and no rounding of bytes
  /// to units). When !feasible: the budget was proven out of reach and
  /// `smallestPeak` proven minimal.
  bool optimal = false;
  /// Per candidate: option index or -1. All -1 when !feasible (the closest
  /// approach is `smallestPeakChoice`).
  SmallVector<int> choice;
  double costUs = 0; ///< sum of the chosen options' costUs
  int64_t peak = 0;  ///< bytes at the worst position under `choice`
  /// When !feasible: the least peak of any choice the min-peak solve found
  /// (reachable: `smallestPeakChoice` attains it exactly), else -1.
  int64_t smallestPeak = -1;
  bool smallestPeakOptimal = false;    ///< `smallestPeak` proven minimal
  SmallVector<int> smallestPeakChoice; ///< when !feasible: attains it
  double solveS = 0;                   ///< wall time of the whole call
  /// Size of the budget model: its binaries (options that can help, after
  /// pruning) and GLPK rows. 0 when GLPK was not needed.
  int64_t variables = 0, constraints = 0;
  int64_t unitBytes = 1; ///< bytes per unit of the model's rows
  int resolves = 0;      ///< re-solves after the exact re-check failed
};

/// Solves with GLPK's branch and cut (glp_intopt, presolve on, terminal
/// output off). Fails (with a message in *error) only on a malformed problem
/// (interval outside [0, live.size()], negative bytes/cost/budget/live, bad
/// indices). Every returned choice is re-checked exactly with bytesUnder.
/// Each GLPK solve gets what is left of `timeLimitS`; the min-peak solve
/// (only when the budget is out of reach) gets at least a quarter of it, so
/// a call takes at most about 1.25 x `timeLimitS` (GLPK checks its clock
/// between nodes: overruns of up to ~1 s were seen at 300 candidates).
/// Thread-safe: no state of ours is global, and each call owns its GLPK
/// problem objects.
FailureOr<MilpSolution> solveBudgetMilp(const MilpProblem &problem,
                                        std::string *error);

/// The bytes at every position under a choice (for checking; shared by the
/// solver's own result check and by tests). `choice` holds one option index
/// or -1 per candidate.
SmallVector<int64_t> bytesUnder(const MilpProblem &problem,
                                ArrayRef<int> choice);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_BUDGETMILP_H
