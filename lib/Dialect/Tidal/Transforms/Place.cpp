//===- Place.cpp - ops on the device or the host CPU ----------------------===//
//
// tidal-place: which ops of a device target's step run on the host CPU and
// which arguments live in host memory, with the copies between the two
// (Passes.td has the contract; docs/memory-plan.md, "Placement").
//
//===----------------------------------------------------------------------===//

#include "FitBudget.h"
#include "PlaceTrial.h"
#include "Placer.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALPLACEPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

using namespace mlir::tidal::place;

namespace {

/// Runs the optimizer updates with place indices in `hosted` and
/// `streamed` on the host, the parameters of those in `streamed` in host
/// memory too (the joint MILP's placements).
PlaceStats placeUpdates(func::FuncOp func, const FitBudgetOptions &options,
                        const DenseSet<int64_t> &hosted,
                        const DenseSet<int64_t> &streamed) {
  PlaceStats placed;
  if (hosted.empty() && streamed.empty())
    return placed;
  DenseSet<int64_t> all = hosted;
  all.insert(streamed.begin(), streamed.end());
  Placer(func, options, hostOpsFor(func, "device", all), !streamed.empty(),
         hostOpsFor(func, "device", streamed))
      .run(placed);
  return placed;
}

/// Replaces `func`'s body and attributes with `fitted`'s.
void adopt(func::FuncOp func, func::FuncOp fitted) {
  func.getBody().takeBody(fitted.getBody());
  func->setAttrs(fitted->getAttrDictionary());
  func.setAllArgAttrs(fitted.getAllArgAttrs());
  func.setAllResultAttrs(fitted.getAllResultAttrs());
}

/// The most layers auto moves to the host (one per trial), and how many
/// in a row may fail to lower the floor.
constexpr int kMaxHostLayers = 48;
constexpr int kHostLayerPatience = 16;

/// Auto: everything on the device if that fits the budget without moving
/// anything (or at all, on a graph of more than `largeGraphOps` ops).
/// Otherwise the fitted trials compete: the host optimizer (`optimizer`)
/// and the host optimizer with streamed parameters (`stream`; on a graph
/// of more than `largeGraphOps` ops only if the first does not fit). A host
/// plan replaces a fitted all-device plan only if predicted at least 5% faster;
/// between the host plans the faster wins. If none fits, the one whose steps
/// reach the smallest budget (tidal-schedule-swaps then states it). The chosen
/// fitted trial, if any, replaces `func` (`kept`). Returns the mode chosen.
StringRef chooseAuto(func::FuncOp func, const FitBudgetOptions &options,
                     int64_t largeGraphOps, bool hostLayers,
                     bool hostLayersByCost, bool &kept,
                     DenseSet<int64_t> &layers) {
  kept = false;
  // With the MILP planner: one solve chooses the swaps, recomputations and
  // which optimizer updates run on the host (with their state, and their
  // parameters streamed or not); the greedy loop then fits what the
  // packing still exceeds. The greedy planner's own choice (the trials
  // below, fitted greedily) is the fallback: the faster predicted step is
  // kept (ties: the MILP's), and `tidal.place_planner` says which. If
  // neither fits, the trials below run with the MILP (host layers, the
  // smallest budget).
  if (options.milp) {
    OwningOpRef<func::FuncOp> joint(func.clone());
    FitBudgetOptions withPlacement = options;
    size_t hostUpdates = 0;
    DenseSet<int64_t> jointHosted, jointStreamed;
    // Placements (updates on the host, streamed or not) applied to a copy
    // of the function as the MILP sees it (before its swaps): the
    // predicted step, and the device bytes at each of the function's
    // positions (at an op, the most over it and the copies inserted just
    // before it).
    withPlacement.placementEffect =
        [&](func::FuncOp f, const DenseSet<int64_t> &hosted,
            const DenseSet<int64_t> &streamed, bool wantLive,
            FitBudgetOptions::PlacementEffect &out) {
          IRMapping map;
          OwningOpRef<func::FuncOp> one(f.clone(map));
          PlaceStats placed = placeUpdates(*one, options, hosted, streamed);
          if (placed.hostOps == 0 && hosted.size() + streamed.size() > 0)
            return false;
          if (out.fit)
            out.fits = succeeded(fitBudgetGreedy(*one, options));
          if (!out.wantTimes) {
            out.stepUs = predictedStepUs(*one, options);
          } else {
            StepTimeline timeline = predictedTimeline(*one, options);
            out.stepUs = timeline.stepUs;
            DenseMap<Operation *, size_t> at;
            for (auto [i, op] :
                 llvm::enumerate(one->getBody().front().without_terminator()))
              at[&op] = i;
            for (Operation &op : f.getBody().front().without_terminator()) {
              size_t i = at.lookup(map.lookup(&op));
              out.computeDoneUs.push_back(timeline.computeDoneUs[i]);
              out.toHostReadyUs.push_back(timeline.toHostReadyUs[i]);
              out.toDeviceReadyUs.push_back(timeline.toDeviceReadyUs[i]);
            }
          }
          if (!wantLive)
            return true;
          BufferLiveness base(f), trial(*one);
          SmallVector<int64_t> after = trial.liveBytes(options.alignment);
          ArrayRef<Operation *> baseOps = base.getOps();
          ArrayRef<Operation *> trialOps = trial.getOps();
          DenseSet<Operation *> originals;
          for (Operation *op : baseOps)
            originals.insert(map.lookup(op));
          // The bytes at trial position t and the new ops just before it.
          auto around = [&](int64_t t) {
            int64_t most = after[t];
            for (int64_t q = t - 1;
                 q >= 1 && !originals.contains(trialOps[q - 1]); --q)
              most = std::max(most, after[q]);
            return most;
          };
          out.live.assign(baseOps.size() + 2, 0);
          out.live.front() = after.front();
          for (auto [i, op] : llvm::enumerate(baseOps))
            out.live[i + 1] = around(trial.getPosition(map.lookup(op)));
          out.live.back() = around(int64_t(after.size()) - 1);
          return true;
        };
    withPlacement.placeUpdates = [&](func::FuncOp f,
                                     const DenseSet<int64_t> &hosted,
                                     const DenseSet<int64_t> &streamed) {
      hostUpdates = hosted.size() + streamed.size();
      jointHosted = hosted, jointStreamed = streamed;
      placeUpdates(f, options, hosted, streamed);
    };
    // Layers are candidates of the same MILP by cost (on graphs small
    // enough for the greedy planner's layer search too).
    int64_t numOps = func.getBody().front().getOperations().size();
    withPlacement.placeLayers = hostLayersByCost && numOps <= largeGraphOps;
    ScopedDiagnosticHandler quiet(func.getContext(),
                                  [](Diagnostic &) { return success(); });
    FitBudgetStats stats;
    // The greedy planner's choice first: the MILP's placements are priced
    // against it before the first solve (a warm start), and it is the
    // fallback.
    OwningOpRef<func::FuncOp> greedy(func.clone());
    FitBudgetOptions greedyOptions = options;
    greedyOptions.milp = false;
    bool greedyKept = false;
    DenseSet<int64_t> greedyLayers = layers;
    StringRef greedyMode =
        chooseAuto(*greedy, greedyOptions, largeGraphOps, hostLayers,
                   hostLayersByCost, greedyKept, greedyLayers);
    if (greedyKept && (greedyLayers.empty() || withPlacement.placeLayers))
      for (Operation &op : greedy->getBody().front().without_terminator())
        if (isHostPlaced(&op) &&
            (isOptimizerUpdate(&op) || withPlacement.placeLayers))
          if (auto index = op.getAttrOfType<IntegerAttr>(kPlaceIndexAttr)) {
            // Streamed: the parameter it updates lives in host memory.
            auto param = dyn_cast<BlockArgument>(op.getOperand(0));
            bool streamed = param && isOptimizerUpdate(&op) &&
                            greedy->getArgAttrOfType<StringAttr>(
                                param.getArgNumber(), kSpaceAttr);
            (streamed ? withPlacement.placementStart.second
                      : withPlacement.placementStart.first)
                .insert(index.getInt());
          }
    bool jointFits = succeeded(fitBudget(*joint, withPlacement, stats));
    // Where the MILP's swaps leave the greedy loop short, fitBudget falls
    // back to the greedy loop alone on the unplaced step, which may not fit
    // or be slow: the MILP's placements are then also kept with the greedy
    // loop fitting around them alone, and the faster of the two taken.
    auto milpOf = [&](func::FuncOp f) {
      return f->getAttrOfType<DictionaryAttr>(kMilpAttr);
    };
    bool fellBack =
        jointFits && milpOf(*joint) && milpOf(*joint).get("greedy_fallback");
    if ((!jointFits || fellBack) &&
        (!jointHosted.empty() || !jointStreamed.empty())) {
      OwningOpRef<func::FuncOp> placed(func.clone());
      placeUpdates(*placed, options, jointHosted, jointStreamed);
      FitBudgetStats placedStats;
      if (succeeded(fitBudget(*placed, greedyOptions, placedStats)) &&
          (!jointFits || predictedStepUs(*placed, options) <
                             predictedStepUs(*joint, options))) {
        if (DictionaryAttr milp = milpOf(*joint)) {
          NamedAttrList attrs(milp);
          attrs.set("greedy_fallback", BoolAttr::get(func.getContext(), true));
          attrs.set("placements_kept", BoolAttr::get(func.getContext(), true));
          (*placed)->setAttr(kMilpAttr, attrs.getDictionary(func.getContext()));
        }
        joint = std::move(placed), jointFits = true;
      }
    }
    // Host layers by cost on the MILP's plan too (the greedy one has them
    // already), each trial fitted greedily, before the two are compared:
    // the MILP prices each layer against its own model of the step, and
    // where the greedy loop still had to fit the rest after it, moving one
    // more of the kernels whose results that fit swaps can still pay.
    if (jointFits && hostLayersByCost && numOps <= largeGraphOps) {
      Trial start{"optimizer"};
      start.fitted = std::move(joint);
      start.layers = jointHosted;
      start.layers.insert(jointStreamed.begin(), jointStreamed.end());
      start.streamed = !jointStreamed.empty();
      start.streamOnly = jointStreamed;
      DenseSet<int64_t> added;
      addLayersByCost(func, greedyOptions, start, added);
      joint = std::move(start.fitted);
    }
    const double inf = std::numeric_limits<double>::infinity();
    double jointUs = jointFits ? predictedStepUs(*joint, options) : inf;
    double greedyUs = greedyKept ? predictedStepUs(*greedy, options) : inf;
    if (jointFits || greedyKept) {
      bool milpWins = jointUs <= greedyUs;
      adopt(func, milpWins ? *joint : *greedy), kept = true;
      Builder b(func.getContext());
      SmallVector<NamedAttribute> note = {b.getNamedAttr(
          "kept", b.getStringAttr(milpWins ? "milp" : "greedy"))};
      if (jointFits)
        note.push_back(b.getNamedAttr("milp_us", b.getF64FloatAttr(jointUs)));
      if (greedyKept)
        note.push_back(
            b.getNamedAttr("greedy_us", b.getF64FloatAttr(greedyUs)));
      func->setAttr(kPlacePlannerAttr, b.getDictionaryAttr(note));
      if (milpWins)
        return hostUpdates ? "optimizer" : "device";
      layers = std::move(greedyLayers);
      return greedyMode;
    }
  }
  Trial device{"device"}, host{"optimizer"}, stream{"stream"};
  int64_t streamPeak = -1;
  // Trials first ask only whether they fit (`quick`). Where nothing fits,
  // the floors decide (the host layers' steps below, the smallest budget
  // the error states), and a failed trial is fitted again for its floor
  // (knowFloor): the same steps, with a packing at every state, which on a
  // graph whose trials mostly fail was most of the plan time.
  FitBudgetOptions quick = options, floorFirst = options;
  quick.exactSmallest = false;
  floorFirst.fastFirst = false;
  auto fit = [&](Trial &t, bool floor, bool expectFailure = false) {
    t.floorKnown = floor;
    t.fitted = fittedTrial(func, t.mode,
                           !floor          ? quick
                           : expectFailure ? floorFirst
                                           : options,
                           t.moved, t.smallest, t.layers,
                           t.mode == "stream" ? &streamPeak : nullptr);
  };
  auto attempt = [&](Trial &t, bool floor, bool expectFailure = false) {
    t.tried = true;
    t.fitMode = t.mode;
    t.layers = t.mode == "stream" ? layers : DenseSet<int64_t>();
    fit(t, floor, expectFailure);
  };
  auto knowFloor = [&](Trial &t) {
    if (t.tried && !t.fitted && !t.floorKnown)
      fit(t, /*floor=*/true, /*expectFailure=*/true);
  };
  // With the persistent arguments alone over the budget, no all-device plan
  // fits; its trial runs only if no other fits either, for the smallest
  // budget it reaches.
  bool deviceHopeless =
      persistentBytes(func, options.alignment) > options.budget;
  if (!deviceHopeless)
    attempt(device, /*floor=*/false);
  // On a large graph a fitted all-device plan is taken as is: a second
  // trial would double the compile time and memory for a small expected
  // gain (ResNet-3563 in 12 GiB already takes 30 min and 20 GiB).
  int64_t numOps = func.getBody().front().getOperations().size();
  if (device.fitted && (!device.moved || numOps > largeGraphOps)) {
    adopt(func, *device.fitted), kept = true;
    return "device";
  }
  // With the parameters alone over the budget, the host optimizer (which
  // leaves them on the device) cannot fit either: on a large graph its
  // trial, a whole fitting run, is skipped unless streaming fails too.
  int64_t paramBytes = 0;
  for (BlockArgument arg : func.getArguments())
    if (auto role =
            func.getArgAttrOfType<ArgRoleAttr>(arg.getArgNumber(), kRoleAttr);
        role && role.getValue() == ArgRole::param)
      if (auto type = dyn_cast<ShapedType>(arg.getType());
          type && type.hasStaticShape())
        paramBytes += alignBytes(tensorByteSize(type), options.alignment);
  bool hostHopeless = paramBytes > options.budget && numOps > largeGraphOps;
  if (!hostHopeless)
    attempt(host, /*floor=*/false);
  // Streaming copies each parameter in once where the host optimizer
  // copies it out and back, so it can win even where that one fits.
  if (!host.fitted || numOps <= largeGraphOps)
    attempt(stream, /*floor=*/false);
  // Layers on the host: while nothing fits, the device kernel at the
  // streamed plan's floor (its working set is what stops it) runs on the
  // host instead, reading host copies of its device operands and writing
  // its results to host memory, from where device readers prefetch them.
  // Each step depends on the floor, never on the budget, so the smallest
  // budget stays exact; the floor is not monotone (the copies take
  // bytes elsewhere), so the best set so far is kept. It stops when a plan
  // fits, after kHostLayerPatience layers that do not lower the floor, or
  // after kMaxHostLayers.
  if (hostLayers && !device.fitted && !host.fitted && !stream.fitted &&
      numOps <= largeGraphOps) {
    knowFloor(stream);
    int64_t bestFloor = stream.smallest, stalled = 0;
    DenseSet<int64_t> best;
    for (int k = 0;
         k < kMaxHostLayers && streamPeak >= 0 &&
         !layers.contains(streamPeak) && stalled < kHostLayerPatience;
         ++k) {
      layers.insert(streamPeak);
      Trial t{"stream"};
      attempt(t, /*floor=*/true, /*expectFailure=*/true);
      if (t.fitted) {
        stream = std::move(t);
        best = layers;
        break;
      }
      if (t.smallest < bestFloor) {
        bestFloor = t.smallest, best = layers, stalled = 0;
        stream.smallest = t.smallest;
      } else {
        ++stalled;
      }
    }
    layers = std::move(best);
  }
  if (!host.fitted && !stream.fitted && !host.tried)
    attempt(host, /*floor=*/true);
  if (!host.fitted && !stream.fitted && !device.tried)
    attempt(device, /*floor=*/true);

  // Per parameter: only the k largest parameters leave the device, k = 1,
  // 2, 4, ... below all of them: their updates and state on the host
  // (ZeRO-Offload for those alone), or the parameters streamed too. Where
  // not every parameter need leave the device, fewer copies (and fewer
  // swaps than an all-device plan) can make a faster step. Tried where some
  // host plan fits or the all-device one needed swaps, on graphs up to
  // `largeGraphOps` ops, with the greedy planner.
  SmallVector<Trial, 4> partial;
  // Not with the MILP planner: each trial would be a solve under its time
  // limit.
  if (numOps <= largeGraphOps && !options.milp &&
      (host.fitted || stream.fitted || (device.fitted && device.moved))) {
    // (bytes of the results: parameter and state; index), largest first;
    // `stateful`: without plain SGD, which frees nothing on the host unless
    // its parameter is streamed.
    SmallVector<std::pair<int64_t, int64_t>> stateful, all;
    for (Operation &op : func.getBody().front().without_terminator())
      if (isOptimizerUpdate(&op))
        if (auto index = op.getAttrOfType<IntegerAttr>(kPlaceIndexAttr)) {
          int64_t bytes = 0;
          for (Value result : op.getResults())
            if (auto type = dyn_cast<ShapedType>(result.getType());
                type && type.hasStaticShape())
              bytes += tensorByteSize(type);
          all.push_back({bytes, index.getInt()});
          if (!isa<SgdUpdateOp>(op))
            stateful.push_back({bytes, index.getInt()});
        }
    auto largestFirst = [](const auto &a, const auto &b) {
      return a.first > b.first;
    };
    llvm::stable_sort(stateful, largestFirst);
    llvm::stable_sort(all, largestFirst);
    // Each k: the host optimizer for the k largest, and those k parameters
    // streamed as well (in host memory, their device copies dropped
    // between uses).
    auto tryLargest = [&](ArrayRef<std::pair<int64_t, int64_t>> updates,
                          size_t k, bool streamed) {
      DenseSet<int64_t> chosenUpdates;
      for (const auto &update : updates.take_front(k))
        chosenUpdates.insert(update.second);
      Trial t{streamed ? "stream" : "optimizer"};
      t.tried = true;
      t.layers = chosenUpdates;
      t.streamed = streamed;
      t.fitted = fittedTrial(func, "device", quick, t.moved, t.smallest,
                             chosenUpdates, nullptr, streamed);
      if (t.fitted)
        partial.push_back(std::move(t));
    };
    for (size_t k = 1; k < all.size(); k *= 2) {
      if (k < stateful.size())
        tryLargest(stateful, k, /*streamed=*/false);
      tryLargest(all, k, /*streamed=*/true);
    }
  }

  Trial *chosen = nullptr;
  double chosenUs = 0;
  SmallVector<Trial *, 8> hostPlans = {&host, &stream};
  for (Trial &t : partial)
    hostPlans.push_back(&t);
  for (Trial *t : hostPlans)
    if (t->fitted)
      if (double us = predictedStepUs(*t->fitted, options);
          !chosen || us < chosenUs)
        chosen = t, chosenUs = us;
  if (device.fitted &&
      (!chosen ||
       chosenUs >= kHostMargin * predictedStepUs(*device.fitted, options)))
    chosen = &device;
  if (!chosen) {
    for (Trial *t : {&device, &host, &stream})
      knowFloor(*t);
    chosen = &device;
    for (Trial *t : {&host, &stream})
      if (t->tried && t->smallest < chosen->smallest)
        chosen = t;
  }
  // Host layers by cost: where the chosen plan copies or recomputes.
  if (chosen->fitted && hostLayersByCost && numOps <= largeGraphOps)
    addLayersByCost(func, options, *chosen, layers);
  if (chosen->fitted)
    adopt(func, *chosen->fitted), kept = true;
  return chosen->mode;
}

struct Place : tidal::impl::TidalPlacePassBase<Place> {
  using TidalPlacePassBase::TidalPlacePassBase;

