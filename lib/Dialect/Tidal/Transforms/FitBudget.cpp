//===- FitBudget.cpp - fit a device arena by swapping and recomputing -----===//
//
// See FitBudget.h.
//
//===----------------------------------------------------------------------===//

#include "FitBudget.h"

#include <limits>

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"
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

DeviceProfile tidal::profileFromOptions(double gflops, double gbytesPerS,
                                        double opOverheadUs) {
  DeviceProfile device = defaultHostProfile();
  if (gflops > 0)
    device.gflops = gflops;
  if (gbytesPerS > 0)
    device.gbytesPerS = gbytesPerS;
  if (opOverheadUs >= 0)
    device.opOverheadUs = opOverheadUs;
  return device;
}

namespace {

/// What a swap costs even when the kernels hide its copies: four more ops
/// to issue and two waits. It keeps the planner from freeing a peak 64
/// bytes at a time.
constexpr double kSwapOverheadUs = 1.0;

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
  } kind = Swap;
  Value value;
  int64_t bytes = 0;
  int64_t before = 0, after = 0; // the uses around the peak
  SwapPlan swap;
  RecomputePlan clone;
  Operation *move = nullptr; ///< the prefetch or wait to move
  int64_t target = 0;        ///< before the op at this position
  double costUs = 0;
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

private:
  LogicalResult solveExact();
  double opUs(Operation *op);
  double spare(DenseMap<Operation *, double> &used, Operation *op) {
    return std::max(0.0, opUs(op) - used.lookup(op));
  }
  double copyUs(int64_t bytes) const {
    return bytes / (options.linkGbps * 1e3);
  }
  std::optional<Choice> pick(const BufferLiveness &liveness,
                             ArrayRef<int64_t> live, int64_t peak);
  void offerTo(std::optional<Choice> &best, double &bestScore, Choice c);
  SwapPlan planSwap(const BufferLiveness &liveness, ArrayRef<int64_t> live,
                    const Choice &c, int64_t peak);
  std::optional<RecomputePlan> planRecompute(const BufferLiveness &liveness,
                                             ArrayRef<int64_t> live,
                                             const Choice &c, int64_t peak);
  bool chainFor(const BufferLiveness &liveness, Value v, int64_t at,
                RecomputePlan &plan, DenseSet<Operation *> &inChain);
  void applySwap(const BufferLiveness &liveness, const Choice &c);
  void applyRecompute(const BufferLiveness &liveness, const Choice &c);
  /// Uses of `from` at `next` or later (copies of it excepted) read `to`.
  void replaceFrom(Value from, Value to, Operation *next);

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
  while (true) {
    BufferLiveness liveness(func);
    SmallVector<int64_t> live = liveness.liveBytes(options.alignment);
    auto peakIt = std::max_element(live.begin(), live.end());
    int64_t peak = *peakIt, position = peakIt - live.begin();
    // While the lower bound is over the budget the steps go at its peak;
    // once it fits but the packed arena does not (the packing is not always
    // at the bound) they go on at the peak, which lowers the bound and with
    // it, in practice, the packing.
    int64_t arena =
        peak <= budget ? packedArenaSize(liveness, options.alignment) : peak;
    if (arena <= budget)
      return success();
    // The packed arena is not monotone along the steps (packing is not
    // always at the bound): remember the smallest. A run with that budget
    // stops at the first state that packs into it, at the latest there.
    if (peak < smallestReached)
      smallestReached = std::min(
          smallestReached, peak <= budget
                               ? arena
                               : packedArenaSize(liveness, options.alignment));
    // Large graphs take several steps per liveness analysis: a batch size
    // that depends on the graph only (never on the budget), so that a
    // smaller budget still takes the same steps first. Within a batch the
    // bytes live are updated in place, and tensors the batch touched wait
    // for the next analysis, as do moves of earlier copies.
    const int64_t batch =
        std::max<int64_t>(1, liveness.getOps().size() / options.opsPerStep);
    touched.clear();
    for (int64_t step = 0; step < batch; ++step) {
      position = std::max_element(live.begin(), live.end()) - live.begin();
      std::optional<Choice> best = pick(liveness, live, position);
      if (!best && step == 0) {
        // Nothing left: the smallest budget these steps reach is the
        // packed arena now. (A run with that budget takes the same steps
        // in the same order and stops here at the latest.)
        int64_t smallest = std::min(
            smallestReached, packedArenaSize(liveness, options.alignment));
        stats.smallestBudget = smallest;
        return func.emitError("device memory budget ")
               << budget << " bytes is too small for @" << func.getSymName()
               << ": the smallest budget its plan reaches is " << smallest
               << " bytes (" << stats.swapped << " tensors swapped, "
               << stats.recomputed << " recomputed; the peak is at op "
               << position << ")";
      }
      if (!best || (step > 0 && (best->kind == Choice::DelayPrefetch ||
                                 best->kind == Choice::AdvanceWait)))
        break;
      const int64_t bytes = alignBytes(best->bytes, options.alignment);
      switch (best->kind) {
      case Choice::Swap:
        applySwap(liveness, *best);
        for (int64_t p = best->swap.waitAt; p < best->swap.prefetchAt; ++p)
          live[p] -= bytes;
        break;
      case Choice::Recompute:
        applyRecompute(liveness, *best);
        for (int64_t p = best->before + 1; p < best->after; ++p)
          live[p] -= bytes;
        break;
      case Choice::DelayPrefetch:
      case Choice::AdvanceWait:
        best->move->moveBefore(liveness.getOps()[best->target - 1]);
        ++stats.copiesMoved;
        step = batch; // the copy ops are not in this analysis
        break;
      }
    }
  }
}

