//===- BudgetMilp.cpp - the optimal device-budget choice (MILP) -----------===//
//
// Two 0-1 programs over the same variables, x[c][o] = "candidate c takes
// option o" (docs/memory-plan.md, "Optimal mode (MILP)"):
//   budget:   min sum cost*x  s.t. live + net(x) <= budget at every position
//   min-peak: min M           s.t. live + net(x) <= M      at every position
// Positions are grouped into segments between interval ends: inside one,
// every option changes the bytes by the same amount, so the segment's
// largest `live` gives its only row. GLPK works in doubles, so every choice
// it returns is re-checked in exact bytes before it is believed.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"

#include "GlpkModel.h"
#include "MilpProblemChecks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <glpk.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <cmath>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::glpk;

namespace {

using Clock = std::chrono::steady_clock;

/// A whole-solution tie-break below this many microseconds: it can only
/// order choices whose predicted costs are closer than one nanosecond.
constexpr double kTieBreakUs = 1e-3;
/// Re-solves after the exact re-check finds GLPK's tolerance let a row
/// through.
constexpr int kMaxResolves = 4;
/// Row values stay below this many units (bytes / unit), far inside the
/// 2^53 that doubles hold exactly.
constexpr int64_t kMaxUnits = int64_t(1) << 30;

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Net bytes one option adds (> 0) or removes (< 0), per segment it
/// touches, ordered by segment, zeros dropped.
using NetBytes = std::vector<std::pair<int, int64_t>>;

/// The positions cut into segments, and each option's effect on them.
struct Layout {
  /// Segment k covers [starts[k], starts[k + 1]) (the last one ends at
  /// live.size()).
  std::vector<int64_t> starts;
  std::vector<int64_t> maxLive;
  /// net[c][o]: option o of candidate c.
  std::vector<std::vector<NetBytes>> net;
  /// Per segment: the most any choice can add (sum over candidates of the
  /// largest addition), and the most it can remove.
  std::vector<int64_t> addWorst, removeBest;

  int segmentOf(int64_t pos) const {
    return int(std::upper_bound(starts.begin(), starts.end(), pos) -
               starts.begin()) -
           1;
  }
  int numSegments() const { return int(starts.size()); }
};

Layout buildLayout(const MilpProblem &problem) {
  Layout layout;
  int64_t size = int64_t(problem.live.size());
  std::vector<int64_t> &starts = layout.starts;
  starts.push_back(0);
  for (const MilpCandidate &cand : problem.candidates)
    for (const MilpOption &opt : cand.options)
      for (const auto *list : {&opt.removes, &opt.adds})
        for (const ByteInterval &iv : *list) {
          if (iv.begin >= iv.end || iv.bytes == 0)
            continue;
          starts.push_back(iv.begin);
          if (iv.end < size)
            starts.push_back(iv.end);
        }
  llvm::sort(starts);
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());

  int numSeg = layout.numSegments();
  layout.maxLive.assign(numSeg, INT64_MIN);
  for (int k = 0; k < numSeg; ++k) {
    int64_t end = k + 1 < numSeg ? starts[k + 1] : size;
    for (int64_t p = starts[k]; p < end; ++p)
      layout.maxLive[k] = std::max(layout.maxLive[k], problem.live[p]);
  }

  layout.addWorst.assign(numSeg, 0);
  layout.removeBest.assign(numSeg, 0);
  layout.net.resize(problem.candidates.size());
  std::vector<int64_t> addMax(numSeg, 0), removeMax(numSeg, 0);
  std::vector<int> touched;
  for (auto [c, cand] : llvm::enumerate(problem.candidates)) {
    touched.clear();
    for (const MilpOption &opt : cand.options) {
      NetBytes entries;
      auto addEntries = [&](ArrayRef<ByteInterval> list, int64_t sign) {
        for (const ByteInterval &iv : list) {
          if (iv.begin >= iv.end || iv.bytes == 0)
            continue;
          int first = layout.segmentOf(iv.begin);
          int last = iv.end < size ? layout.segmentOf(iv.end) : numSeg;
          for (int k = first; k < last; ++k)
            entries.push_back({k, sign * iv.bytes});
        }
      };
      addEntries(opt.adds, 1);
      addEntries(opt.removes, -1);
      llvm::sort(entries);
      NetBytes merged;
      for (auto [k, bytes] : entries) {
        if (!merged.empty() && merged.back().first == k)
          merged.back().second += bytes;
        else
          merged.push_back({k, bytes});
      }
      llvm::erase_if(merged, [](auto &e) { return e.second == 0; });
      for (auto [k, bytes] : merged) {
        if (addMax[k] == 0 && removeMax[k] == 0)
          touched.push_back(k);
        if (bytes > 0)
          addMax[k] = std::max(addMax[k], bytes);
        else
          removeMax[k] = std::max(removeMax[k], -bytes);
      }
      layout.net[c].push_back(std::move(merged));
    }
    for (int k : touched) {
      layout.addWorst[k] += addMax[k];
      layout.removeBest[k] += removeMax[k];
      addMax[k] = removeMax[k] = 0;
    }
  }
  return layout;
}

