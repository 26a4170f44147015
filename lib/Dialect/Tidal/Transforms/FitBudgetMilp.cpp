//===- FitBudgetMilp.cpp - the budget fitter's optimal mode ---------------===//
//
// Fitter::solveExact: every tensor's swap and recomputation options over its
// longest idle gap above the budget, chosen at once by the MILP of
// BudgetMilp.h (FitBudget.h, `milp`).
//
//===----------------------------------------------------------------------===//

#include "Fitter.h"

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

#include <chrono>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::fit;

LogicalResult Fitter::solveExact() {
  BufferLiveness liveness(func);
  SmallVector<int64_t> live = liveness.liveBytes(options.alignment);
  const int64_t budget = options.budget;
  const int64_t n = live.size();
  SmallVector<int64_t> over(n + 1, 0); // positions over the budget before p
  for (int64_t p = 0; p < n; ++p)
    over[p + 1] = over[p] + (live[p] > budget);
  if (over[n] == 0)
    return success();
  ArrayRef<Operation *> ops = liveness.getOps();

  MilpProblem problem;
  problem.live.assign(live.begin(), live.end());
  problem.budget = budget;
  problem.timeLimitS = options.milpTimeLimitS;
  // With placements, the first solve and the re-solves share the limit.
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.milpTimeLimitS));
  auto secondsLeft = [&] {
    return std::chrono::duration<double>(deadline -
                                         std::chrono::steady_clock::now())
        .count();
  };
  SmallVector<SmallVector<Choice, 2>, 0> choices; // per candidate, option
  DenseMap<Value, SmallVector<int, 2>> candidatesOf;
  struct Roots {
    int candidate;
    int64_t at;
    SmallVector<Value, 4> operands;
  };
  SmallVector<Roots, 0> roots;
  auto add = [&](Value v, MilpCandidate candidate, SmallVector<Choice, 2> c) {
    int index = problem.candidates.size();
    problem.candidates.push_back(std::move(candidate));
    choices.push_back(std::move(c));
    candidatesOf[v].push_back(index);
    return index;
  };

  // A device tensor that may leave the device between uses: its buffer,
  // and its definition and uses in order (every use a kernel's).
  auto movable = [&](Value v, const Buffer *&buffer,
                     SmallVectorImpl<int64_t> &uses) {
    buffer = liveness.getBuffer(v);
    if (!buffer || buffer->host || buffer->persistent || buffer->returned)
      return false;
    uses.push_back(liveness.getDefinition(v));
    for (Operation *user : v.getUsers()) {
      if (isViewOp(user) || isCopyOp(user) || isa<func::ReturnOp>(user))
        return false;
      uses.push_back(liveness.getPosition(user));
    }
    llvm::sort(uses);
    return true;
  };

  // Each tensor's idle gap over the most positions above the budget.
  auto consider = [&](Value v) {
    const Buffer *buffer = nullptr;
    SmallVector<int64_t> uses;
    if (!movable(v, buffer, uses))
      return;
    Choice c;
    int64_t most = 0;
    for (size_t i = 0; i + 1 < uses.size(); ++i)
      if (int64_t a = uses[i], b = uses[i + 1];
          b - a >= 2 && over[b] - over[a + 1] > most) {
        most = over[b] - over[a + 1];
        c.before = a;
        c.after = b;
      }
    if (most == 0)
      return;
    c.value = v;
    c.bytes = buffer->bytes;
    const int64_t bytes = alignBytes(buffer->bytes, options.alignment);
    const double copy = copyUs(c.bytes);
    int swapIndex = -1;
    if (options.swap) {
      // Each copy waited for at once (exposed), or after the kernels that
      // hide it: four options.
      MilpCandidate candidate;
      SmallVector<Choice, 2> swaps;
      double off = 0, on = 0;
      int64_t w = c.before + 1, p = c.after;
      for (; w < c.after && off < copy; ++w)
        off += opUs(ops[w - 1]);
      while (p - 1 >= w && on < copy)
        on += opUs(ops[--p - 1]);
      const double offStall = std::max(0.0, copy - off);
      const double onStall = std::max(0.0, copy - on);
      for (bool hideOff : {false, true})
        for (bool hideOn : {false, true}) {
          Choice swap = c;
          swap.swap.waitAt = hideOff ? w : c.before + 1;
          swap.swap.prefetchAt = hideOn ? p : c.after;
          if ((hideOff && w == c.before + 1) || (hideOn && p == c.after) ||
              swap.swap.waitAt >= swap.swap.prefetchAt)
            continue;
          swap.costUs = (hideOff ? offStall : copy) +
                        (hideOn ? onStall : copy) + kSwapOverheadUs;
          candidate.options.push_back(
              {{ByteInterval{swap.swap.waitAt, swap.swap.prefetchAt, bytes}},
               {},
               swap.costUs});
          swaps.push_back(swap);
        }
      swapIndex = add(v, std::move(candidate), std::move(swaps));
    }
    RecomputePlan plan;
    DenseSet<Operation *> inChain;
    SmallVector<Operation *, 4> visited;
    if (options.recompute &&
        chainFor(liveness, v, c.after, plan, inChain, visited)) {
      int64_t extra = 0;
      Roots r{0, c.after, {}};
      for (Operation *op : plan.chain) {
        for (Value result : op->getResults())
          if (result != v)
            extra +=
                alignBytes(tensorByteSize(cast<ShapedType>(result.getType())),
                           options.alignment);
        for (Value operand : op->getOperands())
          if (!inChain.contains(operand.getDefiningOp()))
            r.operands.push_back(operand);
      }
      MilpOption option{
          {ByteInterval{c.before + 1, c.after, bytes}}, {}, plan.us};
      if (extra > 0)
        option.adds.push_back(ByteInterval{c.after, c.after + 1, extra});
      Choice clone = c;
      clone.kind = Choice::Recompute;
      clone.clone = std::move(plan);
      clone.costUs = clone.clone.us;
      MilpCandidate candidate;
      candidate.options.push_back(std::move(option));
      r.candidate = add(v, std::move(candidate), {std::move(clone)});
      if (swapIndex >= 0)
        problem.exclusive.push_back({swapIndex, r.candidate});
      roots.push_back(std::move(r));
    }
  };
  // Device copies of host-resident arguments (streamed parameters): each
  // idle gap across positions over the budget may be refetched, with the
  // prefetch just before the next use or early enough to hide the copy.
  auto considerRefetch = [&](Value v, Value source) {
    const Buffer *buffer = nullptr;
    SmallVector<int64_t> uses;
    if (!movable(v, buffer, uses))
      return;
    const int64_t bytes = alignBytes(buffer->bytes, options.alignment);
    const double copy = copyUs(buffer->bytes);
    for (size_t i = 0; i + 1 < uses.size(); ++i) {
      int64_t a = uses[i], b = uses[i + 1];
      if (b - a < 2 || over[b] - over[a + 1] == 0 ||
          !hostIntactAt(liveness, source, b))
        continue;
      Choice c;
      c.kind = Choice::Refetch;
      c.value = v;
      c.source = source;
      c.bytes = buffer->bytes;
      c.before = a;
      c.after = b;
      double on = 0;
      int64_t p = b;
      while (p - 1 > a + 1 && on < copy)
        on += opUs(ops[--p - 1]);
      MilpCandidate candidate;
      SmallVector<Choice, 2> refetches;
      for (bool hide : {false, true}) {
        if (hide && p == b)
          continue;
        Choice r = c;
        SwapPlan plan;
        plan.waitAt = a + 1;
        plan.prefetchAt = hide ? p : b;
        plan.stallUs = hide ? std::max(0.0, copy - on) : copy;
        r.gaps = {Choice::Gap{a, b, plan}};
        r.costUs = plan.stallUs + kRefetchOverheadUs;
        candidate.options.push_back(
            {{ByteInterval{plan.waitAt, plan.prefetchAt, bytes}},
             {},
             r.costUs});
        refetches.push_back(std::move(r));
      }
      add(v, std::move(candidate), std::move(refetches));
    }
  };
  // Placement (tidal-place auto with the MILP): each optimizer update may
  // run on the host with its state in host memory (not plain SGD, which
  // has none to free), or with its parameter there too, streamed to the
  // device before each use. Each option is measured on a copy of the step
  // with that choice alone applied (FitBudgetOptions::placementEffect):
  // its predicted step time against the step now, and the device bytes at
  // each position, which become the option's removed and added intervals.
  SmallVector<std::pair<int, Operation *>, 0> placements; // candidate, op
  auto intervalsOf = [&](ArrayRef<int64_t> after, MilpOption &option) {
    for (int64_t p = 0; p < n;) {
      int64_t d = after[p] - live[p];
      int64_t q = p + 1;
      while (q < n && after[q] - live[q] == d)
        ++q;
      if (d < 0)
        option.removes.push_back(ByteInterval{p, q, -d});
      else if (d > 0)
        option.adds.push_back(ByteInterval{p, q, d});
      p = q;
    }
  };
  // The predicted step with a set of placements (hosted, streamed).
  using Sets = PlacementSets;
  auto stepWith = [&](const Sets &sets) {
    FitBudgetOptions::PlacementEffect effect;
    if (!options.placementEffect(func, sets.first, sets.second,
                                 /*wantLive=*/false, effect))
      return 0.0;
    return effect.stepUs;
  };
  double baseUs = 0;
  // One placement option measured on a copy of the step with `one` alone
  // applied: its removed and added bytes, and the step time it adds.
  auto measure = [&](const Sets &one, MilpOption &option) {
    FitBudgetOptions::PlacementEffect effect;
    if (!options.placementEffect(func, one.first, one.second,
                                 /*wantLive=*/true, effect) ||
        (int64_t)effect.live.size() != n)
      return false;
    intervalsOf(effect.live, option);
    option.costUs = effect.stepUs - baseUs + kSwapOverheadUs;
    return true;
  };
  auto considerPlacement = [&](Operation *update) {
    auto index = update->getAttrOfType<IntegerAttr>(kPlaceIndexAttr);
    if (!index || isHostPlaced(update))
      return;
    MilpCandidate candidate;
    SmallVector<Choice, 2> options2;
    for (bool stream : {false, true}) {
      if (!stream && isa<SgdUpdateOp>(update))
        continue;
      Sets one;
      (stream ? one.second : one.first).insert(index.getInt());
      MilpOption option;
      if (!measure(one, option))
        continue;
      Choice c;
      c.kind = Choice::PlaceUpdate;
      c.move = update;
      c.target = index.getInt();
      c.streamed = stream;
      c.costUs = option.costUs;
      for (Value operand : update->getOperands())
        if (!isa<BlockArgument>(operand) && !c.value)
          c.value = operand; // the gradient
      candidate.options.push_back(std::move(option));
      options2.push_back(std::move(c));
    }
    if (candidate.options.empty())
      return;
    int k = problem.candidates.size();
    problem.candidates.push_back(std::move(candidate));
    choices.push_back(std::move(options2));
    placements.push_back({k, update});
  };
  // A kernel on the host (layer placement): one option, measured as an
  // update's are. Not with any swap or recomputation of its results (they
  // live in host memory then) or of its device operands (the host reads
  // them where the kernel stands), nor with a recomputation that reads
  // its results or clones it.
  SmallVector<std::pair<int, Operation *>, 0> layerCandidates;
  auto considerLayer = [&](Operation *op) {
    auto index = op->getAttrOfType<IntegerAttr>(kPlaceIndexAttr);
    if (!index || isHostPlaced(op) || isOptimizerUpdate(op))
      return;
    Sets one;
    one.first.insert(index.getInt());
    MilpOption option;
    if (!measure(one, option))
      return;
    Choice c;
    c.kind = Choice::PlaceLayer;
    c.move = op;
    c.target = index.getInt();
    c.costUs = option.costUs;
    MilpCandidate candidate;
    candidate.options.push_back(std::move(option));
    int k = problem.candidates.size();
    problem.candidates.push_back(std::move(candidate));
    choices.push_back({std::move(c)});
    placements.push_back({k, op});
    layerCandidates.push_back({k, op});
  };
  // The placements a choice of the MILP makes.
  auto placedBy = [&](ArrayRef<int> choice) {
    Sets sets;
    for (auto [k, update] : placements)
      if (choice[k] >= 0) {
        const Choice &c = choices[k][choice[k]];
        (c.streamed ? sets.second : sets.first).insert(c.target);
      }
    return sets;
  };
  // Prices every placement option against the step with `chosen`: an
  // update in it against the step without it, any other against `chosen`.
  auto repricePlacements = [&](const Sets &chosen) {
    const double chosenUs = stepWith(chosen);
    for (auto [k, update] : placements) {
      int64_t index = choices[k].front().target;
      Sets without = chosen;
      bool member =
          without.first.erase(index) + without.second.erase(index) > 0;
      const double withoutUs = member ? stepWith(without) : chosenUs;
      for (auto [o, c] : llvm::enumerate(choices[k])) {
        Sets with = without;
        (c.streamed ? with.second : with.first).insert(index);
        bool same = member &&
                    (c.streamed ? chosen.second : chosen.first).contains(index);
        double costUs =
            (same ? chosenUs : stepWith(with)) - withoutUs + kSwapOverheadUs;
        c.costUs = costUs;
        problem.candidates[k].options[o].costUs = costUs;
      }
    }
  };

  for (BlockArgument arg : func.getArguments())
    consider(arg);
  for (Operation *op : ops) {
    if (auto wait = dyn_cast<WaitOp>(op)) {
      if (auto prefetch = wait.getInput().getDefiningOp<PrefetchOp>())
        if (isa<BlockArgument>(viewSource(prefetch.getInput())))
          considerRefetch(wait.getResult(), prefetch.getInput());
    } else if (!isViewOp(op) && !isCopyOp(op) && !isa<ConstantOp>(op)) {
      for (Value result : op->getResults())
        consider(result);
    }
  }
  // Measuring the placements (two copies of the step per update) takes at
  // most half the time limit: on a graph too large for that, the updates
  // not reached are no candidates. Re-pricing them costs about as much,
  // so a round runs only while the time left covers it.
  double priceS = 0;
  if (options.placeUpdates && options.placementEffect) {
    auto start = std::chrono::steady_clock::now();
    baseUs = stepWith(Sets());
    for (Operation *op : ops)
      if (isOptimizerUpdate(op)) {
        if (secondsLeft() < 0.5 * options.milpTimeLimitS)
          break;
        considerPlacement(op);
      }
    // Then the kernels, the largest results first.
    if (options.placeLayers) {
      SmallVector<std::pair<int64_t, Operation *>> kernels;
      for (Operation *op : ops)
        if (op->hasAttr(kPlaceIndexAttr) && !isOptimizerUpdate(op) &&
            !isHostPlaced(op)) {
          int64_t bytes = 0;
          for (Value result : op->getResults())
            if (auto type = dyn_cast<ShapedType>(result.getType());
                type && type.hasStaticShape())
              bytes += tensorByteSize(type);
          kernels.push_back({bytes, op});
        }
      llvm::stable_sort(kernels, [](const auto &a, const auto &b) {
        return a.first > b.first;
      });
      for (auto [bytes, op] :
           ArrayRef(kernels).take_front(kMaxLayerCandidates)) {
        if (secondsLeft() < 0.5 * options.milpTimeLimitS)
          break;
        considerLayer(op);
      }
    }
    priceS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  // A host update reads its gradient's host copy: not with the gradient
  // swapped or recomputed as well.
  for (auto [k, update] : placements)
    if (Value grad = choices[k].front().value)
      for (int other : candidatesOf.lookup(grad))
        problem.exclusive.push_back({k, other});
  for (auto [k, op] : layerCandidates) {
    DenseSet<int> excluded;
    SmallVector<Value> values(op->getResults());
    llvm::append_range(values, op->getOperands());
    for (Value v : values)
      for (int other : candidatesOf.lookup(v))
        excluded.insert(other);
    for (const Roots &r : roots) {
      bool reads = llvm::any_of(r.operands, [&](Value operand) {
        return operand.getDefiningOp() == op;
      });
      if (reads ||
          llvm::is_contained(choices[r.candidate].front().clone.chain, op))
        excluded.insert(r.candidate);
    }
    for (int other : excluded)
      problem.exclusive.push_back({k, other});
  }
  // A recomputation reads its operands at its position: not while they
  // are off the device.
  for (const Roots &r : roots)
    for (Value operand : r.operands)
      for (int k : candidatesOf.lookup(operand)) {
        const Choice &other = choices[k].front();
        if (other.before < r.at && r.at < other.after)
          problem.exclusive.push_back({r.candidate, k});
      }

  std::string error;
  if (!placements.empty())
    problem.timeLimitS = 0.5 * options.milpTimeLimitS;
  // Warm start: priced around the greedy planner's placements.
  if (!placements.empty() &&
      (!options.placementStart.first.empty() ||
       !options.placementStart.second.empty()) &&
      secondsLeft() > 2 * priceS)
    repricePlacements(options.placementStart);
  // With layers: first a solve in which layers are taken only where
  // nothing else reaches the budget (their options priced prohibitively),
  // a start the rounds below must beat, since priced one at a time layers
  // can crowd out a better choice of updates.
  std::optional<MilpSolution> layersLast;
  if (!layerCandidates.empty()) {
    const double limitS = problem.timeLimitS;
    problem.timeLimitS = 0.5 * limitS;
    SmallVector<double> saved;
    for (auto [k, op] : layerCandidates) {
      saved.push_back(problem.candidates[k].options.front().costUs);
      problem.candidates[k].options.front().costUs = kLayersLastUs;
    }
    FailureOr<MilpSolution> first = solveBudgetMilp(problem, &error);
    if (failed(first))
      return func.emitError(options.passName) << ": " << error;
    for (auto [i, entry] : llvm::enumerate(layerCandidates))
      problem.candidates[entry.first].options.front().costUs = saved[i];
    layersLast = std::move(*first);
    problem.timeLimitS = 0.5 * limitS;
  }
  FailureOr<MilpSolution> solution = solveBudgetMilp(problem, &error);
  if (failed(solution))
    return func.emitError(options.passName) << ": " << error;
  // Then the search around that solve (FitBudgetMilpSearch.cpp).
  MilpSearch search{liveness,          problem,     choices,
                    placements,        placedBy,    stepWith,
                    repricePlacements, secondsLeft, priceS};
  if (options.placementEffect &&
      failed(searchAround(search, &*solution, layersLast)))
    return failure();
  stats.milpCandidates += problem.candidates.size();
  stats.milpOptimal = solution->optimal;
  stats.milpCostUs += solution->costUs;
  // Out of reach: go as low as the MILP can; the greedy loop then states
  // the smallest budget.
  ArrayRef<int> choice = solution->feasible ? ArrayRef<int>(solution->choice)
                                            : solution->smallestPeakChoice;
  applyChosen(liveness, choices, choice);
  // Then the updates the MILP moved to the host (their ops survive the
  // swaps and clones above).
  auto [hostUpdates, streamed] = placedBy(choice);
  int64_t hostLayers = 0;
  for (auto [k, op] : layerCandidates)
    hostLayers += choice.size() > size_t(k) && choice[k] >= 0;
  Builder b(func.getContext());
  SmallVector<NamedAttribute> summary = {
      b.getNamedAttr("candidates",
                     b.getI64IntegerAttr(problem.candidates.size())),
      b.getNamedAttr("cost_us", b.getF64FloatAttr(solution->costUs)),
      b.getNamedAttr("feasible", b.getBoolAttr(solution->feasible)),
      b.getNamedAttr("optimal", b.getBoolAttr(solution->optimal))};
  if (search.scoreUs >= 0) {
    // The solves scored (the first, then the re-priced rounds), and the
    // kept choice's predicted step before the greedy loop fits the rest.
    summary.push_back(
        b.getNamedAttr("solves", b.getI64IntegerAttr(search.solves)));
    summary.push_back(
        b.getNamedAttr("choice_us", b.getF64FloatAttr(search.scoreUs)));
  }
  if (options.placeUpdates && options.placementEffect) {
    summary.push_back(b.getNamedAttr(
        "placements",
        b.getI64IntegerAttr(placements.size() - layerCandidates.size())));
    summary.push_back(b.getNamedAttr(
        "host_updates", b.getI64IntegerAttr(hostUpdates.size() - hostLayers)));
    if (options.placeLayers) {
      summary.push_back(b.getNamedAttr(
          "layers", b.getI64IntegerAttr(layerCandidates.size())));
      summary.push_back(
          b.getNamedAttr("host_layers", b.getI64IntegerAttr(hostLayers)));
    }
    summary.push_back(
        b.getNamedAttr("streamed", b.getI64IntegerAttr(streamed.size())));
  }
  func->setAttr(kMilpAttr, b.getDictionaryAttr(summary));
  if (options.placeUpdates)
    options.placeUpdates(func, hostUpdates, streamed);
  return success();
}
