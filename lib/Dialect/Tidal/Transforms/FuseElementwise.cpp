//===- FuseElementwise.cpp - chains of element-wise ops in one kernel -----===//
//
// Groups float32 element-wise ops into tidal.fused_elementwise ops (see
// Passes.td). One walk over each function's ops in block order: an op that
// a step can compute joins the groups of its operands' producers when the
// fused op, placed at the op, still comes before every outside reader of
// their values; otherwise it starts a group of its own.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ChannelLayout.h"
#include "tidal/Dialect/Tidal/IR/FusedProgram.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "tidalrt/fused_program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALFUSEELEMENTWISEPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// The ops of one group, in block order, and what the group shares.
struct Group {
  SmallVector<Operation *> members;
  Type type;
  bool blocked = false;
  bool dead = false; // merged into another group
};

/// Whether `op` is an op a step computes, on float32 tensors of static
/// shape, with nothing but its layout mark among its discardable
/// attributes.
bool isFusable(Operation *op) {
  if (!fusedOpcodeOf(op) || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return false;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName() != kBlockedAttrName)
      return false;
  for (Value operand : op->getOperands())
    if (operand.getType() != type && !isBroadcastScalar(operand.getType()))
      return false;
  // A binary op whose result is broadcast from smaller operands is not
  // element by element over the result.
  return llvm::any_of(op->getOperands(),
                      [&](Value v) { return v.getType() == type; });
}