/// Bytes per model unit: the largest power of two dividing every live and
/// net byte count (so rounding to units loses nothing), raised if needed
/// so that row values stay below kMaxUnits. Sets `exact` when no rounding
/// happens.
int64_t chooseUnit(const MilpProblem &problem, const Layout &layout,
                   bool &exact) {
  uint64_t bits = 0;
  int64_t largest = problem.budget;
  auto note = [&](int64_t v) {
    uint64_t mag = uint64_t(v < 0 ? -v : v);
    bits |= mag;
    largest = std::max(largest, int64_t(mag));
  };
  for (int64_t v : problem.live)
    note(v);
  for (const auto &options : layout.net)
    for (const NetBytes &net : options)
      for (auto [k, bytes] : net)
        note(bytes);
  int64_t common = bits == 0 ? 1 : int64_t(bits & (~bits + 1));
  common = std::min<int64_t>(common, int64_t(1) << 30);
  int64_t unit = 1;
  while (largest / unit >= kMaxUnits)
    unit <<= 1;
  exact = unit <= common;
  return std::max(unit, common);
}

/// The model's columns: which option of which candidate each one is.
struct Columns {
  std::vector<std::pair<int, int>> option;   // column - 1 -> (candidate, opt)
  std::vector<std::vector<int>> ofCandidate; // candidate -> columns

  SmallVector<int> readChoice(glp_prob *lp, size_t numCandidates) const {
    SmallVector<int> choice(numCandidates, -1);
    std::vector<double> best(numCandidates, 0.5);
    for (auto [j, co] : llvm::enumerate(option)) {
      double x = glp_mip_col_val(lp, int(j) + 1);
      if (x > best[co.first]) {
        best[co.first] = x;
        choice[co.first] = co.second;
      }
    }
    return choice;
  }
};

/// Rows shared by both models: one option per candidate, exclusive pairs.
void addChoiceRows(const MilpProblem &problem, const Columns &cols,
                   ModelBuilder &model) {
  for (const std::vector<int> &list : cols.ofCandidate) {
    if (list.size() < 2)
      continue; // a binary's own bound already says <= 1
    int row = model.addRow(1);
    for (int col : list)
      model.set(row, col, 1);
  }
  for (auto [a, b] : problem.exclusive) {
    if (cols.ofCandidate[a].empty() || cols.ofCandidate[b].empty())
      continue;
    int row = model.addRow(1);
    for (int col : cols.ofCandidate[a])
      model.set(row, col, 1);
    for (int col : cols.ofCandidate[b])
      model.set(row, col, 1);
  }
}

/// Keeps the options with a negative (rounded) coefficient in some row of
/// `rowOf`, and those that save time (a negative cost): any other option
/// only adds bytes where it matters and costs >= 0, so leaving it out
/// never loses a better choice.
Columns selectColumns(const MilpProblem &problem, const Layout &layout,
                      ArrayRef<int> rowOf, int64_t unit) {
  Columns cols;
  cols.ofCandidate.resize(problem.candidates.size());
  for (auto [c, options] : llvm::enumerate(layout.net))
    for (auto [o, net] : llvm::enumerate(options)) {
      bool helps = problem.candidates[c].options[o].costUs < 0 ||
                   llvm::any_of(net, [&](auto &e) {
                     return rowOf[e.first] >= 0 && ceilDiv(e.second, unit) < 0;
                   });
      if (!helps)
        continue;
      cols.option.push_back({int(c), int(o)});
      cols.ofCandidate[c].push_back(int(cols.option.size()));
    }
  return cols;
}