std::optional<Choice> Fitter::pick(const BufferLiveness &liveness,
                                   ArrayRef<int64_t> live, int64_t peak) {
  std::optional<Choice> best;
  double bestScore = 0;
  auto offer = [&](Choice c) { offerTo(best, bestScore, std::move(c)); };
  auto consider = [&](Value v) {
    const Buffer *buffer = liveness.getBuffer(v);
    if (!buffer || buffer->host || buffer->persistent || buffer->returned)
      return;
    if (liveness.getDefinition(v) >= peak || liveness.getLastUse(v) <= peak)
      return;
    if (touched.contains(v))
      return; // has users this analysis does not know
    // Every use must be a kernel's: views and copies of it would need to
    // be redone after the prefetch or the recomputation.
    Choice c;
    c.value = v;
    c.bytes = buffer->bytes;
    c.before = liveness.getDefinition(v);
    c.after = INT64_MAX;
    for (Operation *user : v.getUsers()) {
      if (isViewOp(user) || isCopyOp(user) || isa<func::ReturnOp>(user))
        return;
      int64_t p = liveness.getPosition(user);
      if (p == peak)
        return; // used at the peak itself
      if (p < peak)
        c.before = std::max(c.before, p);
      else
        c.after = std::min(c.after, p);
    }
    // Room for offload and wait before the peak, prefetch and wait after.
    if (c.after == INT64_MAX || peak - c.before < 1 || c.after - peak < 1)
      return;
    bool priced = false;
    if (options.swap) {
      c.swap = planSwap(liveness, live, c, peak);
      c.costUs = c.swap.stallUs + kSwapOverheadUs;
      priced = true;
    }
    if (options.recompute)
      if (std::optional<RecomputePlan> clone =
              planRecompute(liveness, live, c, peak);
          clone && (!priced || clone->us < c.costUs)) {
        c.kind = Choice::Recompute;
        c.clone = std::move(*clone);
        c.costUs = c.clone.us;
        priced = true;
      }
    if (priced)
      offer(std::move(c));
  };
  for (BlockArgument arg : func.getArguments())
    consider(arg);
  ArrayRef<Operation *> ops = liveness.getOps();
  for (Operation *op : ops)
    if (!isViewOp(op) && !isCopyOp(op) && !isa<ConstantOp>(op))
      for (Value result : op->getResults())
        consider(result);
  // Earlier swaps whose copies are in flight at the peak.
  for (Operation *op : ops) {
    auto wait = dyn_cast<WaitOp>(op);
    Operation *copy = wait ? wait.getInput().getDefiningOp() : nullptr;
    if (!copy || !isCopyOp(copy))
      continue;
    int64_t at = liveness.getPosition(copy), waited = liveness.getPosition(op);
    Choice c;
    c.move = isa<PrefetchOp>(copy) ? copy : op;
    c.value = copy->getResult(0);
    c.bytes = alignBytes(tensorByteSize(cast<ShapedType>(c.value.getType())),
                         options.alignment);
    const double copyTime = copyUs(c.bytes);
    auto stall = [&](DenseMap<Operation *, double> &used, int64_t from,
                     int64_t to) {
      double hidden = 0;
      for (int64_t p = from; p < to && hidden < copyTime; ++p)
        hidden += spare(used, ops[p - 1]);
      return std::max(0.0, copyTime - hidden);
    };
    // Each move passes at least one kernel, so that the moves end: a
    // prefetch goes past the first kernel at or after the peak, a wait
    // before the last kernel at or before it.
    auto isKernel = [&](int64_t p) { return !isCopyOp(ops[p - 1]); };
    if (isa<PrefetchOp>(copy) && at <= peak && peak < waited) {
      int64_t k = std::max(peak, at + 1);
      while (k < waited && !isKernel(k))
        ++k;
      if (k >= waited)
        continue;
      c.kind = Choice::DelayPrefetch;
      c.target = k + 1;
      c.costUs = stall(toDeviceUsed, c.target, waited) -
                 stall(toDeviceUsed, at + 1, waited);
    } else if (isa<OffloadOp>(copy) && at < peak && peak <= waited) {
      int64_t k = std::min(peak, waited - 1);
      while (k > at && !isKernel(k))
        --k;
      if (k <= at)
        continue;
      c.kind = Choice::AdvanceWait;
      c.target = k;
      c.costUs = stall(toHostUsed, at + 1, c.target) -
                 stall(toHostUsed, at + 1, waited);
    } else {
      continue;
    }
    c.costUs = std::max(0.0, c.costUs);
    offer(std::move(c));
  }
  return best;
}

