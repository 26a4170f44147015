//===- VerifyMemoryPlan.cpp - check a memory plan -------------------------===//
//
// Recomputes every tensor's lifetime from the block order and checks the
// offsets that a plan wrote: each tensor fits and is aligned, views share
// their operand's bytes, and tensors that are live at the same position do
// not overlap unless one was written in place over the other. It shares no
// code with the planner's packing, only the in-place rules of the ops.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"

#include <functional>
#include <map>
#include <queue>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALVERIFYMEMORYPLANPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

struct Home {
  bool constant = false;
  int64_t offset = -1;
  bool host = false; ///< in the host arena of offloaded copies
};

/// A set of values sharing bytes, live on [start, end].
struct Group {
  Value leader;
  int64_t offset = 0, bytes = 0, start = 0, end = 0;
  bool host = false;
};

struct VerifyMemoryPlan
    : tidal::impl::TidalVerifyMemoryPlanPassBase<VerifyMemoryPlan> {
  using TidalVerifyMemoryPlanPassBase::TidalVerifyMemoryPlanPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto constantsSize = module->getAttrOfType<IntegerAttr>(kConstantsSizeAttr);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(verify(func, constantsSize ? constantsSize.getInt() : 0)))
        return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }

  std::string describe(func::FuncOp func, Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (auto name =
              func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttr))
        return ("argument '" + name.getValue() + "'").str();
      return "argument " + std::to_string(arg.getArgNumber());
    }
    auto result = cast<OpResult>(v);
    return ("result " + Twine(result.getResultNumber()) + " of " +
            result.getOwner()->getName().getStringRef())
        .str();
  }

  InFlightDiagnostic errorAt(func::FuncOp func, Value v) {
    if (Operation *op = v.getDefiningOp())
      return op->emitError("memory plan: ");
    return func.emitError("memory plan: ");
  }

  LogicalResult verify(func::FuncOp func, int64_t constantsSize) {
    auto arenaAttr = func->getAttrOfType<IntegerAttr>(kArenaSizeAttr);
    if (!arenaAttr)
      return func.emitError("memory plan: @")
             << func.getSymName() << " has no " << kArenaSizeAttr
             << " (run tidal-plan-memory first)";
    if (!func.getBody().hasOneBlock())
      return func.emitError("memory plan: more than one block");
    const int64_t arenaSize = arenaAttr.getInt();
    if (auto budget = func->getAttrOfType<IntegerAttr>(kDeviceBudgetAttr))
      if (arenaSize > budget.getInt())
        return func.emitError("memory plan: the arena of ")
               << arenaSize << " bytes exceeds the device budget of "
               << budget.getInt() << " bytes";
    auto hostAttr = func->getAttrOfType<IntegerAttr>(kHostArenaSizeAttr);
    const int64_t hostArenaSize = hostAttr ? hostAttr.getInt() : 0;
    Block &body = func.getBody().front();

    DenseMap<Value, Home> homes;
    DenseMap<Value, int64_t> def, lastUse;
    int64_t position = 0;
    auto checkHome = [&](Value v, Home home) -> LogicalResult {
      int64_t bytes = tensorByteSize(cast<ShapedType>(v.getType()));
      int64_t limit = home.constant ? constantsSize
                      : home.host   ? hostArenaSize
                                    : arenaSize;
      if (home.offset < 0 || home.offset + bytes > limit)
        return errorAt(func, v)
               << describe(func, v) << " at offset " << home.offset << " ("
               << bytes << " bytes) does not fit the "
               << (home.constant ? "constant arena"
                   : home.host   ? "host arena"
                                 : "arena")
               << " of " << limit << " bytes";
      if (home.offset % alignment)
        return errorAt(func, v)
               << describe(func, v) << " at offset " << home.offset
               << " is not aligned to " << static_cast<int64_t>(alignment);
      homes[v] = home;
      return success();
    };

    for (BlockArgument arg : func.getArguments()) {
      auto offset =
          func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kOffsetAttr);
      if (!offset)
        return func.emitError("memory plan: ")
               << describe(func, arg) << " has no " << kOffsetAttr;
      if (failed(checkHome(arg, {false, offset.getInt(),
                                 isHostArgument(func, arg.getArgNumber())})))
        return failure();
      def[arg] = 0;
      lastUse[arg] = 0;
    }
    for (Operation &op : body.without_terminator()) {
      ++position;
      for (Value operand : op.getOperands())
        lastUse[operand] = position;
      if (op.getNumResults() == 0)
        continue;
      auto arena = op.getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
      auto constant = op.getAttrOfType<DenseI64ArrayAttr>(kConstOffsetsAttr);
      DenseI64ArrayAttr offsets = arena ? arena : constant;
      if (!offsets || offsets.size() != (int64_t)op.getNumResults() ||
          (arena && constant))
        return op.emitError("memory plan: expected one offset per result in "
                            "either ")
               << kOffsetsAttr << " or " << kConstOffsetsAttr;
      bool isConstant = !arena;
      bool constantSource = isa<ConstantOp>(op) ||
                            (isViewOp(&op) && homes[op.getOperand(0)].constant);
      if (isConstant != constantSource)
        return op.emitError("memory plan: only constants and views of them "
                            "live in the constant arena");
      for (auto [result, offset] :
           llvm::zip(op.getResults(), offsets.asArrayRef())) {
        // Offloaded copies, host-placed ops' results (and waits for them
        // and views of them) are in the host arena.
        bool host = isa<OffloadOp>(op) || isHostPlaced(&op) ||
                    ((isa<WaitOp>(op) || isViewOp(&op)) &&
                     homes[op.getOperand(0)].host);
        if (failed(checkHome(result, {isConstant, offset, host})))
          return failure();
        def[result] = position;
        lastUse[result] = position;
      }
      if (isViewOp(&op) || isa<WaitOp>(&op)) {
        Home src = homes[op.getOperand(0)];
        if (src.offset != offsets[0])
          return op.emitError("memory plan: a ")
                 << (isa<WaitOp>(&op) ? "wait" : "view")
                 << " must have its operand's offset " << src.offset << ", not "
                 << offsets[0];
      }
      // A copy reads its source until the wait for it.
      if (auto wait = dyn_cast<WaitOp>(&op))
        if (Operation *copy = wait.getInput().getDefiningOp())
          lastUse[copy->getOperand(0)] = position;
    }
    const int64_t end = position + 1;
    Operation *terminator = body.getTerminator();
    for (Value v : terminator->getOperands())
      lastUse[v] = end;

    // Group views with their operands and legal in-place results with the
    // operand whose bytes they took.
    // Union-find: `parent` links each value towards its group's leader
    // (the first value of the group).
    DenseMap<Value, Value> parent;
    DenseMap<Value, int64_t> groupEnd; // by leader, members so far
    SmallVector<Value> members;
    std::function<Value(Value)> leader = [&](Value v) -> Value {
      Value p = parent[v];
      if (p == v)
        return v;
      Value l = leader(p);
      parent[v] = l;
      return l;
    };
    auto add = [&](Value v) {
      parent[v] = v;
      groupEnd[v] = lastUse[v];
      members.push_back(v);
    };
    auto merge = [&](Value into, Value v) {
      Value a = leader(into), b = leader(v);
      if (a == b)
        return;
      groupEnd[a] = std::max(groupEnd[a], groupEnd[b]);
      parent[b] = a;
    };
    DenseMap<Value, Value> replaces;
    SmallVector<std::optional<unsigned>> replaced = replacedArguments(func);
    for (OpOperand &use : terminator->getOpOperands())
      if (auto arg = replaced[use.getOperandNumber()])
        replaces[use.get()] = func.getArgument(*arg);
    for (BlockArgument arg : func.getArguments())
      add(arg);
    position = 0;
    for (Operation &op : body.without_terminator()) {
      ++position;
      for (Value result : op.getResults())
        add(result);
      if (op.getNumResults() == 0 || homes[op.getResult(0)].constant)
        continue;
      if (isViewOp(&op) || isa<WaitOp>(&op)) {
        merge(op.getOperand(0), op.getResult(0));
        continue;
      }
      if (isa<PrefetchOp>(&op)) {
        // A copy back in place of a persistent device argument may take
        // its bytes once they are dead (tidal-place).
        for (Operation *user : op.getUsers()) {
          Value arg =
              isa<WaitOp>(user) ? replaces.lookup(user->getResult(0)) : Value();
          if (!arg || homes[arg].host ||
              homes[arg].offset != homes[op.getResult(0)].offset ||
              groupEnd[leader(arg)] >= position)
            continue;
          merge(arg, op.getResult(0));
          break;
        }
        continue;
      }
      if (isa<OffloadOp>(&op))
        continue; // bytes of their own
      SmallVector<Value, 2> taken;
      for (OpResult result : op.getResults())
        for (unsigned i : inPlaceOperands(&op, result.getResultNumber())) {
          Value operand = op.getOperand(i);
          Value l = leader(operand);
          if (homes[operand].constant ||
              homes[operand].host != homes[result].host ||
              homes[operand].offset != homes[result].offset ||
              groupEnd[l] != position || llvm::is_contained(taken, l))
            continue;
          auto arg = dyn_cast<BlockArgument>(l);
          if (arg && isPersistentArgument(func, arg.getArgNumber()) &&
              replaces.lookup(result) != arg)
            continue;
          taken.push_back(l);
          merge(operand, result);
          break;
        }
    }

    // Each group's interval and bytes; returned constants get their own.
    std::vector<Group> list;
    DenseMap<Value, unsigned> index; // leader -> group
    for (Value v : members) {
      if (homes[v].constant)
        continue;
      Value l = leader(v);
      auto [it, inserted] = index.try_emplace(l, list.size());
      if (inserted)
        list.push_back({l, homes[l].offset, 0, INT64_MAX, 0, homes[l].host});
      Group &g = list[it->second];
      g.bytes =
          std::max(g.bytes, tensorByteSize(cast<ShapedType>(v.getType())));
      g.start = std::min(g.start, def[v]);
      g.end = std::max(g.end, lastUse[v]);
      // Arguments that outlive the step hold their bytes to the end.
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg && isPersistentArgument(func, arg.getArgNumber()))
        g.end = end;
    }
    auto resultOffsets =
        func->getAttrOfType<DenseI64ArrayAttr>(kResultOffsetsAttr);
    if (!resultOffsets ||
        resultOffsets.size() != (int64_t)terminator->getNumOperands())
      return func.emitError("memory plan: expected one offset per result in ")
             << kResultOffsetsAttr;
    for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
      int64_t offset = resultOffsets[i];
      if (!homes[v].constant) {
        if (offset != homes[v].offset)
          return func.emitError("memory plan: result ")
                 << i << " is read at offset " << offset << " but computed at "
                 << homes[v].offset;
        continue;
      }
      int64_t bytes = tensorByteSize(cast<ShapedType>(v.getType()));
      if (offset < 0 || offset + bytes > arenaSize || offset % alignment)
        return func.emitError("memory plan: returned constant ")
               << i << " at offset " << offset << " does not fit the arena";
      list.push_back({v, offset, bytes, end, end});
    }
    // The arena and the host arena are checked separately.
    std::vector<Group> hostList;
    for (Group &g : list)
      if (g.host)
        hostList.push_back(g);
    llvm::erase_if(list, [](const Group &g) { return g.host; });
    if (failed(checkOverlaps(func, list)))
      return failure();
    return checkOverlaps(func, hostList);
  }

  /// Sweeps the groups in time order with the live ones ordered by offset.
  LogicalResult checkOverlaps(func::FuncOp func, std::vector<Group> &list) {
    std::vector<unsigned> order(list.size());
    for (unsigned i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return list[a].start < list[b].start;
    });
    std::map<int64_t, unsigned> live; // offset -> group (no empty groups)
    using Ending = std::pair<int64_t, unsigned>;
    std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ends;
    for (unsigned id : order) {
      const Group &g = list[id];
      while (!ends.empty() && ends.top().first < g.start) {
        unsigned gone = ends.top().second;
        ends.pop();
        auto it = live.find(list[gone].offset);
        if (it != live.end() && it->second == gone)
          live.erase(it);
      }
      if (g.bytes == 0)
        continue;
      auto clash = [&](unsigned other) -> LogicalResult {
        const Group &o = list[other];
        int64_t at = std::max(g.start, o.start);
        return errorAt(func, g.leader)
               << describe(func, g.leader) << " (bytes [" << g.offset << ", "
               << g.offset + g.bytes << "), live " << g.start << ".." << g.end
               << ") overlaps " << describe(func, o.leader) << " (bytes ["
               << o.offset << ", " << o.offset + o.bytes << "), live "
               << o.start << ".." << o.end << ") at position " << at;
      };
      auto next = live.lower_bound(g.offset);
      if (next != live.end() && next->first < g.offset + g.bytes)
        return clash(next->second);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        if (prev->first + list[prev->second].bytes > g.offset)
          return clash(prev->second);
      }
      live[g.offset] = id;
      ends.push({g.end, id});
    }
    return success();
  }
};

} // namespace
