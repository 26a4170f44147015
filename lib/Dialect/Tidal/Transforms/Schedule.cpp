//===- Schedule.cpp - memory-aware op order -------------------------------===//
//
// A list scheduler over each function's single block. Every op gets the
// change in live bytes that running it now would cause (its results minus
// the operands that die at it, results written in place over a dying
// operand counting neither); a ready op that frees bytes runs at once,
// otherwise the ready op first in program order runs. A gradient
// all-reduce starts as soon as its bucket is ready. Values are grouped
// with their views (one set of bytes); arguments that outlive the step and
// returned values never die.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <set>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALSCHEDULEPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

int64_t bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? tensorByteSize(type) : 0;
}

class ListScheduler {
public:
  explicit ListScheduler(func::FuncOp func) : func(func) {}
  /// The ops in their new order.
  SmallVector<Operation *> run();

private:
  void analyse();
  int64_t delta(Operation *op);
  void makeReady(Operation *op);
  void update(Operation *op);

  func::FuncOp func;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;
  /// The value whose bytes each value occupies (itself unless a view);
  /// null for constants.
  DenseMap<Value, Value> root;
  /// Unscheduled uses of each root's bytes by ops that are not views.
  DenseMap<Value, int64_t> remaining;
  /// Roots that never die: persistent arguments and returned values.
  DenseSet<Value> pinned;
  /// The persistent argument that a returned value replaces.
  DenseMap<Value, Value> replaces;
  /// Ops waiting for operands, and ops that use each root.
  DenseMap<Operation *, unsigned> pending;
  DenseMap<Value, SmallVector<Operation *, 2>> users;
  /// Ready ops by program order: those that free bytes, and the others.
  std::set<unsigned> freeing, others;
  DenseSet<Operation *> ready;
};

void ListScheduler::analyse() {
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  for (BlockArgument arg : func.getArguments()) {
    root[arg] = arg;
    if (isPersistentArgument(func, arg.getArgNumber()))
      pinned.insert(arg);
  }
  for (Operation *op : ops) {
    if (isa<ConstantOp>(op))
      continue;
    if (isViewOp(op)) {
      if (Value r = root.lookup(op->getOperand(0)))
        root[op->getResult(0)] = r;
      continue;
    }
    for (Value result : op->getResults())
      root[result] = result;
  }
  Operation *terminator = body.getTerminator();
  SmallVector<std::optional<unsigned>> replaced = replacedArguments(func);
  for (OpOperand &use : terminator->getOpOperands()) {
    if (Value r = root.lookup(use.get()))
      pinned.insert(r);
    if (auto arg = replaced[use.getOperandNumber()])
      replaces[use.get()] = func.getArgument(*arg);
  }
  for (Operation *op : ops) {
    unsigned waiting = 0;
    for (Value operand : op->getOperands())
      if (operand.getDefiningOp())
        ++waiting;
    pending[op] = waiting;
    if (isViewOp(op))
      continue;
    for (Value operand : op->getOperands())
      if (Value r = root.lookup(operand)) {
        ++remaining[r];
        auto &list = users[r];
        if (list.empty() || list.back() != op)
          list.push_back(op);
      }
  }
}

int64_t ListScheduler::delta(Operation *op) {
  if (isViewOp(op) || isa<ConstantOp>(op))
    return 0;
  // Roots whose last unscheduled uses are this op's.
  SmallVector<std::pair<Value, int64_t>, 4> uses;
  for (Value operand : op->getOperands())
    if (Value r = root.lookup(operand)) {
      auto *it = llvm::find_if(uses, [&](auto &u) { return u.first == r; });
      if (it == uses.end())
        uses.push_back({r, 1});
      else
        ++it->second;
    }
  SmallVector<Value, 4> dying;
  for (auto [r, count] : uses)
    if (remaining.lookup(r) == count)
      dying.push_back(r);
  int64_t change = 0;
  for (Value r : dying)
    if (!pinned.contains(r))
      change -= bytesOf(r);
  SmallVector<Value, 2> claimed;
  for (OpResult result : op->getResults()) {
    bool inPlace = false;
    for (unsigned i : inPlaceOperands(op, result.getResultNumber())) {
      Value r = root.lookup(op->getOperand(i));
      if (!r || !llvm::is_contained(dying, r) || llvm::is_contained(claimed, r))
        continue;
      if (pinned.contains(r) && replaces.lookup(result) != r)
        continue;
      if (!pinned.contains(r))
        change += bytesOf(r); // not freed after all: the result keeps it
      claimed.push_back(r);
      inPlace = true;
      break;
    }
    if (!inPlace)
      change += bytesOf(result);
  }
  return change;
}