void Fitter::offerTo(std::optional<Choice> &best, double &bestScore, Choice c) {
  {
    // The cheapest per byte freed; among equals the largest, then the
    // longest idle.
    double score = c.costUs / static_cast<double>(c.bytes);
    constexpr double kSame = 1e-12;
    bool better = !best || score < bestScore - kSame ||
                  (score <= bestScore + kSame &&
                   (c.bytes > best->bytes ||
                    (c.bytes == best->bytes &&
                     c.after - c.before > best->after - best->before)));
    if (better) {
      best = std::move(c);
      bestScore = score;
    }
  }
}

SwapPlan Fitter::planSwap(const BufferLiveness &liveness,
                          ArrayRef<int64_t> live, const Choice &c,
                          int64_t peak) {
  ArrayRef<Operation *> ops = liveness.getOps();
  const double copy = copyUs(c.bytes);
  // The tensor's bytes stay live until the offload's wait: wait before the
  // first position at the peak's level even if the copy is not hidden yet.
  const int64_t level = live[peak];
  SwapPlan plan;
  plan.waitAt = c.before + 1; // the offload goes after the use at `before`
  double hidden = 0;
  for (; plan.waitAt < peak && hidden < copy && live[plan.waitAt] < level;
       ++plan.waitAt)
    hidden += spare(toHostUsed, ops[plan.waitAt - 1]);
  plan.stallUs = std::max(0.0, copy - hidden);
  // Prefetch after the peak, early enough to hide the copy before the next
  // use, but not where the copy would be live at the peak's level.
  plan.prefetchAt = c.after;
  hidden = 0;
  while (hidden < copy && plan.prefetchAt - 1 > peak &&
         live[plan.prefetchAt - 1] < level) {
    --plan.prefetchAt;
    hidden += spare(toDeviceUsed, ops[plan.prefetchAt - 1]);
  }
  plan.stallUs += std::max(0.0, copy - hidden);
  return plan;
}

/// An operand that a clone placed before position `at` may read: its bytes
/// still hold it there on the device (no later value of its buffer, such
/// as a parameter's in-place update, written before `at`), or a constant.
static bool availableAt(const BufferLiveness &liveness, Value v, int64_t at) {
  const Buffer *buffer = liveness.getBuffer(v);
  if (!buffer)
    return v.getDefiningOp() != nullptr; // constants and views of them
  if (buffer->host || buffer->end < at)
    return false;
  int64_t defined = liveness.getDefinition(v);
  for (Value other : buffer->values) {
    Operation *def = other.getDefiningOp();
    if (other == v || !def || isViewOp(def))
      continue;
    int64_t p = liveness.getPosition(def);
    if (p > defined && p < at)
      return false;
  }
  return true;
}

bool Fitter::chainFor(const BufferLiveness &liveness, Value v, int64_t at,
                      RecomputePlan &plan, DenseSet<Operation *> &inChain) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body || isViewOp(def) || isCopyOp(def) ||
      isa<ConstantOp>(def) || isHostPlaced(def) || def->getNumRegions() ||
      !isa<TidalDialect>(def->getDialect()))
    return false;
  if (inChain.contains(def))
    return true;
  if (static_cast<int64_t>(plan.chain.size()) >= options.maxChain)
    return false;
  for (Value operand : def->getOperands())
    if (!availableAt(liveness, operand, at) &&
        !chainFor(liveness, operand, at, plan, inChain))
      return false;
  if (static_cast<int64_t>(plan.chain.size()) >= options.maxChain)
    return false;
  plan.chain.push_back(def);
  inChain.insert(def);
  plan.us += opUs(def);
  return true;
}

