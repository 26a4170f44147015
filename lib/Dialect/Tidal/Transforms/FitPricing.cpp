//===- FitPricing.cpp - what each choice of the fitting engine costs ------===//
//
// Fitter::pick and its pricing: the tensors a step may move (collected once
// per liveness analysis, scanned in order of a lower bound on their score),
// a swap's copy placement and stall, a refetch's, a recomputation's chain,
// and moves of earlier copies. FitBudget.cpp applies the chosen one.
//
//===----------------------------------------------------------------------===//

#include "Fitter.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::fit;

std::optional<Choice> Fitter::pick(const BufferLiveness &liveness,
                                   const PeakIndex &peaks, int64_t peak) {
  ArrayRef<int64_t> live = peaks.bytes();
  std::optional<Choice> best;
  Rank bestRank;
  // Whether a choice of `bytes` idle for `idle` positions, of candidate
  // `order`, whose score is at least `bound`, could still come first.
  auto canBeat = [&](double bound, int64_t bytes, int64_t idle, size_t order) {
    return !best || Rank{rankScore(bound), bytes, idle, order}.beats(bestRank);
  };
  // A candidate live across the peak (collectCandidates) priced; `source`:
  // the host value that it, a waited prefetch, copies.
  auto consider = [&](const Candidate &cand,
                      size_t order) -> std::optional<Choice> {
    Value v = cand.value, source = cand.source;
    if (touched.contains(v))
      return std::nullopt; // has users this analysis does not know
    ArrayRef<int64_t> users(userPositions.data() + cand.firstUser,
                            cand.numUsers);
    auto next = std::lower_bound(users.begin(), users.end(), peak);
    if (next != users.end() && *next == peak)
      return std::nullopt; // used at the peak itself
    Choice c;
    c.value = v;
    c.bytes = cand.bytes;
    c.before =
        next == users.begin() ? cand.def : std::max(cand.def, *std::prev(next));
    c.after = next == users.end() ? INT64_MAX : *next;
    // Room for offload and wait before the peak, prefetch and wait after.
    if (c.after == INT64_MAX || peak - c.before < 1 || c.after - peak < 1)
      return std::nullopt;
    if (source) {
      // The host still holds the bytes: prefetching them again is all.
      if (!hostIntactAt(liveness, source, c.after))
        return std::nullopt;
      c.kind = Choice::Refetch;
      c.source = source;
      // Every idle gap of the copy where the bytes live come within its
      // own bytes of the peak's level (the positions that would be the
      // next peaks), the one around the peak among them.
      SmallVector<int64_t> uses{liveness.getDefinition(v)};
      for (Operation *user : v.getUsers())
        uses.push_back(liveness.getPosition(user));
      llvm::sort(uses);
      const int64_t level =
          live[peak] - alignBytes(c.bytes, options.alignment) + 1;
      for (size_t i = 0; i + 1 < uses.size(); ++i) {
        // The last position of the gap at the level (the blocks' maxima
        // skip most of a gap that spans the step: a parameter used in the
        // forward and the backward pass).
        int64_t a = uses[i], b = uses[i + 1],
                top = peaks.lastAtLeast(a + 1, b, level);
        if (top < 0 || !hostIntactAt(liveness, source, b))
          continue;
        Choice::Gap gap{a, b, {}};
        gap.swap.waitAt = a + 1;
        Choice span = c;
        span.before = a, span.after = b;
        planPrefetch(liveness, live, span, top, gap.swap);
        c.costUs += gap.swap.stallUs + kRefetchOverheadUs;
        c.gaps.push_back(gap);
      }
      if (c.gaps.empty())
        return std::nullopt;
      return c;
    }
    // No choice of it can come first (the pruning below, per candidate):
    // each copy hides at most behind the kernels' spare link time at the
    // analysis' start (claimLink only takes from it), and a recomputation
    // costs at least its last op. The sums' differences are widened by
    // more than their rounding (`spareSlack`), and the stalls added in the
    // order planSwap adds them, so that the bound never passes the price
    // as computed: a copy hidden in full is bounded by exactly the
    // overhead it is priced at.
    {
      const double copy = copyUs(c.bytes);
      double lowest = std::numeric_limits<double>::infinity();
      if (options.swap) {
        double offload =
            std::max(0.0, copy - (toHostSpare[peak - 1] -
                                  toHostSpare[c.before] + spareSlack));
        double prefetch =
            std::max(0.0, copy - (toDeviceSpare[c.after - 1] -
                                  toDeviceSpare[peak] + spareSlack));
        lowest = (offload + prefetch) + kSwapOverheadUs;
      }
      // (A kernel's result: the time of its op, at its position.)
      if (options.recompute && cand.defined)
        lowest = std::min(lowest, usAt[cand.def]);
      if (!canBeat(lowest / static_cast<double>(c.bytes), c.bytes,
                   c.after - c.before, order))
        return std::nullopt;
    }
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
    if (!priced)
      return std::nullopt;
    return c;
  };
  // The candidates in increasing order of their lower bound on the score
  // (collectCandidates): once the bound cannot beat the best priced so far
  // (Rank: its score, or an equal score and every tie-break, as the bytes
  // and idle span of the later tensors are unknown here), none can, and the
  // rest is not priced. The order is total, so the choice is the one
  // pricing every candidate would make.
  for (const Bound &bound : byBound) {
    if (bound.def >= peak || bound.last <= peak)
      continue;
    if (!canBeat(bound.lowerBound, INT64_MAX, INT64_MAX, 0))
      break;
    if (std::optional<Choice> c =
            consider(candidates[bound.index], bound.index))
      offerTo(best, bestRank, std::move(*c), bound.index);
  }
  ArrayRef<Operation *> ops = liveness.getOps();
  // Earlier swaps whose copies are in flight at the peak.
  for (const CopyWait &span : copyWaits) {
    if (span.at > peak || span.waited < peak)
      continue; // not in flight at the peak: neither move applies
    Operation *op = ops[span.waited - 1];
    Operation *copy = cast<WaitOp>(op).getInput().getDefiningOp();
    int64_t at = liveness.getPosition(copy), waited = liveness.getPosition(op);
    Choice c;
    c.move = isa<PrefetchOp>(copy) ? copy : op;
    c.value = copy->getResult(0);
    c.bytes = alignBytes(tensorByteSize(cast<ShapedType>(c.value.getType())),
                         options.alignment);
    const double copyTime = copyUs(c.bytes);
    auto stall = [&](const std::vector<double> &usedAt, int64_t from,
                     int64_t to) {
      double hidden = 0;
      for (int64_t p = from; p < to && hidden < copyTime; ++p)
        hidden += spareAt(usedAt, p);
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
      c.costUs = stall(deviceUsedAt, c.target, waited) -
                 stall(deviceUsedAt, at + 1, waited);
    } else if (isa<OffloadOp>(copy) && at < peak && peak <= waited) {
      int64_t k = std::min(peak, waited - 1);
      while (k > at && !isKernel(k))
        --k;
      if (k <= at)
        continue;
      c.kind = Choice::AdvanceWait;
      c.target = k;
      c.costUs = stall(hostUsedAt, at + 1, c.target) -
                 stall(hostUsedAt, at + 1, waited);
    } else {
      continue;
    }
    c.costUs = std::max(0.0, c.costUs);
    offerTo(best, bestRank, std::move(c),
            candidates.size() + (&span - copyWaits.data()));
  }
  return best;
}

