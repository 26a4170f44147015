//===- HostLayersByCost.cpp - kernels on the host where that is faster ----===//
//
// Part of tidal-place auto (Place.cpp; docs/memory-plan.md, "Host layers by
// cost"): where the chosen plan swaps or recomputes a kernel's result, or
// copies it out for a host op, fitted trials with that kernel (alone, and
// with its readers) on the host; the cost model decides.
//
//===----------------------------------------------------------------------===//

#include "PlaceTrial.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tidal;

namespace mlir::tidal::place {
namespace {

/// Host layers by cost: at most this many trials, and this many in a row
/// that are not taken (the candidates come largest first: where moving the
/// largest copies does not pay, the smaller ones rarely do); each step taken
/// only if predicted at least 1% faster, the whole only if at least
/// kHostMargin.
constexpr int kMaxCostTrials = 12;
constexpr int kCostPatience = 4;
constexpr double kLayerStep = 0.99;

/// The placeable device ops whose results `fitted` moves (swaps out, or
/// recomputes), with the bytes moved, most first; never optimizer updates
/// (auto's other trials place those) or ops already in `layers`.
SmallVector<int64_t> movedProducers(func::FuncOp fitted,
                                    const DenseSet<int64_t> &layers) {
  llvm::MapVector<int64_t, int64_t> bytesOf;
  for (Operation &op : fitted.getBody().front().without_terminator()) {
    Operation *producer = nullptr;
    int64_t bytes = 0;
    if (auto offload = dyn_cast<OffloadOp>(op)) {
      producer = offload.getInput().getDefiningOp();
      bytes = tensorByteSize(offload.getInput().getType());
    } else if (op.hasAttr(kRecomputeIdAttr)) {
      producer = &op;
      for (Value result : op.getResults())
        if (auto type = dyn_cast<ShapedType>(result.getType());
            type && type.hasStaticShape())
          bytes += tensorByteSize(type);
    }
    if (!producer || isHostPlaced(producer) || isOptimizerUpdate(producer))
      continue;
    auto index = producer->getAttrOfType<IntegerAttr>(kPlaceIndexAttr);
    if (index && !layers.contains(index.getInt()))
      bytesOf[index.getInt()] += bytes;
  }
  SmallVector<std::pair<int64_t, int64_t>> order(bytesOf.begin(),
                                                 bytesOf.end());
  llvm::stable_sort(
      order, [](const auto &a, const auto &b) { return a.second > b.second; });
  return llvm::to_vector(llvm::make_first_range(order));
}

/// Each placeable reader (not an optimizer update) of the results of the op
/// with place index `index` in `func`.
DenseSet<int64_t> readersOf(func::FuncOp func, int64_t index) {
  DenseSet<int64_t> readers;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto own = op.getAttrOfType<IntegerAttr>(kPlaceIndexAttr);
    if (!own || own.getInt() != index)
      continue;
    for (Operation *user : op.getUsers())
      if (auto theirs = user->getAttrOfType<IntegerAttr>(kPlaceIndexAttr);
          theirs && !isOptimizerUpdate(user))
        readers.insert(theirs.getInt());
  }
  return readers;
}

/// The search behind addLayersByCost: the better plan, or a trial with
/// nothing fitted.
Trial searchLayers(func::FuncOp func, const FitBudgetOptions &options,
                   const Trial &start, double startUs) {
  Trial best;
  // A trial that does not fit is skipped: no smallest budget is asked of it.
  FitBudgetOptions quick = options;
  quick.exactSmallest = false;
  func::FuncOp current = *start.fitted;
  DenseSet<int64_t> layers = start.layers;
  double bestUs = startUs;
  int trials = 0, misses = 0;
  auto done = [&] {
    return trials >= kMaxCostTrials || misses >= kCostPatience;
  };
  bool stepped = true;
  while (stepped && !done()) {
    stepped = false;
    for (int64_t index : movedProducers(current, layers)) {
      DenseSet<int64_t> withReaders = readersOf(func, index);
      withReaders.insert(index);
      SmallVector<DenseSet<int64_t>, 2> variants = {{index}};
      if (withReaders.size() > 1)
        variants.push_back(std::move(withReaders));
      for (const DenseSet<int64_t> &variant : variants) {
        if (done())
          break;
        ++trials, ++misses;
        Trial t{start.mode};
        t.tried = true;
        t.fitMode = start.fitMode;
        t.streamed = start.streamed;
        t.streamOnly = start.streamOnly;
        t.layers = layers;
        t.layers.insert(variant.begin(), variant.end());
        t.fitted = fittedTrial(func, t.fitMode, quick, t.moved, t.smallest,
                               t.layers, nullptr, t.streamed, t.streamOnly);
        if (!t.fitted)
          continue;
        if (double us = predictedStepUs(*t.fitted, options);
            us < kLayerStep * bestUs) {
          best = std::move(t), bestUs = us;
          layers = best.layers, current = *best.fitted;
          stepped = true, misses = 0;
          break;
        }
      }
      if (stepped || done())
        break;
    }
  }
  if (best.fitted && bestUs <= kHostMargin * startUs)
    return best;
  return Trial{};
}

} // namespace

bool addLayersByCost(func::FuncOp func, const FitBudgetOptions &options,
                     Trial &chosen, DenseSet<int64_t> &added) {
  double startUs = predictedStepUs(*chosen.fitted, options);
  Trial better = searchLayers(func, options, chosen, startUs);
  if (!better.fitted)
    return false;
  int64_t count = 0;
  for (int64_t index : better.layers)
    if (!chosen.layers.contains(index))
      added.insert(index), ++count;
  Builder b(func.getContext());
  better.fitted.get()->setAttr(
      kHostLayersByCostAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("layers", b.getI64IntegerAttr(count)),
           b.getNamedAttr("before_us", b.getF64FloatAttr(startUs)),
           b.getNamedAttr("after_us", b.getF64FloatAttr(predictedStepUs(
                                          *better.fitted, options)))}));
  // The MILP's summary stays: its placements are kept (the trials are
  // fitted greedily around them).
  if (Attribute milp = chosen.fitted.get()->getAttr(kMilpAttr))
    better.fitted.get()->setAttr(kMilpAttr, milp);
  chosen = std::move(better);
  return true;
}
} // namespace mlir::tidal::place
