//===- FitBudgetMilpSearch.cpp - the optimal mode's search after a solve --===//
//
// The optimal mode with placement (FitBudgetMilp.cpp) solves its MILP
// once with prices measured one option at a time; the step does not add
// up that way (placements share the host stream and the link, and a copy
// queues behind the copies and host ops before it). Fitter::searchAround
// scores each choice the MILP returns by applying it to a copy of the
// function, fitting the rest greedily and predicting that step, re-prices
// every placement and copy option against the last choice and solves
// again (rounds), then searches around the placements of the best
// choices.
//
//===----------------------------------------------------------------------===//

#include "Fitter.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::fit;

bool Fitter::predictChoice(const BufferLiveness &liveness,
                           ArrayRef<SmallVector<Choice, 2>> choices,
                           ArrayRef<int> choice,
                           const DenseSet<int64_t> &hosted,
                           const DenseSet<int64_t> &streamed,
                           ChoiceTimes &out) {
  if (!options.placementEffect)
    return false;
  IRMapping map;
  OwningOpRef<func::FuncOp> copy(func.clone(map));
  // The chosen options, read in the copy.
  SmallVector<SmallVector<Choice, 2>, 0> mapped(choices.size());
  for (auto [k, option] : llvm::enumerate(choice)) {
    if (option < 0)
      continue;
    for (Choice c : choices[k]) {
      if (c.value)
        c.value = map.lookupOrDefault(c.value);
      if (c.source)
        c.source = map.lookupOrDefault(c.source);
      if (c.move)
        c.move = map.lookupOrDefault(c.move);
      for (Operation *&op : c.clone.chain)
        op = map.lookupOrDefault(op);
      mapped[k].push_back(std::move(c));
    }
  }
  // The copy's analysis has the same positions (nothing is applied yet).
  BufferLiveness copyLiveness(*copy);
  FitBudgetStats scratch;
  Fitter applier(*copy, options, scratch);
  applier.applyChosen(copyLiveness, mapped, choice);

  FitBudgetOptions::PlacementEffect effect;
  effect.wantTimes = true;
  effect.fit = true;
  if (!options.placementEffect(*copy, hosted, streamed, /*wantLive=*/false,
                               effect))
    return false;
  DenseMap<Operation *, size_t> at;
  for (auto [i, op] :
       llvm::enumerate(copy->getBody().front().without_terminator()))
    at[&op] = i;
  ArrayRef<Operation *> ops = liveness.getOps();
  out.stepUs = effect.stepUs;
  out.fits = effect.fits;
  out.computeDone.assign(ops.size() + 1, 0);
  out.toHostReady.assign(ops.size() + 1, 0);
  out.toDeviceReady.assign(ops.size() + 1, 0);
  for (auto [i, op] : llvm::enumerate(ops)) {
    auto it = at.find(map.lookup(op));
    if (it == at.end())
      return false;
    out.computeDone[i + 1] = effect.computeDoneUs[it->second];
    out.toHostReady[i + 1] = effect.toHostReadyUs[it->second];
    out.toDeviceReady[i + 1] = effect.toDeviceReadyUs[it->second];
  }
  return true;
}

double Fitter::copyCostUs(const ChoiceTimes &times, const Choice &c) const {
  const int64_t last = int64_t(times.computeDone.size()) - 1;
  auto clamp = [&](int64_t p) { return std::clamp<int64_t>(p, 0, last); };
  // A copy issued after the op at `from`, waited for before the op after
  // `to`: the compute time it stalls.
  auto stall = [&](ArrayRef<double> ready, int64_t bytes, int64_t from,
                   int64_t to) {
    from = clamp(from), to = clamp(to);
    double start = std::max(times.computeDone[from], ready[from]);
    return std::max(0.0, start + copyUs(bytes) - times.computeDone[to]);
  };
  switch (c.kind) {
  case Choice::Swap:
    return stall(times.toHostReady, c.bytes, c.before, c.swap.waitAt - 1) +
           stall(times.toDeviceReady, c.bytes, c.swap.prefetchAt - 1,
                 c.after - 1) +
           kSwapOverheadUs;
  case Choice::Refetch: {
    double us = kRefetchOverheadUs;
    for (const Choice::Gap &gap : c.gaps)
      us += stall(times.toDeviceReady, c.bytes, gap.swap.prefetchAt - 1,
                  gap.after - 1);
    return us;
  }
  default:
    return c.costUs;
  }
}