void Fitter::collectCandidates(const BufferLiveness &liveness) {
  candidates.clear();
  byBound.clear();
  userPositions.clear();
  chainMemo.clear();
  rewired.clear();
  copyWaits.clear();
  // Each op's time and the link time taken under it, by position (the
  // candidates' bounds below read the times); the spare link time summed
  // by position. The last analysis' arrays hold the same for its ops, and
  // the steps since then only inserted ops or moved copies: its ops still
  // in the same order take their values from there (a walk of both
  // lists), the others from the maps. On a deep net that is three map
  // lookups fewer per op and analysis.
  ArrayRef<Operation *> ops = liveness.getOps();
  positionsOf = &liveness;
  std::vector<double> us(ops.size() + 1, 0.0), host(ops.size() + 1, 0.0),
      device(ops.size() + 1, 0.0);
  size_t next = 0; // the first op of lastOps not yet matched
  // An op moved away, or inserted before this one, puts the lists out of
  // step for a few ops.
  auto carried = [&](Operation *op) -> std::optional<size_t> {
    for (size_t q = next; q < next + kCarryWindow && q < lastOps.size(); ++q)
      if (lastOps[q] == op)
        return q;
    return std::nullopt;
  };
  for (size_t p = 1; p <= ops.size(); ++p) {
    Operation *op = ops[p - 1];
    if (std::optional<size_t> q = carried(op)) {
      us[p] = usAt[*q + 1];
      host[p] = hostUsedAt[*q + 1];
      device[p] = deviceUsedAt[*q + 1];
      next = *q + 1;
      continue;
    }
    us[p] = opUs(op);
    host[p] = toHostUsed.lookup(op);
    device[p] = toDeviceUsed.lookup(op);
  }
  usAt = std::move(us);
  hostUsedAt = std::move(host);
  deviceUsedAt = std::move(device);
  lastOps.assign(ops.begin(), ops.end());
  for (auto [sums, usedAt] : {std::make_pair(&toHostSpare, &hostUsedAt),
                              std::make_pair(&toDeviceSpare, &deviceUsedAt)}) {
    sums->assign(ops.size() + 1, 0.0);
    for (size_t p = 1; p <= ops.size(); ++p)
      (*sums)[p] = (*sums)[p - 1] + spareAt(*usedAt, p);
  }
  // `v` defined at `def` (its op's time `defUs`: a recomputation's last op;
  // none for an argument), its buffer, last use and uses.
  auto add = [&](Value v, Value source, int64_t def, const Buffer *buffer,
                 int64_t last, BufferLiveness::Uses uses,
                 std::optional<double> defUs) {
    if (!buffer || buffer->host || buffer->persistent || buffer->returned)
      return;
    // Every use must be a kernel's: views and copies of it would need to
    // be redone after the prefetch or the recomputation.
    if (uses.notOnlyKernels)
      return;
    size_t first = userPositions.size();
    userPositions.insert(userPositions.end(), uses.positions.begin(),
                         uses.positions.end());
    // What any choice of it costs at least: a refetch's or a swap's
    // overhead, or a recomputation's last op.
    double leastUs = source         ? kRefetchOverheadUs
                     : options.swap ? kSwapOverheadUs
                                    : std::numeric_limits<double>::infinity();
    if (!source && options.recompute && defUs)
      leastUs = std::min(leastUs, *defUs);
    byBound.push_back(
        {buffer->bytes > 0 ? leastUs / static_cast<double>(buffer->bytes) : 0.0,
         def, last, static_cast<unsigned>(candidates.size())});
    candidates.push_back({v, source, def, last, first,
                          userPositions.size() - first, buffer->bytes,
                          defUs.has_value()});
  };
  for (BlockArgument arg : func.getArguments())
    add(arg, Value(), 0, liveness.getBuffer(arg), liveness.getLastUse(arg),
        liveness.getUses(arg), std::nullopt);
  for (auto [i, op] : llvm::enumerate(ops)) {
    const int64_t p = i + 1;
    const FlatStep::Record &record = liveness.getRecord(p);
    const FlatStep::Kind kind = record.kind;
    if (kind == FlatStep::Kind::Wait) {
      auto wait = cast<WaitOp>(op);
      if (Operation *copy = wait.getInput().getDefiningOp();
          copy && isCopyOp(copy))
        copyWaits.push_back({liveness.getPosition(copy), p});
      // Copies of host-resident arguments (streamed parameters). A swapped
      // tensor's copy is not refetched: its uses are typically a few ops
      // apart, and dropping it between them frees a position or two per
      // step (an unrolled LSTM's backward took thousands of steps).
      if (auto prefetch = wait.getInput().getDefiningOp<PrefetchOp>())
        if (isa<BlockArgument>(viewSource(prefetch.getInput())))
          add(wait.getResult(), prefetch.getInput(), p,
              liveness.getResultBuffer(p, 0), liveness.getResultLastUse(p, 0),
              liveness.getResultUses(p, 0), usAt[p]);
    } else if (kind == FlatStep::Kind::Kernel) {
      for (unsigned n = 0; n != record.numResults; ++n)
        add(op->getResult(n), Value(), p, liveness.getResultBuffer(p, n),
            liveness.getResultLastUse(p, n), liveness.getResultUses(p, n),
            usAt[p]);
    }
  }
  llvm::stable_sort(byBound, [](const Bound &a, const Bound &b) {
    return a.lowerBound < b.lowerBound;
  });
  // A difference of two sums is off by at most a few ulps of the largest
  // (and a position's spare time is at most its kernel's).
  spareSlack =
      1e-9 * (1.0 + std::max(toHostSpare.back(), toDeviceSpare.back()));
}

