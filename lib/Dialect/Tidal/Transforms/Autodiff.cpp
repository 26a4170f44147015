//===- Autodiff.cpp - reverse-mode automatic differentiation --------------===//
//
// The classic reverse sweep over a straight-line block: find the active
// values (those that depend on a differentiated argument and that the loss
// depends on), seed d(loss) = 1, and visit the defining ops in reverse
// order, applying each op's rule (AutodiffRules.cpp) and summing the
// gradients of values used more than once.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALAUTODIFFPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

static bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// Builds d(y)/d(xs[i]) at `b`'s insertion point, which must follow y's
/// definition in y's block. `grads[i]` is null when y does not depend on
/// xs[i].
static LogicalResult differentiate(OpBuilder &b, Value y, ArrayRef<Value> xs,
                                   SmallVectorImpl<Value> &grads) {
  Block *block = b.getInsertionBlock();
  // The forward ops, in order, up to y's definition.
  SmallVector<Operation *> forward;
  Operation *yDef = y.getDefiningOp();
  if (yDef) {
    for (Operation &op : *block) {
      forward.push_back(&op);
      if (&op == yDef)
        break;
    }
  }

  // Values that depend on an x through differentiable (float) edges.
  llvm::DenseSet<Value> dependsOnX(xs.begin(), xs.end());
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return dependsOnX.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r))
          dependsOnX.insert(r);
  // Of those, the ones that y depends on.
  llvm::DenseSet<Value> active;
  if (dependsOnX.contains(y))
    active.insert(y);
  for (Operation *op : llvm::reverse(forward))
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return active.contains(v); }))
      for (Value v : op->getOperands())
        if (dependsOnX.contains(v) && isFloatTensor(v))
          active.insert(v);

  llvm::DenseMap<Value, Value> gradOf;
  if (active.contains(y))
    gradOf[y] = splatConstant(b, y.getLoc(), y.getType(), 1.0);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(gradOf.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any)
      continue;
    SmallVector<bool> wanted;
    bool anyWanted = false;
    for (Value v : op->getOperands()) {
      wanted.push_back(active.contains(v));
      anyWanted |= wanted.back();
    }
    if (!anyWanted)
      continue;
    SmallVector<Value> operandGrads;
    if (failed(buildOperandGradients(b, op, resultGrads, wanted, operandGrads)))
      return failure();
    for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g)
        continue;
      Value &acc = gradOf[v];
      acc = acc ? b.create<AddOp>(op->getLoc(), acc, g).getResult() : g;
    }
  }
  grads.clear();
  for (Value x : xs)
    grads.push_back(gradOf.lookup(x));
  return success();
}

static StringAttr nameOf(func::FuncOp func, unsigned arg) {
  return func.getArgAttrOfType<StringAttr>(arg, kNameAttr);
}

static ArgRole roleOf(func::FuncOp func, unsigned arg) {
  auto role = func.getArgAttrOfType<ArgRoleAttr>(arg, kRoleAttr);
  return role ? role.getValue() : ArgRole::input;
}

