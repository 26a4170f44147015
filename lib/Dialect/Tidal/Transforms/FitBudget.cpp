//===- FitBudget.cpp - fit a device arena by swapping and recomputing -----===//
//
// See FitBudget.h.
//
//===----------------------------------------------------------------------===//

#include "Fitter.h"

#include <limits>

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace mlir::tidal;

using namespace mlir::tidal::fit;

/// The device kernel at position `p` of `ops`, or the nearest one within
/// eight positions (earlier first); null if none.
static Operation *kernelNear(ArrayRef<Operation *> ops, int64_t p) {
  auto kernel = [&](int64_t q) -> Operation * {
    if (q < 1 || q > (int64_t)ops.size())
      return nullptr;
    Operation *op = ops[q - 1];
    if (isViewOp(op) || isCopyOp(op) || isa<ConstantOp>(op) ||
        isHostPlaced(op) || op->hasTrait<OpTrait::IsTerminator>())
      return nullptr;
    return op;
  };
  for (int64_t d = 0; d <= 8; ++d)
    for (int64_t q : {p - d, p + d})
      if (Operation *op = kernel(q))
        return op;
  return nullptr;
}

/// The value that `v` is a view of (through any views), or `v`.
Value fit::viewSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isViewOp(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

double Fitter::opUs(Operation *op) {
  auto [it, inserted] = kernelUs.try_emplace(op, 0.0);
  if (inserted)
    // Host-placed ops run on the host's stream, not the compute stream.
    it->second = isHostPlaced(op) ? 0.0 : estimateCost(op, options.device).us;
  return it->second;
}

LogicalResult Fitter::run() {
  const int64_t budget = options.budget;
  int64_t smallestReached = std::numeric_limits<int64_t>::max();
  if (options.milp && failed(solveExact()))
    return failure();
  lastOps.clear();
  // The function's records, walked once and then updated with what each
  // batch of steps changed (collectCandidates clears `rewired`, so it is
  // read first).
  flat = std::make_unique<FlatStep>(func);
  inserted.ops.clear();
  moved.clear();
  rewired.clear();
  while (true) {
    flat->update(inserted.ops, moved, rewired);
    inserted.ops.clear();
    moved.clear();
    BufferLiveness liveness(*flat, /*inPlace=*/true);
    collectCandidates(liveness);
    SmallVector<int64_t> live = liveness.liveBytes(options.alignment);
    PeakIndex peaks(live);
    int64_t position = peaks.peak(), peak = live[position];
    // While the lower bound is over the budget the steps go at its peak;
    // once it fits but the packed arena does not (the packing is not always
    // at the bound) they go on at the peak, which lowers the bound and with
    // it, in practice, the packing.
    // What is asked of a packing is whether it fits the budget and, with
    // the smallest budget's bookkeeping, whether it is below the smallest
    // so far and by how much: it stops once past both (`limit`), and is
    // exact at or under them.
    auto packed = [&](int64_t limit) {
      return packedArenaSize(liveness, options.alignment, /*host=*/false,
                             limit);
    };
    const int64_t belowSmallest = trackSmallest
                                      ? smallestReached - 1
                                      : std::numeric_limits<int64_t>::min();
    int64_t arena =
        peak <= budget ? packed(std::max(budget, belowSmallest)) : peak;
    if (arena <= budget)
      return success();
    // The packed arena is not monotone along the steps (packing is not
    // always at the bound): remember the smallest. A run with that budget
    // stops at the first state that packs into it, at the latest there.
    if (trackSmallest && peak < smallestReached)
      smallestReached = std::min(
          smallestReached, peak <= budget ? arena : packed(belowSmallest));
    // Large graphs take several steps per liveness analysis: a batch size
    // that depends on the graph only (never on the budget), so that a
    // smaller budget still takes the same steps first. Within a batch the
    // bytes live are updated in place, and tensors the batch touched wait
    // for the next analysis, as do moves of earlier copies.
    const int64_t batch =
        std::max<int64_t>(1, liveness.getOps().size() / options.opsPerStep);
    touched.clear();
    for (int64_t step = 0; step < batch; ++step) {
      position = peaks.peak();
      std::optional<Choice> best = pick(liveness, peaks, position);
      if (!best && step == 0 && !trackSmallest)
        return failure();
      if (!best && step == 0) {
        // Nothing left: the smallest budget these steps reach is the
        // packed arena now. (A run with that budget takes the same steps
        // in the same order and stops here at the latest.)
        int64_t smallest =
            std::min(smallestReached,
                     packedArenaSize(liveness, options.alignment,
                                     /*host=*/false, smallestReached - 1));
        stats.smallestBudget = smallest;
        stats.peakOp = kernelNear(liveness.getOps(), position);
        return func.emitError("device memory budget ")
               << budget << " bytes is too small for @" << func.getSymName()
               << ": the smallest budget its plan reaches is " << smallest
               << " bytes (" << stats.swapped << " tensors swapped, "
               << stats.recomputed << " recomputed"
               << (stats.refetched
                       ? ", " + std::to_string(stats.refetched) + " refetched"
                       : std::string())
               << "; the peak is at op " << position << ")";
      }
      if (!best || (step > 0 && (best->kind == Choice::DelayPrefetch ||
                                 best->kind == Choice::AdvanceWait)))
        break;
      const int64_t bytes = alignBytes(best->bytes, options.alignment);
      switch (best->kind) {
      case Choice::Swap:
        applySwap(liveness, *best);
        peaks.subtract(best->swap.waitAt, best->swap.prefetchAt, bytes);
        break;
      case Choice::Refetch:
        applyRefetch(liveness, *best);
        for (const Choice::Gap &gap : best->gaps)
          peaks.subtract(gap.swap.waitAt, gap.swap.prefetchAt, bytes);
        break;
      case Choice::Recompute:
        applyRecompute(liveness, *best);
        peaks.subtract(best->before + 1, best->after, bytes);
        break;
      case Choice::DelayPrefetch:
      case Choice::AdvanceWait:
        best->move->moveBefore(liveness.getOps()[best->target - 1]);
        moved.push_back(best->move);
        ++stats.copiesMoved;
        step = batch; // the copy ops are not in this analysis
        break;
      case Choice::PlaceUpdate:
      case Choice::PlaceLayer:
        break; // the MILP's alone (solveExact); the greedy loop has none
      }
    }
  }
}

void Fitter::replaceFrom(Value from, Value to, Operation *next) {
  replacedFrom[from] = {to, next};
  touched.insert(from);
  from.replaceUsesWithIf(to, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    bool replace = user != to.getDefiningOp() && user->getBlock() == body &&
                   !isa<OffloadOp>(user) &&
                   (user == next || next->isBeforeInBlock(user));
    if (replace)
      rewired.insert(user);
    return replace;
  });
}