struct FuseElementwise
    : tidal::impl::TidalFuseElementwisePassBase<FuseElementwise> {
  using TidalFuseElementwisePassBase::TidalFuseElementwisePassBase;

  DenseMap<Operation *, int64_t> position;
  DenseMap<Operation *, unsigned> groupOf;
  SmallVector<Group> groups;

  /// The inputs, steps and results `members` would have as one op.
  struct Shape {
    SetVector<Value> inputs;
    int64_t results = 0;
  };
  Shape shapeOf(ArrayRef<Operation *> members,
                const llvm::SmallPtrSetImpl<Operation *> &in) {
    Shape s;
    for (Operation *m : members)
      for (Value operand : m->getOperands())
        if (!in.contains(operand.getDefiningOp()))
          s.inputs.insert(operand);
    for (Operation *m : members)
      if (llvm::any_of(m->getResult(0).getUsers(),
                       [&](Operation *u) { return !in.contains(u); }))
        ++s.results;
    return s;
  }

  /// Whether every reader of `g`'s values outside `in` comes after `at`.
  bool readersAfter(const Group &g,
                    const llvm::SmallPtrSetImpl<Operation *> &in, int64_t at) {
    for (Operation *m : g.members)
      for (Operation *user : m->getResult(0).getUsers())
        if (!in.contains(user) && position.lookup(user) <= at)
          return false;
    return true;
  }

  static int64_t bytesOf(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
  }

  /// Whether moving `g`'s computation from its last member to `at` keeps
  /// the bytes live in between from growing: when other ops run in
  /// between, the inputs that die inside the group would live across them,
  /// and only the group's values that `in` alone reads stop being stored.
  /// (A chain accumulating values produced far apart, such as a weight's
  /// gradient summed over the time steps of an RNN, would otherwise keep
  /// every addend alive to the last step.)
  bool keepsLiveBytes(const Group &g,
                      const llvm::SmallPtrSetImpl<Operation *> &in,
                      Operation *op, int64_t at) {
    const int64_t last = position.lookup(g.members.back());
    int64_t between = at - last - 1;
    for (Operation *m : in)
      if (int64_t q = position.lookup(m); q > last && q < at)
        --between;
    if (between <= 0)
      return true;
    auto readOnlyIn = [&](Value v) {
      return llvm::all_of(v.getUsers(),
                          [&](Operation *u) { return in.contains(u); });
    };
    int64_t extended = 0, saved = 0;
    llvm::SmallPtrSet<Value, 16> seen;
    for (Operation *m : g.members) {
      for (Value v : m->getOperands())
        if (!isa<BlockArgument>(v) && !in.contains(v.getDefiningOp()) &&
            seen.insert(v).second && readOnlyIn(v))
          extended += bytesOf(v);
      Value r = m->getResult(0);
      if (readOnlyIn(r) && llvm::is_contained(r.getUsers(), op))
        saved += bytesOf(r);
    }
    return extended <= saved;
  }

  void visit(Operation *op) {
    if (!isFusable(op))
      return;
    Type type = op->getResult(0).getType();
    bool blocked = isChannelBlocked(op->getResult(0));
    SmallVector<unsigned> candidates;
    for (Value operand : op->getOperands()) {
      auto it = groupOf.find(operand.getDefiningOp());
      if (it == groupOf.end() || llvm::is_contained(candidates, it->second))
        continue;
      const Group &g = groups[it->second];
      if (g.type == type && g.blocked == blocked)
        candidates.push_back(it->second);
    }

    // Grow {op} by each candidate group that keeps the fused op legal and
    // within the runtime's limits.
    SmallVector<Operation *> members = {op};
    llvm::SmallPtrSet<Operation *, 16> in = {op};
    SmallVector<unsigned> merged;
    const int64_t at = position.lookup(op);
    for (unsigned c : candidates) {
      const Group &g = groups[c];
      SmallVector<Operation *> trial(members);
      llvm::SmallPtrSet<Operation *, 16> trialIn(in);
      trial.append(g.members);
      trialIn.insert(g.members.begin(), g.members.end());
      if (!readersAfter(g, trialIn, at) || !keepsLiveBytes(g, trialIn, op, at))
        continue;
      Shape s = shapeOf(trial, trialIn);
      if ((int64_t)trial.size() > TIDALRT_FUSED_MAX_STEPS ||
          (int64_t)s.inputs.size() > TIDALRT_FUSED_MAX_INPUTS ||
          s.results > TIDALRT_FUSED_MAX_OUTPUTS)
        continue;
      members = std::move(trial);
      in = std::move(trialIn);
      merged.push_back(c);
    }

    Group group;
    group.type = type;
    group.blocked = blocked;
    group.members = std::move(members);
    llvm::sort(group.members, [&](Operation *x, Operation *y) {
      return position.lookup(x) < position.lookup(y);
    });
    for (unsigned c : merged)
      groups[c].dead = true;
    unsigned id = groups.size();
    for (Operation *m : group.members)
      groupOf[m] = id;
    groups.push_back(std::move(group));
  }

  /// Replaces the members of `g` by one fused op at the last member.
  void materialize(const Group &g) {
    llvm::SmallPtrSet<Operation *, 16> in(g.members.begin(), g.members.end());
    Shape s = shapeOf(g.members, in);
    DenseMap<Value, int64_t> reg;
    for (Value input : s.inputs)
      reg[input] = reg.size();
    SmallVector<int64_t> program, outputs;
    SmallVector<Value> replaced;
    SmallVector<Location> locs;
    for (Operation *m : g.members) {
      Value a = m->getOperand(0);
      Value b = m->getNumOperands() > 1 ? m->getOperand(1) : Value();
      program.append({*fusedOpcodeOf(m), reg.lookup(a), b ? reg.lookup(b) : -1,
                      fusedParamOf(m)});
      Value result = m->getResult(0);
      reg[result] = reg.size();
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *u) { return !in.contains(u); })) {
        outputs.push_back(reg[result]);
        replaced.push_back(result);
      }
      locs.push_back(m->getLoc());
    }

    Operation *last = g.members.back();
    OpBuilder builder(last);
    SmallVector<Type> types(replaced.size(), g.type);
    auto fused = builder.create<FusedElementwiseOp>(
        FusedLoc::get(&getContext(), locs), types, s.inputs.getArrayRef(),
        builder.getDenseI64ArrayAttr(program),
        builder.getDenseI64ArrayAttr(outputs));
    if (g.blocked) {
      SmallVector<int64_t> all;
      for (unsigned i = 0; i < replaced.size(); ++i)
        all.push_back(i);
      fused->setAttr(kBlockedAttrName, builder.getDenseI64ArrayAttr(all));
    }
    for (auto [value, result] : llvm::zip(replaced, fused.getResults()))
      value.replaceAllUsesWith(result);
    for (Operation *m : llvm::reverse(g.members))
      m->erase();
    ++numGroups;
    numFusedOps += g.members.size();
  }

  void runOnFunction(func::FuncOp func) {
    position.clear();
    groupOf.clear();
    groups.clear();
    int64_t p = 0;
    for (Operation &op : func.getBody().front())
      position[&op] = p++;
    for (Operation &op : func.getBody().front())
      visit(&op);
    for (const Group &g : groups)
      if (!g.dead && g.members.size() > 1)
        materialize(g);
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        runOnFunction(func);
  }
};

} // namespace