void Fitter::offerTo(std::optional<Choice> &best, Rank &bestRank, Choice c,
                     size_t order) {
  // The cheapest per byte freed; among equals the largest, then the
  // longest idle, then the first offered.
  Rank rank{rankScore(c.costUs / static_cast<double>(c.bytes)), c.bytes,
            c.after - c.before, order};
  if (!best || rank.beats(bestRank)) {
    best = std::move(c);
    bestRank = rank;
  }
}

SwapPlan Fitter::planSwap(const BufferLiveness &liveness,
                          ArrayRef<int64_t> live, const Choice &c,
                          int64_t peak) {
  const double copy = copyUs(c.bytes);
  // The tensor's bytes stay live until the offload's wait: wait before the
  // first position at the peak's level even if the copy is not hidden yet.
  const int64_t level = live[peak];
  SwapPlan plan;
  plan.waitAt = c.before + 1; // the offload goes after the use at `before`
  double hidden = 0;
  for (; plan.waitAt < peak && hidden < copy && live[plan.waitAt] < level;
       ++plan.waitAt)
    hidden += spareAt(hostUsedAt, plan.waitAt);
  plan.stallUs = std::max(0.0, copy - hidden);
  planPrefetch(liveness, live, c, peak, plan);
  return plan;
}

void Fitter::planPrefetch(const BufferLiveness &liveness,
                          ArrayRef<int64_t> live, const Choice &c, int64_t peak,
                          SwapPlan &plan) {
  assert(positionsOf == &liveness && "spare link time of another analysis");
  (void)liveness;
  const double copy = copyUs(c.bytes);
  const int64_t level = live[peak];
  // Prefetch after the peak, early enough to hide the copy before the next
  // use, but not where the copy would be live at the peak's level.
  plan.prefetchAt = c.after;
  double hidden = 0;
  while (hidden < copy && plan.prefetchAt - 1 > peak &&
         live[plan.prefetchAt - 1] < level) {
    --plan.prefetchAt;
    hidden += spareAt(deviceUsedAt, plan.prefetchAt);
  }
  plan.stallUs += std::max(0.0, copy - hidden);
}