/// The rows for segments: row i (for segment `segments[i]`) says
///   sum_j coef[i][j] x[j] (- M) <= upper[i],
/// coef = ceil(net / unit), so a choice the model accepts never has more
/// bytes than it counts. An option's interval covers consecutive segments,
/// so these rows written out are dense (an option in every row it spans),
/// and GLPK's LU factors of such bases are slow (3-4x slower on the scale
/// test). They are handed over differenced, with a slack s[i] >= 0 a row:
///   row 0:  coef[0] x (- M) + s[0]                  = upper[0]
///   row i:  (coef[i] - coef[i-1]) x + s[i] - s[i-1] = upper[i] - upper[i-1]
/// Summing rows 0..i gives back row i, so the model is the same, but an
/// option appears only where its coefficient changes, and M only in row 0.
struct SegmentRows {
  std::vector<int> segments;        // ascending
  std::vector<int> rowOfSegment;    // segment -> index into `segments`, or -1
  int firstRow = 0, firstSlack = 0; // GLPK indices

  explicit SegmentRows(int numSegments) : rowOfSegment(numSegments, -1) {}
  void addSegment(int k) {
    rowOfSegment[k] = int(segments.size());
    segments.push_back(k);
  }
  int size() const { return int(segments.size()); }

  /// Adds the rows (their bounds come from setBounds) and their slacks.
  void build(const Layout &layout, const Columns &cols, int64_t unit,
             int peakCol, ModelBuilder &model) {
    int m = size();
    if (m == 0)
      return;
    firstRow = int(model.rowUpper.size()) + 1;
    firstSlack = int(model.colCost.size()) + 1;
    for (int i = 0; i < m; ++i) {
      model.addRow(0, GLP_FX);
      model.addColumn(0, GLP_CV, 0);
      model.set(firstRow + i, firstSlack + i, 1);
      if (i > 0)
        model.set(firstRow + i, firstSlack + i - 1, -1);
    }
    if (peakCol)
      model.set(firstRow, peakCol, -1);
    std::vector<std::pair<int, int64_t>> coefs;
    for (auto [j, co] : llvm::enumerate(cols.option)) {
      int col = int(j) + 1;
      coefs.clear();
      for (auto [k, bytes] : layout.net[co.first][co.second]) {
        int64_t coef = ceilDiv(bytes, unit);
        if (rowOfSegment[k] >= 0 && coef != 0)
          coefs.push_back({rowOfSegment[k], coef});
      }
      // The changes along the rows; a run of rows ends where the next
      // entry is not the next row (its coefficient falls back to 0).
      int prevRow = -2;
      int64_t prev = 0;
      for (auto [i, coef] : coefs) {
        if (i != prevRow + 1 && prev != 0) {
          model.set(firstRow + prevRow + 1, col, double(-prev));
          prev = 0;
        }
        if (coef != prev)
          model.set(firstRow + i, col, double(coef - prev));
        prevRow = i;
        prev = coef;
      }
      if (prev != 0 && prevRow + 1 < m)
        model.set(firstRow + prevRow + 1, col, double(-prev));
    }
  }

  void setBounds(glp_prob *lp, ArrayRef<int64_t> upper) const {
    for (int i = 0; i < size(); ++i) {
      double value = double(upper[i] - (i > 0 ? upper[i - 1] : 0));
      glp_set_row_bnds(lp, firstRow + i, GLP_FX, value, value);
    }
  }
};

int64_t peakOf(ArrayRef<int64_t> bytes) {
  return bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
}

double costOf(const MilpProblem &problem, ArrayRef<int> choice) {
  double cost = 0;
  for (auto [c, o] : llvm::enumerate(choice))
    if (o >= 0)
      cost += problem.candidates[c].options[o].costUs;
  return cost;
}