std::optional<RecomputePlan>
Fitter::planRecompute(const BufferLiveness &liveness, ArrayRef<int64_t> live,
                      const Choice &c, int64_t peak) {
  RecomputePlan plan;
  DenseSet<Operation *> inChain;
  if (!chainFor(liveness, c.value, c.after, plan, inChain))
    return std::nullopt;
  // The clones' results other than the tensor are new bytes just before
  // its next use: they must stay below the peak's level there.
  int64_t extra = 0;
  for (Operation *op : plan.chain)
    for (Value result : op->getResults())
      if (result != c.value)
        extra += alignBytes(tensorByteSize(cast<ShapedType>(result.getType())),
                            options.alignment);
  if (extra > 0 && live[c.after] + extra >= live[peak])
    return std::nullopt;
  return plan;
}

void Fitter::replaceFrom(Value from, Value to, Operation *next) {
  replacedFrom[from] = {to, next};
  touched.insert(from);
  from.replaceUsesWithIf(to, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user != to.getDefiningOp() && user->getBlock() == body &&
           !isa<OffloadOp>(user) &&
           (user == next || next->isBeforeInBlock(user));
  });
}

void Fitter::applySwap(const BufferLiveness &liveness, const Choice &c) {
  ArrayRef<Operation *> ops = liveness.getOps();
  const double copy = copyUs(c.bytes);
  // The link time the copies take under the kernels that hide them.
  auto claim = [&](DenseMap<Operation *, double> &used, int64_t from,
                   int64_t to) {
    double left = copy;
    for (int64_t p = from; p < to && left > 0; ++p) {
      double take = std::min(left, spare(used, ops[p - 1]));
      used[ops[p - 1]] += take;
      left -= take;
    }
  };
  claim(toHostUsed, c.before + 1, c.swap.waitAt);
  claim(toDeviceUsed, c.swap.prefetchAt, c.after);

  Location loc = c.value.getLoc();
  OpBuilder b(func.getContext());
  if (c.before == 0)
    b.setInsertionPointToStart(body);
  else
    b.setInsertionPointAfter(ops[c.before - 1]);
  Value offload = b.create<OffloadOp>(loc, c.value);
  b.setInsertionPoint(ops[c.swap.waitAt - 1]);
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
  OpBuilder b(next);
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

  // Each tensor's idle gap over the most positions above the budget.
  auto consider = [&](Value v) {
    const Buffer *buffer = liveness.getBuffer(v);
    if (!buffer || buffer->host || buffer->persistent || buffer->returned)
      return;
    SmallVector<int64_t> uses{liveness.getDefinition(v)};
    for (Operation *user : v.getUsers()) {
      if (isViewOp(user) || isCopyOp(user) || isa<func::ReturnOp>(user))
        return;
      uses.push_back(liveness.getPosition(user));
    }
    llvm::sort(uses);
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
    if (options.recompute && chainFor(liveness, v, c.after, plan, inChain)) {
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
  for (BlockArgument arg : func.getArguments())
    consider(arg);
  for (Operation *op : ops)
    if (!isViewOp(op) && !isCopyOp(op) && !isa<ConstantOp>(op))
      for (Value result : op->getResults())
        consider(result);
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
  FailureOr<MilpSolution> solution = solveBudgetMilp(problem, &error);
  if (failed(solution))
    return func.emitError(options.passName) << ": " << error;
  stats.milpCandidates += problem.candidates.size();
  stats.milpOptimal = solution->optimal;
  stats.milpCostUs += solution->costUs;
  // Out of reach: go as low as the MILP can; the greedy loop then states
  // the smallest budget.
  ArrayRef<int> choice = solution->feasible ? ArrayRef<int>(solution->choice)
                                            : solution->smallestPeakChoice;
  // Swaps first, then clones, which may read the swapped copies.
  for (bool clones : {false, true})
    for (auto [k, option] : llvm::enumerate(choice)) {
      if (option < 0)
        continue;
      const Choice &c = choices[k][option];
      if ((c.kind == Choice::Recompute) != clones)
        continue;
      if (clones)
        applyRecompute(liveness, c);
      else
        applySwap(liveness, c);
    }
  Builder b(func.getContext());
  func->setAttr(
      kMilpAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("candidates",
                          b.getI64IntegerAttr(problem.candidates.size())),
           b.getNamedAttr("cost_us", b.getF64FloatAttr(solution->costUs)),
           b.getNamedAttr("feasible", b.getBoolAttr(solution->feasible)),
           b.getNamedAttr("optimal", b.getBoolAttr(solution->optimal))}));
  return success();
}

} // namespace

LogicalResult tidal::fitBudget(func::FuncOp func,
                               const FitBudgetOptions &options,
                               FitBudgetStats &stats) {
  if (!func.getBody().hasOneBlock())
    return func.emitError(options.passName) << ": more than one block";
  func->setAttr(kDeviceBudgetAttr,
                Builder(func.getContext()).getI64IntegerAttr(options.budget));
  return Fitter(func, options, stats).run();
}