/// A host value whose bytes still hold it at position `at`: no other value
/// of its buffer (an in-place update, such as a host-placed optimizer's
/// new parameter) is written before `at`.
bool fit::hostIntactAt(const BufferLiveness &liveness, Value v, int64_t at) {
  const Buffer *buffer = liveness.getBuffer(v);
  if (!buffer || !buffer->host)
    return false;
  int64_t defined = liveness.getDefinition(v);
  for (Value other : buffer->values) {
    Operation *def = other.getDefiningOp();
    if (other == v || !def || isViewOp(def) || isa<WaitOp>(def))
      continue;
    int64_t p = liveness.getPosition(def);
    if (p > defined && p < at)
      return false;
  }
  return true;
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
                      RecomputePlan &plan, DenseSet<Operation *> &inChain,
                      SmallVectorImpl<Operation *> &visited) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body || isViewOp(def) || isCopyOp(def) ||
      isa<ConstantOp>(def) || isHostPlaced(def) || def->getNumRegions() ||
      !isa<TidalDialect>(def->getDialect()) || isCollectiveOp(def))
    return false;
  if (inChain.contains(def))
    return true;
  if (static_cast<int64_t>(plan.chain.size()) >= options.maxChain)
    return false;
  visited.push_back(def);
  for (Value operand : def->getOperands())
    if (!availableAt(liveness, operand, at) &&
        !chainFor(liveness, operand, at, plan, inChain, visited))
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
  auto [memo, fresh] = chainMemo.try_emplace(c.value);
  ChainMemo &m = memo->second;
  if (fresh || m.at != c.after || llvm::any_of(m.visited, [&](Operation *op) {
        return rewired.contains(op);
      })) {
    m.at = c.after;
    m.plan = RecomputePlan();
    m.visited.clear();
    DenseSet<Operation *> inChain;
    m.ok = chainFor(liveness, c.value, c.after, m.plan, inChain, m.visited);
    // The clones' results other than the tensor are new bytes just before
    // its next use.
    m.extra = 0;
    for (Operation *op : m.plan.chain)
      for (Value result : op->getResults())
        if (result != c.value)
          m.extra +=
              alignBytes(tensorByteSize(cast<ShapedType>(result.getType())),
                         options.alignment);
  }
  if (!m.ok)
    return std::nullopt;
  // The clones' other results must stay below the peak's level there.
  if (m.extra > 0 && live[c.after] + m.extra >= live[peak])
    return std::nullopt;
  return m.plan;
}