/// The budget model: min cost s.t. every needed segment fits. Fills
/// `sol`'s choice, feasible, optimal, costUs, peak and the model size.
Outcome solveForBudget(const MilpProblem &problem, const Layout &layout,
                       int64_t unit, bool exactUnit, Clock::time_point deadline,
                       MilpSolution &sol) {
  int numSeg = layout.numSegments();
  SegmentRows rows(numSeg);
  for (int k = 0; k < numSeg; ++k) {
    // Even removing everything that can be removed leaves it over budget:
    // exact, no solver needed.
    if (layout.maxLive[k] - layout.removeBest[k] > problem.budget)
      return Outcome::Infeasible;
    // A segment needs a row only if the worst additions could overflow it.
    if (layout.maxLive[k] + layout.addWorst[k] > problem.budget)
      rows.addSegment(k);
  }
  Columns cols = selectColumns(problem, layout, rows.rowOfSegment, unit);
  if (cols.option.empty())
    return exactUnit ? Outcome::Infeasible : Outcome::Unknown;

  ModelBuilder model;
  // Ties (e.g. swaps fully hidden behind compute, all costing 0) go to the
  // choice that moves fewer bytes, then to fewer options; the whole
  // tie-break stays below kTieBreakUs.
  double removable = 0;
  for (auto [c, o] : cols.option)
    for (const ByteInterval &iv : problem.candidates[c].options[o].removes)
      removable += double(iv.bytes);
  double perByte = 0.5 * kTieBreakUs / std::max(1.0, removable);
  double perOption = 0.5 * kTieBreakUs / double(cols.option.size());
  for (auto [c, o] : cols.option) {
    const MilpOption &opt = problem.candidates[c].options[o];
    double removed = 0;
    for (const ByteInterval &iv : opt.removes)
      removed += double(iv.bytes);
    model.addColumn(opt.costUs + perByte * removed + perOption);
  }
  rows.build(layout, cols, unit, /*peakCol=*/0, model);
  addChoiceRows(problem, cols, model);

  QuietGlpk quiet;
  GlpkProblem glpk;
  model.load(glpk.lp, 0);
  sol.variables = int64_t(cols.option.size());
  sol.constraints = glp_get_num_rows(glpk.lp);

  // Row bounds in units: live rounded up, the budget down, so the rounded
  // model never accepts more bytes than the exact one. A bound shrinks by
  // the excess when the exact re-check finds that GLPK's tolerance let a
  // row through.
  int64_t budgetUnits = floorDiv(problem.budget, unit);
  std::vector<int64_t> upper;
  for (int k : rows.segments)
    upper.push_back(budgetUnits - ceilDiv(layout.maxLive[k], unit));
  for (int round = 0;; ++round) {
    rows.setBounds(glpk.lp, upper);
    double left =
        std::chrono::duration<double>(deadline - Clock::now()).count();
    Outcome outcome = runIntopt(glpk.lp, std::max(left, 1e-3));
    if (outcome == Outcome::Infeasible)
      // Only the first, untightened, exact model proves anything.
      return round == 0 && exactUnit ? Outcome::Infeasible : Outcome::Unknown;
    if (outcome == Outcome::Unknown)
      return Outcome::Unknown;

    SmallVector<int> choice =
        cols.readChoice(glpk.lp, problem.candidates.size());
    SmallVector<int64_t> bytes = bytesUnder(problem, choice);
    std::vector<int64_t> over(rows.size(), 0);
    bool fits = true;
    for (auto [p, b] : llvm::enumerate(bytes)) {
      if (b <= problem.budget)
        continue;
      fits = false;
      // A segment without a row cannot exceed the budget under any choice.
      int i = rows.rowOfSegment[layout.segmentOf(int64_t(p))];
      assert(i >= 0 && "an over-budget segment always has a row");
      if (i >= 0)
        over[i] = std::max(over[i], ceilDiv(b - problem.budget, unit));
    }
    if (fits) {
      sol.feasible = true;
      sol.optimal = outcome == Outcome::Optimal && exactUnit && round == 0;
      sol.costUs = costOf(problem, choice);
      sol.peak = peakOf(bytes);
      sol.choice = std::move(choice);
      return sol.optimal ? Outcome::Optimal : Outcome::Feasible;
    }
    if (round == kMaxResolves || Clock::now() >= deadline)
      return Outcome::Unknown;
    for (int i = 0; i < rows.size(); ++i)
      upper[i] -= over[i];
    ++sol.resolves;
  }
}