void Fitter::claimLink(const BufferLiveness &liveness,
                       DenseMap<Operation *, double> &used,
                       std::vector<double> &usedAt, int64_t bytes, int64_t from,
                       int64_t to) {
  ArrayRef<Operation *> ops = liveness.getOps();
  const bool byPosition = positionsOf == &liveness;
  if (!byPosition)
    lastOps.clear();
  double left = copyUs(bytes);
  for (int64_t p = from; p < to && left > 0; ++p) {
    double take = std::min(left, byPosition ? spareAt(usedAt, p)
                                            : spare(used, ops[p - 1]));
    used[ops[p - 1]] += take;
    if (byPosition)
      usedAt[p] += take;
    left -= take;
  }
}

void Fitter::applyRefetch(const BufferLiveness &liveness, const Choice &c) {
  ArrayRef<Operation *> ops = liveness.getOps();
  Location loc = c.value.getLoc();
  touched.insert(c.source);
  // Gap by gap: each new copy replaces the one before from its use on.
  Value current = c.value;
  for (const Choice::Gap &gap : c.gaps) {
    claimLink(liveness, toDeviceUsed, deviceUsedAt, c.bytes,
              gap.swap.prefetchAt, gap.after);
    OpBuilder b(ops[gap.swap.prefetchAt - 1], &inserted);
    Value prefetch = b.create<PrefetchOp>(loc, c.source);
    Operation *next = ops[gap.after - 1];
    b.setInsertionPoint(next);
    Value back = b.create<WaitOp>(loc, prefetch);
    replaceFrom(current, back, next);
    current = back;
    ++stats.refetched;
    stats.refetchedBytes += c.bytes;
  }
}