namespace {
/// A result of the training step under construction.
struct StepResult {
  Value value;
  DictionaryAttr attrs;
};

struct AutodiffPass : tidal::impl::TidalAutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      module.emitError("no function '") << funcName << "' to differentiate";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError("expects a function with one block");
      return signalPassFailure();
    }
    if (Operation *clash = module.lookupSymbol("train_step");
        clash && clash != func) {
      func.emitError("a function named 'train_step' already exists");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    size_t before = body.getOperations().size();

    SmallVector<GradientOp> markers;
    func.walk([&](GradientOp op) { markers.push_back(op); });
    SmallVector<StepResult> results;
    if (markers.empty()) {
      if (failed(differentiateLoss(func, results)))
        return signalPassFailure();
    } else {
      for (GradientOp op : markers)
        if (failed(expandMarker(op)))
          return signalPassFailure();
      auto ret = cast<func::ReturnOp>(body.getTerminator());
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        results.push_back({v, func.getResultAttrDict(i)});
    }
    if (failed(addStateUpdates(func, results)))
      return signalPassFailure();

    // Rewrite the signature and the return.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Value> values;
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (StepResult &r : results) {
      values.push_back(r.value);
      types.push_back(r.value.getType());
      attrs.push_back(r.attrs ? r.attrs
                              : DictionaryAttr::get(&getContext(), {}));
    }
    OpBuilder b(ret);
    b.create<func::ReturnOp>(ret.getLoc(), values);
    ret.erase();
    func.setType(
        FunctionType::get(&getContext(), func.getArgumentTypes(), types));
    func.setAllResultAttrs(attrs);
    func.setSymName("train_step");
    eraseDeadOps(body);
    numBackwardOps += body.getOperations().size() > before
                          ? body.getOperations().size() - before
                          : 0;
  }

  /// Standard form: the first result is the loss; differentiate it for
  /// every parameter.
  LogicalResult differentiateLoss(func::FuncOp func,
                                  SmallVectorImpl<StepResult> &results) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0)
      return func.emitError("the model has no output to train");
    Value loss = ret.getOperand(0);
    auto lt = cast<RankedTensorType>(loss.getType());
    if (lt.getRank() != 0 || !isa<FloatType>(lt.getElementType()))
      return func.emitError("the model's first output must be a scalar loss, "
                            "got ")
             << lt << "; pass --loss cross-entropy or --loss mse to add one";
    SmallVector<Value> params;
    SmallVector<unsigned> paramIndex;
    for (BlockArgument arg : func.getArguments())
      if (roleOf(func, arg.getArgNumber()) == ArgRole::param) {
        params.push_back(arg);
        paramIndex.push_back(arg.getArgNumber());
      }
    OpBuilder b(ret);
    SmallVector<Value> grads;
    if (failed(differentiate(b, loss, params, grads)))
      return failure();

    StringAttr lossName = func.getResultAttrOfType<StringAttr>(0, kNameAttr);
    if (!lossName)
      lossName = b.getStringAttr("loss");
    results.push_back(
        {loss, nameAndRoleAttrs(&getContext(), lossName, ArgRole::loss)});
    for (auto [g, index] : llvm::zip(grads, paramIndex)) {
      if (!g) // as in PyTorch, a parameter the loss ignores has no gradient
        continue;
      results.push_back({g, nameAndRoleAttrs(&getContext(), nameOf(func, index),
                                             ArgRole::gradient)});
      ++numGradients;
    }
    return success();
  }

  /// training_info form: replace one tidal.gradient by its backward graph;
  /// as ONNX's Gradient, a y that does not depend on x has gradient zero.
  LogicalResult expandMarker(GradientOp op) {
    OpBuilder b(op);
    SmallVector<Value> xs(op.getXs());
    SmallVector<Value> grads;
    if (failed(differentiate(b, op.getY(), xs, grads)))
      return failure();
    for (auto [i, g] : llvm::enumerate(grads)) {
      if (!g)
        g = splatConstant(b, op.getLoc(), xs[i].getType(), 0.0);
      else
        ++numGradients;
      op.getResult(i).replaceAllUsesWith(g);
    }
    op.erase();
    return success();
  }

  /// Returns the running statistics that batch_norm_training updates, as
  /// results of role `state` named after their arguments, unless a result
  /// already updates them.
  LogicalResult addStateUpdates(func::FuncOp func,
                                SmallVectorImpl<StepResult> &results) {
    llvm::StringSet<> returned;
    for (StepResult &r : results)
      if (auto name =
              r.attrs ? r.attrs.getAs<StringAttr>(kNameAttr) : StringAttr())
        returned.insert(name.getValue());
    llvm::DenseSet<Value> seen;
    SmallVector<StepResult> updates;
    WalkResult walk = func.walk([&](BatchNormTrainingOp op) {
      std::pair<Value, Value> stats[] = {
          {op.getRunningMean(), op.getNewRunningMean()},
          {op.getRunningVar(), op.getNewRunningVar()}};
      for (auto [old, updated] : stats) {
        auto arg = dyn_cast<BlockArgument>(old);
        if (!arg || roleOf(func, arg.getArgNumber()) != ArgRole::state)
          continue;
        StringAttr name = nameOf(func, arg.getArgNumber());
        if (!seen.insert(old).second) {
          op.emitError("running statistic '")
              << (name ? name.getValue() : "") << "' is updated by two "
              << "BatchNormalization nodes";
          return WalkResult::interrupt();
        }
        if (name && returned.contains(name.getValue()))
          continue;
        updates.push_back(
            {updated, nameAndRoleAttrs(&getContext(), name, ArgRole::state)});
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // The loss stays first; state updates go before the gradients.
    results.insert(results.begin() + (results.empty() ? 0 : 1), updates.begin(),
                   updates.end());
    return success();
  }

  static void eraseDeadOps(Block &body) {
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() &&
          isMemoryEffectFree(&op))
        op.erase();
  }
};
} // namespace