/// The min-peak model: min M s.t. every segment that could hold the peak
/// is <= M. Fills `sol`'s smallestPeak fields.
void solveMinPeak(const MilpProblem &problem, const Layout &layout,
                  int64_t unit, bool exactUnit, double limitS,
                  MilpSolution &sol) {
  size_t numCand = problem.candidates.size();
  SmallVector<int> none(numCand, -1);
  sol.smallestPeakChoice = none;
  sol.smallestPeak = peakOf(problem.live);
  sol.smallestPeakOptimal = false;

  // No choice brings any segment below its live bytes minus everything
  // removable there, so the peak is at least the largest of those; a
  // segment that cannot exceed that bound needs no row.
  int numSeg = layout.numSegments();
  int64_t lower = INT64_MIN;
  for (int k = 0; k < numSeg; ++k)
    lower = std::max(lower, layout.maxLive[k] - layout.removeBest[k]);
  SegmentRows rows(numSeg);
  std::vector<int64_t> upper;
  for (int k = 0; k < numSeg; ++k)
    if (layout.maxLive[k] + layout.addWorst[k] > lower) {
      rows.addSegment(k);
      upper.push_back(-ceilDiv(layout.maxLive[k], unit));
    }
  Columns cols = selectColumns(problem, layout, rows.rowOfSegment, unit);
  if (cols.option.empty()) {
    sol.smallestPeakOptimal = exactUnit;
    return;
  }

  // Cost only breaks ties between choices with the same peak: all of it
  // together is worth less than half a unit of M.
  ModelBuilder model;
  double totalCost = 0;
  for (auto [c, o] : cols.option)
    totalCost += std::abs(problem.candidates[c].options[o].costUs);
  double perUs = 0.5 / (1.0 + totalCost);
  for (auto [c, o] : cols.option)
    model.addColumn(perUs * problem.candidates[c].options[o].costUs);
  int64_t lowerUnits = floorDiv(lower, unit);
  int peakCol = model.addColumn(1, GLP_CV, double(lowerUnits));
  rows.build(layout, cols, unit, peakCol, model);
  addChoiceRows(problem, cols, model);

  QuietGlpk quiet;
  GlpkProblem glpk;
  // The constant keeps the objective small: GLPK's optimality tolerance is
  // relative to it.
  model.load(glpk.lp, -double(lowerUnits));
  rows.setBounds(glpk.lp, upper);
  Outcome outcome = runIntopt(glpk.lp, limitS);
  if (outcome != Outcome::Optimal && outcome != Outcome::Feasible)
    return;
  SmallVector<int> choice = cols.readChoice(glpk.lp, numCand);
  int64_t peak = peakOf(bytesUnder(problem, choice));
  if (peak < sol.smallestPeak) {
    sol.smallestPeak = peak;
    sol.smallestPeakChoice = std::move(choice);
  }
  sol.smallestPeakOptimal = outcome == Outcome::Optimal && exactUnit;
}

} // namespace

FailureOr<MilpSolution> mlir::tidal::solveBudgetMilp(const MilpProblem &problem,
                                                     std::string *error) {
  Clock::time_point start = Clock::now();
  if (failed(validateMilpProblem(problem, error)))
    return failure();

  GlpkEnvironment environment; // destroyed after every GLPK object
  MilpSolution sol;
  sol.choice.assign(problem.candidates.size(), -1);
  sol.peak = peakOf(problem.live);
  bool saves = llvm::any_of(problem.candidates, [](const MilpCandidate &c) {
    return llvm::any_of(c.options,
                        [](const MilpOption &o) { return o.costUs < 0; });
  });
  if (sol.peak <= problem.budget && !saves) {
    sol.feasible = sol.optimal = true;
    sol.solveS = secondsSince(start);
    return sol;
  }

  Layout layout = buildLayout(problem);
  bool exactUnit = false;
  int64_t unit = chooseUnit(problem, layout, exactUnit);
  sol.unitBytes = unit;
  // A week: far beyond any real limit, and safe from overflow.
  double limitS = std::min(problem.timeLimitS, 7 * 24 * 3600.0);
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(limitS));
  Outcome outcome =
      solveForBudget(problem, layout, unit, exactUnit, deadline, sol);
  if (!sol.feasible) {
    double left =
        std::chrono::duration<double>(deadline - Clock::now()).count();
    solveMinPeak(problem, layout, unit, exactUnit,
                 std::max(left, 0.25 * limitS), sol);
    if (sol.smallestPeak <= problem.budget) {
      // The budget solve ran out of time (or tolerance) but the min-peak
      // choice fits: use it, unproven.
      sol.feasible = true;
      sol.optimal = false;
      sol.choice = sol.smallestPeakChoice;
      sol.costUs = costOf(problem, sol.choice);
      sol.peak = sol.smallestPeak;
      sol.smallestPeak = -1;
      sol.smallestPeakOptimal = false;
      sol.smallestPeakChoice.clear();
    } else {
      sol.optimal = outcome == Outcome::Infeasible && sol.smallestPeakOptimal;
    }
  }
  sol.solveS = secondsSince(start);
  return sol;
}