/// Ops that run as soon as they are ready: those that free bytes, and the
/// start of a gradient all-reduce (the earlier it starts, the more of the
/// backward pass it overlaps).
static bool urgent(Operation *op, int64_t delta) {
  return delta < 0 ||
         isa<AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp>(op);
}

void ListScheduler::makeReady(Operation *op) {
  ready.insert(op);
  (urgent(op, delta(op)) ? freeing : others).insert(index[op]);
}

void ListScheduler::update(Operation *op) {
  if (!ready.contains(op))
    return;
  unsigned i = index[op];
  freeing.erase(i);
  others.erase(i);
  (urgent(op, delta(op)) ? freeing : others).insert(i);
}

SmallVector<Operation *> ListScheduler::run() {
  analyse();
  for (Operation *op : ops)
    if (pending[op] == 0)
      makeReady(op);
  SmallVector<Operation *> order;
  order.reserve(ops.size());
  while (!freeing.empty() || !others.empty()) {
    std::set<unsigned> &from = freeing.empty() ? others : freeing;
    Operation *op = ops[*from.begin()];
    from.erase(from.begin());
    ready.erase(op);
    order.push_back(op);
    if (!isViewOp(op)) {
      SmallVector<Value, 4> touched;
      for (Value operand : op->getOperands())
        if (Value r = root.lookup(operand)) {
          --remaining[r];
          if (!llvm::is_contained(touched, r))
            touched.push_back(r);
        }
      // Only the last users of a root can free it; an op reads one root
      // through at most a few operands.
      for (Value r : touched)
        if (remaining[r] <= 3)
          for (Operation *user : users[r])
            update(user);
    }
    for (Value result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        Operation *user = use.getOwner();
        if (!index.count(user))
          continue; // the terminator
        if (--pending[user] == 0)
          makeReady(user);
      }
  }
  return order;
}

struct Schedule : tidal::impl::TidalSchedulePassBase<Schedule> {
  using TidalSchedulePassBase::TidalSchedulePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (strategy != "memory" && strategy != "program") {
      module.emitError() << "tidal-schedule: unknown strategy '" << strategy
                         << "' (expected memory or program)";
      return signalPassFailure();
    }
    Builder b(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tidal-schedule: @")
            << func.getSymName() << " has more than one block";
        return signalPassFailure();
      }
      WalkResult nested = func.walk([&](Operation *op) {
        if (op != func && op->getNumRegions() != 0) {
          op->emitError("tidal-schedule: ops with regions cannot be "
                        "scheduled");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (nested.wasInterrupted())
        return signalPassFailure();
      assignRandomStreams(func);
      func->setAttr(kScheduleAttr, b.getStringAttr(strategy));
      if (strategy == "program")
        continue;
      SmallVector<Operation *> order = ListScheduler(func).run();
      Block &body = func.getBody().front();
      if (order.size() + 1 != body.getOperations().size()) {
        func.emitError("tidal-schedule: @")
            << func.getSymName() << " has a cycle or a use before definition";
        return signalPassFailure();
      }
      Operation *terminator = body.getTerminator();
      unsigned position = 0;
      for (Operation &op : body.without_terminator()) {
        if (&op != order[position])
          ++numMoved;
        ++position;
      }
      for (Operation *op : order)
        op->moveBefore(terminator);
    }
  }
};

} // namespace
