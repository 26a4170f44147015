//===- ScheduleSwaps.cpp - offload idle tensors to fit a device budget ----===//
//
// While the device arena's lower bound exceeds the budget: find the peak
// position P; among the tensors idle across P (no use strictly between the
// uses u < P < w around it), swap the largest: offload right after u, wait
// for the offload before P (after the kernels that hide the copy, or at the
// latest just before P), prefetch after P early enough to hide the copy
// before w, and wait just before w, whose uses (and all later ones) read the
// prefetched copy. Each swap lowers the live bytes at P by the tensor's
// size and raises them nowhere, so the loop ends.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALSCHEDULESWAPSPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

struct Candidate {
  Value value;
  int64_t bytes = 0;
  int64_t before = 0, after = 0; // the uses around the peak
};

struct ScheduleSwaps : tidal::impl::TidalScheduleSwapsPassBase<ScheduleSwaps> {
  using TidalScheduleSwapsPassBase::TidalScheduleSwapsPassBase;

  void runOnOperation() override {
    if (budget < 0 || linkGbps <= 0) {
      getOperation().emitError("tidal-schedule-swaps: budget must be "
                               "non-negative and link-gbps positive");
      return signalPassFailure();
    }
    if (budget == 0)
      return;
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() ||
          (!function.empty() && func.getSymName() != function))
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tidal-schedule-swaps: more than one block");
        return signalPassFailure();
      }
      func->setAttr(kDeviceBudgetAttr, b.getI64IntegerAttr(budget));
      if (failed(fit(func)))
        return signalPassFailure();
    }
  }

  /// Swaps until the packed device arena fits; the smallest reachable
  /// arena if not. While the liveness lower bound is over the budget the
  /// swaps go at its peak; once it fits but the packed arena does not (the
  /// packing is not always at the bound), they go on at the peak, which
  /// lowers the bound and with it, in practice, the packing.
  LogicalResult fit(func::FuncOp func) {
    swapped = 0;
    while (true) {
      BufferLiveness liveness(func);
      SmallVector<int64_t> live = liveness.liveBytes(alignment);
      auto peakIt = std::max_element(live.begin(), live.end());
      int64_t peak = *peakIt, position = peakIt - live.begin();
      int64_t arena =
          peak <= budget ? packedArenaSize(liveness, alignment) : peak;
      if (arena <= budget)
        return success();
      std::optional<Candidate> best = pick(liveness, position);
      if (!best) {
        // Nothing left to swap: the smallest budget these swaps reach is
        // the packed arena now. (A run with that budget takes the same
        // swaps in the same order and stops here at the latest.)
        int64_t smallest = packedArenaSize(liveness, alignment);
        return func.emitError("device memory budget ")
               << static_cast<int64_t>(budget) << " bytes is too small for @"
               << func.getSymName()
               << ": the smallest budget its plan reaches is " << smallest
               << " bytes (" << swapped
               << " tensors swapped; the peak is at op " << position << ")";
      }
      swap(liveness, live, *best, position);
      ++swapped;
    }
  }

  /// The largest tensor idle across `peak`.
  std::optional<Candidate> pick(const BufferLiveness &liveness, int64_t peak) {
    std::optional<Candidate> best;
    ArrayRef<Operation *> ops = liveness.getOps();
    auto consider = [&](Value v) {
      const Buffer *buffer = liveness.getBuffer(v);
      if (!buffer || buffer->host || buffer->persistent || buffer->returned)
        return;
      if (liveness.getDefinition(v) >= peak || liveness.getLastUse(v) <= peak)
        return;
      // Every use must be a kernel's: views and copies of it would need to
      // be redone after the prefetch.
      int64_t before = liveness.getDefinition(v), after = INT64_MAX;
      for (Operation *user : v.getUsers()) {
        if (isViewOp(user) || isCopyOp(user) || isa<func::ReturnOp>(user))
          return;
        int64_t p = liveness.getPosition(user);
        if (p == peak)
          return; // used at the peak itself
        if (p < peak)
          before = std::max(before, p);
        else
          after = std::min(after, p);
      }
      // Room for offload and wait before the peak, prefetch and wait after.
      if (after == INT64_MAX || peak - before < 1 || after - peak < 1)
        return;
      int64_t bytes = buffer->bytes;
      if (!best || bytes > best->bytes ||
          (bytes == best->bytes && after - before > best->after - best->before))
        best = Candidate{v, bytes, before, after};
    };
    for (BlockArgument arg : liveness.getFunction().getArguments())
      consider(arg);
    for (Operation *op : ops)
      if (!isViewOp(op) && !isCopyOp(op) && !isa<ConstantOp>(op))
        for (Value result : op->getResults())
          consider(result);
    return best;
  }

  int64_t swapped = 0; ///< in the current function

  double copyUs(int64_t bytes) const { return bytes / (linkGbps * 1e3); }

  /// `live` holds the device bytes live at each position before the swap.
  void swap(const BufferLiveness &liveness, ArrayRef<int64_t> live,
            const Candidate &c, int64_t peak) {
    ArrayRef<Operation *> ops = liveness.getOps();
    DeviceProfile device = defaultHostProfile();
    if (gflops > 0)
      device.gflops = gflops;
    if (gbytesPerS > 0)
      device.gbytesPerS = gbytesPerS;
    if (opOverheadUs >= 0)
      device.opOverheadUs = opOverheadUs;
    auto opUs = [&](int64_t position) {
      return estimateCost(ops[position - 1], device).us;
    };
    double copy = copyUs(c.bytes);
    Location loc = c.value.getLoc();
    Block *body = &liveness.getFunction().getBody().front();

    // Offload after the last use before the peak (or after the definition),
    // wait once the kernels after it have hidden the copy, before the peak.
    OpBuilder b(&getContext());
    if (c.before == 0)
      b.setInsertionPointToStart(body);
    else
      b.setInsertionPointAfter(ops[c.before - 1]);
    Value offload = b.create<OffloadOp>(loc, c.value);
    // The tensor's bytes stay live until the wait: wait before the first
    // position at the peak's level even if the copy is not hidden yet.
    // (Placement depends on the peak, never on the budget, so that a run
    // with a smaller budget takes the same swaps first.)
    const int64_t level = live[peak];
    int64_t waitAt = c.before + 1; // insert before this op
    for (double hidden = 0;
         waitAt < peak && hidden < copy && live[waitAt] < level; ++waitAt)
      hidden += opUs(waitAt);
    b.setInsertionPoint(ops[waitAt - 1]);
    Value hostCopy = b.create<WaitOp>(loc, offload);

    // Prefetch after the peak, early enough to hide the copy before the next
    // use but not where the copy would be live at the peak's level (from
    // `fits` on, every position is below it); wait just before the use.
    int64_t fits = c.after;
    while (fits - 1 > peak && live[fits - 1] < level)
      --fits;
    int64_t prefetchAt = c.after; // insert before this op
    for (double hidden = 0; prefetchAt > fits && hidden < copy;)
      hidden += opUs(--prefetchAt);
    b.setInsertionPoint(ops[prefetchAt - 1]);
    Value prefetch = b.create<PrefetchOp>(loc, hostCopy);
    Operation *next = ops[c.after - 1];
    b.setInsertionPoint(next);
    Value back = b.create<WaitOp>(loc, prefetch);
    Value value = c.value;
    value.replaceUsesWithIf(back, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return user != back.getDefiningOp() && user->getBlock() == body &&
             !isa<OffloadOp>(user) &&
             (user == next || next->isBeforeInBlock(user));
    });
    ++numSwapped;
    bytesSwapped += c.bytes;
  }
};

} // namespace