LogicalResult
Fitter::searchAround(MilpSearch &s, MilpSolution *solution,
                     const std::optional<MilpSolution> &layersLast) {
  using Sets = PlacementSets;
  const BufferLiveness &liveness = s.liveness;
  MilpProblem &problem = s.problem;
  auto &choices = s.choices;
  ArrayRef<std::pair<int, Operation *>> placements = s.placements;
  auto &placedBy = s.placedBy;
  auto &stepWith = s.stepWith;
  auto &repricePlacements = s.repricePlacements;
  auto &secondsLeft = s.secondsLeft;
  const double priceS = s.priceS;
  int &solves = s.solves;
  double &scoreUs = s.scoreUs;
  std::string error;
  // Placements that share the host stream and the link do not add up,
  // and copies queue on the link behind the copies and host ops before
  // them: each choice is applied to a copy of the step and predicted (its
  // score; ChoiceTimes), every placement and copy option is re-priced
  // against the last choice, and the MILP solved again while its choice
  // changes. The choice with the best score is kept (one the greedy loop
  // cannot complete scores kUnfittedUs more).
  DenseSet<int> isPlacement;
  for (auto [k, update] : placements)
    isPlacement.insert(k);
  auto choiceOf = [](const MilpSolution &sol) {
    return sol.feasible ? ArrayRef<int>(sol.choice)
                        : ArrayRef<int>(sol.smallestPeakChoice);
  };
  // A choice's score: the applied choice's step; where it cannot be
  // applied, the placements' step plus the other options' costs. scoreS:
  // the longest a score took (no round or search solve starts without
  // twice that left).
  double scoreS = 0;
  auto score = [&](const MilpSolution &sol, ChoiceTimes &times) {
    auto start = std::chrono::steady_clock::now();
    auto took = llvm::make_scope_exit([&] {
      scoreS = std::max(scoreS, std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - start)
                                    .count());
    });
    ArrayRef<int> c = choiceOf(sol);
    Sets placed = c.empty() ? Sets() : placedBy(c);
    // A choice the greedy loop cannot complete loses to every one it can.
    if (predictChoice(liveness, choices, c, placed.first, placed.second, times))
      return times.stepUs + (times.fits ? 0 : kUnfittedUs);
    times = ChoiceTimes();
    double us = stepWith(placed);
    for (auto [k, o] : llvm::enumerate(c))
      if (o >= 0 && !isPlacement.contains(k))
        us += problem.candidates[k].options[o].costUs;
    return us;
  };
  // Choices compare by score alone: one over the budget in the MILP's model
  // that the greedy loop completes is a plan like any other, and one it
  // cannot complete scores kUnfittedUs more.
  ChoiceTimes firstTimes;
  MilpSolution best = *solution;
  double bestUs = score(best, firstTimes);
  // Every choice the first solve and the rounds scored: the local search
  // below starts from the best few.
  std::vector<std::pair<double, MilpSolution>> scored = {{bestUs, best}};
  ++solves;
  if (layersLast) {
    ChoiceTimes times;
    double us = score(*layersLast, times);
    scored.push_back({us, *layersLast});
    if (us < bestUs)
      best = *layersLast, bestUs = us;
  }
  std::vector<std::vector<double>> firstPrices;
  for (const MilpCandidate &cand : problem.candidates) {
    firstPrices.emplace_back();
    for (const MilpOption &o : cand.options)
      firstPrices.back().push_back(o.costUs);
  }
  // Rounds from the first solve's choice and prices, re-pricing the
  // placements, and with `priceCopies` the swaps and refetches too.
  auto rounds = [&](bool priceCopies, int count) -> LogicalResult {
    for (auto [k, cand] : llvm::enumerate(problem.candidates))
      for (auto [o, opt] : llvm::enumerate(cand.options))
        opt.costUs = choices[k][o].costUs = firstPrices[k][o];
    ChoiceTimes lastTimes = firstTimes;
    MilpSolution last = *solution;
    // Prices at the last choice first; once a choice comes back (the
    // prices alternate: many placements make each look dear, few make
    // each look cheap), each round's price is the mean of those seen
    // since.
    std::set<std::vector<int>> seen;
    seen.insert(std::vector<int>(choiceOf(last).begin(), choiceOf(last).end()));
    int averaged = 0;
    for (int round = 0; round < count; ++round) {
      // Each re-solve gets an equal share of what is left.
      problem.timeLimitS = (secondsLeft() - priceS) / double(2 * count - round);
      if (problem.timeLimitS < 0.05 || secondsLeft() < 2 * scoreS)
        break;
      ArrayRef<int> c = choiceOf(last);
      if (c.empty())
        break;
      Sets chosen = placedBy(c);
      std::vector<std::vector<double>> before;
      for (const MilpCandidate &cand : problem.candidates) {
        before.emplace_back();
        for (const MilpOption &o : cand.options)
          before.back().push_back(o.costUs);
      }
      if (!chosen.first.empty() || !chosen.second.empty())
        repricePlacements(chosen);
      if (priceCopies && !lastTimes.computeDone.empty())
        for (auto [k, options2] : llvm::enumerate(choices))
          for (auto [o, option] : llvm::enumerate(options2))
            if (option.kind == Choice::Swap || option.kind == Choice::Refetch) {
              option.costUs = copyCostUs(lastTimes, option);
              problem.candidates[k].options[o].costUs = option.costUs;
            }
      for (auto [k, cand] : llvm::enumerate(problem.candidates))
        for (auto [o, opt] : llvm::enumerate(cand.options)) {
          if (averaged)
            opt.costUs = before[k][o] +
                         (opt.costUs - before[k][o]) / double(averaged + 1);
          choices[k][o].costUs = opt.costUs;
        }
      if (averaged)
        ++averaged;
      // Nothing re-priced: the solve would return the same choice.
      bool repriced = false;
      for (auto [k, cand] : llvm::enumerate(problem.candidates))
        for (auto [o, opt] : llvm::enumerate(cand.options))
          repriced |= opt.costUs != before[k][o];
      if (!repriced)
        break;
      FailureOr<MilpSolution> again = solveBudgetMilp(problem, &error);
      if (failed(again))
        return func.emitError(options.passName) << ": " << error;
      ChoiceTimes times;
      double us = score(*again, times);
      ++solves;
      scored.push_back({us, *again});
      if (us < bestUs)
        best = *again, bestUs = us;
      ArrayRef<int> next = choiceOf(*again);
      bool same = next == c;
      bool back =
          !seen.insert(std::vector<int>(next.begin(), next.end())).second;
      last = std::move(*again);
      lastTimes = std::move(times);
      if (same && averaged)
        break;
      if (back && !averaged)
        averaged = 1;
    }
    return success();
  };
  if (failed(rounds(false, kPlacementRounds)) ||
      failed(rounds(true, kPlacementRounds)))
    return failure();
  // Then around the best: placements fixed (an option forced, or -1:
  // none), the others free, solved at the last prices and scored. A
  // forced option's bytes go into the problem's live bytes, and it and
  // the candidates it excludes leave the problem.
  auto solveFixed = [&](const DenseMap<int, int> &fixed,
                        std::optional<std::pair<double, MilpSolution>> *out =
                            nullptr) -> LogicalResult {
    MilpProblem rest = problem;
    rest.timeLimitS = std::min(1.0, 0.25 * secondsLeft());
    if (rest.timeLimitS < 0.05 || secondsLeft() < 2 * scoreS)
      return success();
    for (auto [k, o] : fixed) {
      if (o >= 0) {
        const MilpOption &option = problem.candidates[k].options[o];
        for (const ByteInterval &iv : option.removes)
          for (int64_t p = iv.begin; p < iv.end; ++p)
            rest.live[p] = std::max<int64_t>(0, rest.live[p] - iv.bytes);
        for (const ByteInterval &iv : option.adds)
          for (int64_t p = iv.begin; p < iv.end; ++p)
            rest.live[p] += iv.bytes;
        for (auto [a, b] : problem.exclusive)
          if (a == k || b == k)
            rest.candidates[a == k ? b : a].options.clear();
      }
      rest.candidates[k].options.clear();
    }
    FailureOr<MilpSolution> trial = solveBudgetMilp(rest, &error);
    if (failed(trial))
      return failure();
    for (SmallVector<int> *c : {&trial->choice, &trial->smallestPeakChoice})
      if (!c->empty())
        for (auto [k, o] : fixed)
          (*c)[k] = o;
    // Its objective at the prices, not the fixing ones.
    trial->costUs = 0;
    for (auto [k, o] : llvm::enumerate(choiceOf(*trial)))
      if (o >= 0)
        trial->costUs += problem.candidates[k].options[o].costUs;
    ChoiceTimes times;
    double us = score(*trial, times);
    ++solves;
    if (out)
      *out = {us, *trial};
    else
      scored.push_back({us, *trial});
    if (us < bestUs)
      best = std::move(*trial), bestUs = us;
    return success();
  };
  // The greedy planner's placements with the MILP's swaps.
  if (!options.placementStart.first.empty() ||
      !options.placementStart.second.empty()) {
    DenseMap<int, int> fixed;
    for (auto [k, op] : placements) {
      fixed[k] = -1;
      for (auto [o, c] : llvm::enumerate(choices[k]))
        if ((c.streamed ? options.placementStart.second
                        : options.placementStart.first)
                .contains(c.target))
          fixed[k] = o;
    }
    if (failed(solveFixed(fixed)))
      return func.emitError(options.passName) << ": " << error;
  }
  // A local search over the placements, from each of the best few
  // choices scored (kLocalSearchStarts, distinct), the swaps and
  // recomputations solved again around each move: one placement taken out
  // (the others kept, or the others free), or one of the cheapest priced
  // not in it put in; the first move that predicts faster is taken, while
  // one helps; the best start first. At most kLocalSearchSolves solves in
  // all, and the time everything before it took (at least half a second).
  const double searchUntilS =
      secondsLeft() - std::max(0.5, options.milpTimeLimitS - secondsLeft());
  auto searchLeft = [&] { return secondsLeft() > std::max(0.1, searchUntilS); };
  llvm::stable_sort(
      scored, [&](const auto &a, const auto &b) { return a.first < b.first; });
  SmallVector<std::pair<double, MilpSolution>> starts;
  std::set<std::vector<int>> started;
  for (auto &[us, sol] : scored) {
    ArrayRef<int> c = choiceOf(sol);
    if (c.empty() ||
        !started.insert(std::vector<int>(c.begin(), c.end())).second)
      continue;
    starts.push_back({us, sol});
    if (starts.size() == size_t(kLocalSearchStarts))
      break;
  }
  int moves = kLocalSearchSolves;
  for (auto [curUs, cur] : starts) {
    while (moves > 0 && searchLeft()) {
      ArrayRef<int> c = choiceOf(cur);
      DenseMap<int, int> at;
      SmallVector<std::pair<double, std::pair<int, int>>> adds;
      for (auto [k, op] : placements) {
        at[k] = c[k];
        if (c[k] < 0)
          for (auto [o, opt] : llvm::enumerate(problem.candidates[k].options))
            adds.push_back({opt.costUs, {k, int(o)}});
      }
      llvm::stable_sort(adds,
                        [](auto &a, auto &b) { return a.first < b.first; });
      // (candidate, option, the other placements kept as they are)
      SmallVector<std::tuple<int, int, bool>> tries;
      for (auto [k, op] : placements)
        if (c[k] >= 0)
          tries.push_back({k, -1, true});
      for (auto &[price, move] : ArrayRef(adds).take_front(kLocalSearchAdds))
        tries.push_back({move.first, move.second, true});
      for (auto [k, op] : placements)
        if (c[k] >= 0)
          tries.push_back({k, -1, false});
      bool improved = false;
      for (auto [k, o, keep] : tries) {
        if (moves <= 0 || !searchLeft())
          break;
        --moves;
        DenseMap<int, int> trial;
        if (keep)
          trial = at;
        trial[k] = o;
        std::optional<std::pair<double, MilpSolution>> next;
        if (failed(solveFixed(trial, &next)))
          return func.emitError(options.passName) << ": " << error;
        if (next && next->first < curUs) {
          std::tie(curUs, cur) = std::move(*next);
          improved = true;
          break;
        }
      }
      if (!improved)
        break;
    }
  }
  scoreUs = bestUs;
  *solution = std::move(best);
  return success();
}