  void runOnOperation() override {
    if (mode != "auto" && mode != "device" && mode != "host" &&
        mode != "optimizer" && mode != "stream") {
      getOperation().emitError("tidal-place: unknown mode '")
          << mode << "' (expected auto, device, host, optimizer or stream)";
      return signalPassFailure();
    }
    if (budget < 0 || linkGbps <= 0) {
      getOperation().emitError("tidal-place: budget must be non-negative "
                               "and link-gbps positive");
      return signalPassFailure();
    }
    FitBudgetOptions options;
    options.budget = budget;
    options.linkGbps = linkGbps;
    options.alignment = alignment;
    if (failed(profileFromOptions(getOperation(), getArgument(), profile,
                                  gflops, gbytesPerS, opOverheadUs,
                                  options.device, &options.linkLatencyUs)))
      return signalPassFailure();
    options.sharedCpu = sharedCpu;
    options.swap = swap;
    options.recompute = recompute;
    options.passName = "tidal-place";
    // The trials fit as tidal-schedule-swaps will, so the kept one is what
    // it would produce.
    if (planner != "greedy" && planner != "milp" && planner != "auto") {
      getOperation().emitError("tidal-place: unknown planner '")
          << planner << "' (expected greedy, milp or auto)";
      return signalPassFailure();
    }
    PlaceStats stats;
    FitBudgetOptions::TrialCounts trials;
    options.trialCounts = &trials;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      trials = {};
      if (func.isExternal() ||
          (!function.empty() && func.getSymName() != function))
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tidal-place: more than one block");
        return signalPassFailure();
      }
      options.milp = plannerUsesMilp(planner, func);
      StringRef chosen = mode;
      if (mode == "auto") {
        bool kept = false;
        int64_t index = 0;
        for (Operation &op : func.getBody().front().without_terminator())
          if (isPlaceable(&op))
            op.setAttr(
                kPlaceIndexAttr,
                IntegerAttr::get(IntegerType::get(&getContext(), 64), index++));
        DenseSet<int64_t> layers;
        chosen = budget > 0
                     ? chooseAuto(func, options, largeGraphOps, hostLayers,
                                  hostLayersByCost, kept, layers)
                     : "device";
        if (budget > 0) {
          Builder b(&getContext());
          func->setAttr(
              kPlaceTrialsAttr,
              b.getDictionaryAttr(
                  {b.getNamedAttr("trials", b.getI64IntegerAttr(trials.trials)),
                   b.getNamedAttr("fitted", b.getI64IntegerAttr(trials.fitted)),
                   b.getNamedAttr("unreachable",
                                  b.getI64IntegerAttr(trials.unreachable))}));
        }
        if (!kept)
          Placer(func, options,
                 hostOpsFor(func, chosen,
                            chosen == "stream" ? layers : DenseSet<int64_t>()),
                 chosen == "stream")
              .run(stats);
        func.walk([&](Operation *op) { op->removeAttr(kPlaceIndexAttr); });
        // A kept trial is the function now: count what it placed.
        if (kept)
          func.walk([&](Operation *op) { stats.hostOps += isHostPlaced(op); });
        continue;
      }
      Placer(func, options, hostOpsFor(func, chosen), chosen == "stream")
          .run(stats);
    }
    numHostOps += stats.hostOps;
    numHostArgs += stats.hostArgs;
    bytesHostArgs += stats.hostArgBytes;
    numCopies += stats.copies;
  }
};

} // namespace