void Fitter::applyChosen(const BufferLiveness &liveness,
                         ArrayRef<SmallVector<Choice, 2>> choices,
                         ArrayRef<int> choice) {
  DenseMap<Value, Choice> refetched;
  SmallVector<Value> refetchOrder;
  for (auto [k, option] : llvm::enumerate(choice)) {
    if (option < 0 || choices[k][option].kind != Choice::Refetch)
      continue;
    const Choice &c = choices[k][option];
    auto [it, inserted] = refetched.try_emplace(c.value, c);
    if (inserted)
      refetchOrder.push_back(c.value);
    else
      it->second.gaps.append(c.gaps.begin(), c.gaps.end());
  }
  for (Value v : refetchOrder) {
    Choice &c = refetched[v];
    llvm::sort(c.gaps, [](const Choice::Gap &x, const Choice::Gap &y) {
      return x.before < y.before;
    });
    applyRefetch(liveness, c);
  }
  for (bool clones : {false, true})
    for (auto [k, option] : llvm::enumerate(choice)) {
      if (option < 0)
        continue;
      const Choice &c = choices[k][option];
      if (c.kind == Choice::Refetch || c.kind == Choice::PlaceUpdate ||
          c.kind == Choice::PlaceLayer ||
          (c.kind == Choice::Recompute) != clones)
        continue;
      if (clones)
        applyRecompute(liveness, c);
      else
        applySwap(liveness, c);
    }
}

void Fitter::applySwap(const BufferLiveness &liveness, const Choice &c) {
  ArrayRef<Operation *> ops = liveness.getOps();
  // The link time the copies take under the kernels that hide them.
  claimLink(liveness, toHostUsed, hostUsedAt, c.bytes, c.before + 1,
            c.swap.waitAt);
  claimLink(liveness, toDeviceUsed, deviceUsedAt, c.bytes, c.swap.prefetchAt,
            c.after);

  Location loc = c.value.getLoc();
  OpBuilder b(func.getContext(), &inserted);
  if (c.before == 0)
    b.setInsertionPointToStart(body);
  else
    b.setInsertionPointAfter(ops[c.before - 1]);
  Value offload = b.create<OffloadOp>(loc, c.value);
  // The wait goes first among the copies between op waitAt - 1 and op
  // waitAt: choices applied together (the optimal mode, or several steps
  // per liveness analysis) insert other tensors' prefetches and clones
  // there too, and the tensor must be gone before they arrive, as the
  // MILP counts it (gone at waitAt, the others live only from their op).
  if (c.swap.waitAt - 1 == c.before)
    b.setInsertionPointAfter(offload.getDefiningOp());
  else
    b.setInsertionPointAfter(ops[c.swap.waitAt - 2]);
  Value hostCopy = b.create<WaitOp>(loc, offload);
  b.setInsertionPoint(ops[c.swap.prefetchAt - 1]);
  Value prefetch = b.create<PrefetchOp>(loc, hostCopy);
  Operation *next = ops[c.after - 1];
  b.setInsertionPoint(next);
  Value back = b.create<WaitOp>(loc, prefetch);
  replaceFrom(c.value, back, next);
  ++stats.swapped;
  stats.swappedBytes += c.bytes;
}

void Fitter::applyRecompute(const BufferLiveness &liveness, const Choice &c) {
  Operation *next = liveness.getOps()[c.after - 1];
  OpBuilder b(next, &inserted);
  IRMapping map;
  // Operands replaced from this point on (by choices applied together in
  // the optimal mode) are read from their replacements.
  for (Operation *op : c.clone.chain)
    for (Value operand : op->getOperands())
      if (auto it = replacedFrom.find(operand); it != replacedFrom.end())
        if (Operation *from = it->second.second;
            from == next || from->isBeforeInBlock(next))
          map.map(operand, it->second.first);
  for (Operation *op : c.clone.chain) {
    // A clone of a clone recomputes the same original.
    auto id = op->getAttrOfType<IntegerAttr>(kRecomputeOfAttr);
    if (!id)
      id = op->getAttrOfType<IntegerAttr>(kRecomputeIdAttr);
    if (!id) {
      id = b.getI64IntegerAttr(nextRecomputeId++);
      op->setAttr(kRecomputeIdAttr, id);
    }
    for (Value operand : op->getOperands())
      touched.insert(operand);
    Operation *clone = b.clone(*op, map);
    clone->removeAttr(kRecomputeIdAttr);
    clone->setAttr(kRecomputeOfAttr, id);
  }
  replaceFrom(c.value, map.lookup(c.value), next);
  ++stats.recomputed;
  stats.recomputedBytes += c.bytes;
  stats.recomputedOps += c.clone.chain.size();
}
