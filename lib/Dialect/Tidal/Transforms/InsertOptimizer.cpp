//===- InsertOptimizer.cpp - gradients become parameter updates -----------===//
//
// Replaces each `gradient` result of the training step by the torch.optim
// update of its parameter. Optimizer state enters as arguments and leaves as
// results of role `optimizer_state`; it starts at zero (docs/optimizers.md
// shows why that equals PyTorch's lazily created state).
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALINSERTOPTIMIZERPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {
struct InsertOptimizerPass
    : tidal::impl::TidalInsertOptimizerPassBase<InsertOptimizerPass> {
  using Base::Base;

  DictionaryAttr attrs(StringRef name, ArgRole role) {
    MLIRContext *ctx = &getContext();
    return nameAndRoleAttrs(ctx, StringAttr::get(ctx, name), role);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      module.emitError("no function '")
          << funcName << "' to add an optimizer to (run --tidal-autodiff "
          << "first)";
      return signalPassFailure();
    }
    if (failed(checkOptions(func)) || failed(insert(func)))
      signalPassFailure();
  }

  LogicalResult checkOptions(func::FuncOp func) {
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw")
      return func.emitError("unknown optimizer '")
             << optimizer << "' (expected sgd, adam or adamw)";
    // As torch.optim: zero is allowed (a frozen run), negative is not; -1
    // selects the optimizer's default.
    if (lr < 0.0 && lr != -1.0)
      return func.emitError("learning rate must be non-negative, got ") << lr;
    if (momentum < 0.0 || dampening < 0.0 ||
        (weightDecay < 0.0 && weightDecay != -1.0))
      return func.emitError("momentum, dampening and weight decay must be "
                            "non-negative");
    if (optimizer == "sgd" && nesterov && (momentum <= 0.0 || dampening != 0.0))
      return func.emitError("Nesterov momentum requires a momentum and zero "
                            "dampening");
    if (optimizer != "sgd" && (momentum != 0.0 || nesterov || dampening != 0.0))
      return func.emitError("momentum, dampening and nesterov apply to sgd "
                            "only");
    if (optimizer != "sgd" &&
        !(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0))
      return func.emitError("Adam betas must lie in [0, 1)");
    if (optimizer != "sgd" && !(eps >= 0.0))
      return func.emitError("Adam epsilon must be non-negative");
    return success();
  }

  LogicalResult insert(func::FuncOp func) {
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    bool anyGradient = false;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto role = func.getResultAttrOfType<ArgRoleAttr>(i, kRoleAttr))
        anyGradient |= role.getValue() == ArgRole::gradient;
    if (!anyGradient) {
      if (func->hasAttr(kTrainingInfoAttr))
        return success(); // the ONNX algorithm updates the weights itself
      return func.emitError("no parameter gets a gradient: nothing to train");
    }

    double rate = lr > 0.0 ? lr.getValue() : optimizer == "sgd" ? 0.01 : 1e-3;
    double decay = weightDecay >= 0.0     ? weightDecay.getValue()
                   : optimizer == "adamw" ? 1e-2
                                          : 0.0;

    MLIRContext *ctx = &getContext();
    llvm::StringMap<BlockArgument> argByName;
    for (BlockArgument arg : func.getArguments())
      if (auto n =
              func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttr))
        argByName[n.getValue()] = arg;
    // Every optimizer-state argument is added in one insertion (one per
    // argument rebuilds the function's type and attributes each time:
    // quadratic in the parameters, 23 s for a 5,000-layer ResNet).
    auto stepType = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    SmallVector<std::pair<std::string, Type>> stateArgs;
    if (optimizer != "sgd")
      stateArgs.push_back({"optimizer.step", stepType});
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      DictionaryAttr a = func.getResultAttrDict(i);
      auto role = a ? a.getAs<ArgRoleAttr>(kRoleAttr) : ArgRoleAttr();
      if (!role || role.getValue() != ArgRole::gradient)
        continue;
      StringRef name = a.getAs<StringAttr>(kNameAttr).getValue();
      BlockArgument param = argByName.lookup(name);
      if (!param)
        return func.emitError("gradient '") << name << "' has no parameter";
      if (optimizer == "sgd" && momentum == 0.0)
        continue;
      if (optimizer == "sgd") {
        stateArgs.push_back(
            {(name + ".momentum_buffer").str(), param.getType()});
      } else {
        stateArgs.push_back({(name + ".exp_avg").str(), param.getType()});
        stateArgs.push_back({(name + ".exp_avg_sq").str(), param.getType()});
      }
    }
    {
      SmallVector<unsigned> indices;
      SmallVector<Type> types;
      SmallVector<DictionaryAttr> argAttrs;
      SmallVector<Location> locs;
      for (auto &[name, type] : stateArgs) {
        if (argByName.count(name))
          return func.emitError("optimizer state '")
                 << name << "' clashes with a graph value of that name";
        indices.push_back(func.getNumArguments());
        types.push_back(type);
        argAttrs.push_back(attrs(name, ArgRole::optimizer_state));
        locs.push_back(func.getLoc());
      }
      unsigned first = func.getNumArguments();
      func.insertArguments(indices, types, argAttrs, locs);
      for (auto [k, state] : llvm::enumerate(stateArgs))
        argByName[state.first] = func.getArgument(first + k);
    }
    auto addArg = [&](StringRef name, Type) -> FailureOr<Value> {
      return Value(argByName.lookup(name));
    };

    OpBuilder b(ret);
    Location loc = NameLoc::get(StringAttr::get(ctx, "optimizer"));
    Value step;
    if (optimizer != "sgd") {
      auto stepArg = addArg("optimizer.step", stepType);
      if (failed(stepArg))
        return failure();
      auto one = DenseElementsAttr::get(stepType, int64_t(1));
      step = b.create<AddOp>(
          loc, *stepArg, b.create<ConstantOp>(loc, cast<ElementsAttr>(one)));
    }

    SmallVector<Value> results;
    SmallVector<DictionaryAttr> resultAttrs;
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      DictionaryAttr a = func.getResultAttrDict(i);
      auto role = a ? a.getAs<ArgRoleAttr>(kRoleAttr) : ArgRoleAttr();
      if (!role || role.getValue() != ArgRole::gradient) {
        results.push_back(value);
        resultAttrs.push_back(a ? a : DictionaryAttr::get(ctx, {}));
        continue;
      }
      StringRef name = a.getAs<StringAttr>(kNameAttr).getValue();
      BlockArgument param = argByName.lookup(name);
      if (!param)
        return func.emitError("gradient '") << name << "' has no parameter";
      Type type = param.getType();
      auto push = [&](Value v, StringRef n, ArgRole r) {
        results.push_back(v);
        resultAttrs.push_back(attrs(n, r));
      };
      if (optimizer == "sgd" && momentum == 0.0) {
        Value p =
            b.create<SgdUpdateOp>(loc, param, value, b.getF64FloatAttr(rate),
                                  b.getF64FloatAttr(decay));
        push(p, name, ArgRole::param);
      } else if (optimizer == "sgd") {
        std::string bufName = (name + ".momentum_buffer").str();
        auto buf = addArg(bufName, type);
        if (failed(buf))
          return failure();
        auto op = b.create<SgdMomentumUpdateOp>(
            loc, param, value, *buf, b.getF64FloatAttr(rate),
            b.getF64FloatAttr(momentum), b.getF64FloatAttr(dampening),
            b.getF64FloatAttr(decay), b.getBoolAttr(nesterov));
        push(op.getNewParam(), name, ArgRole::param);
        push(op.getNewMomentumBuffer(), bufName, ArgRole::optimizer_state);
      } else {
        std::string mName = (name + ".exp_avg").str();
        std::string vName = (name + ".exp_avg_sq").str();
        auto m = addArg(mName, type);
        if (failed(m))
          return failure();
        auto v = addArg(vName, type);
        if (failed(v))
          return failure();
        auto op = b.create<AdamUpdateOp>(
            loc, param, value, *m, *v, step, b.getF64FloatAttr(rate),
            b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
            b.getF64FloatAttr(eps), b.getF64FloatAttr(decay),
            b.getBoolAttr(optimizer == "adamw"));
        push(op.getNewParam(), name, ArgRole::param);
        push(op.getNewExpAvg(), mName, ArgRole::optimizer_state);
        push(op.getNewExpAvgSq(), vName, ArgRole::optimizer_state);
      }
    }
    if (step) {
      results.push_back(step);
      resultAttrs.push_back(attrs("optimizer.step", ArgRole::optimizer_state));
    }

    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> types;
    for (Value v : results)
      types.push_back(v.getType());
    func.setType(FunctionType::get(ctx, func.getArgumentTypes(), types));
    func.setAllResultAttrs(resultAttrs);
    return success();
  }
};
} // namespace
