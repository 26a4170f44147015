//===- AddLoss.cpp - append a loss to a forward model ---------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALADDLOSSPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {
struct AddLossPass : tidal::impl::TidalAddLossPassBase<AddLossPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      getOperation().emitError("no function '") << funcName << "' to add a "
                                                << "loss to";
      return signalPassFailure();
    }
    if (loss != "cross-entropy" && loss != "mse") {
      func.emitError("unknown loss '")
          << loss << "' (expected cross-entropy or mse)";
      return signalPassFailure();
    }
    if (failed(addLoss(func)))
      signalPassFailure();
  }

  LogicalResult addLoss(func::FuncOp func) {
    if (func.getNumResults() == 0)
      return func.emitError("the model has no output to compute a loss of");
    auto pred = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (!pred || !isa<FloatType>(pred.getElementType()))
      return func.emitError("the first output must be a floating-point "
                            "tensor to add a loss, got ")
             << func.getResultTypes()[0];
    if (pred.getRank() == 0)
      return func.emitError("the first output is already a scalar; it is "
                            "taken as the loss without --loss");
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto n = func.getArgAttrOfType<StringAttr>(i, kNameAttr);
          n && n.getValue() == "label")
        return func.emitError("the model already has an input named 'label'");

    Type labelType = pred;
    if (loss == "cross-entropy") {
      if (pred.getRank() < 2)
        return func.emitError("cross-entropy needs class scores [N, C, ...], "
                              "got a prediction of rank ")
               << pred.getRank();
      SmallVector<int64_t> shape{pred.getDimSize(0)};
      llvm::append_range(shape, pred.getShape().drop_front(2));
      labelType =
          RankedTensorType::get(shape, IntegerType::get(&getContext(), 64));
    }

    MLIRContext *ctx = &getContext();
    Location loc = NameLoc::get(StringAttr::get(ctx, "loss"));
    unsigned labelIndex = func.getNumArguments();
    func.insertArgument(
        labelIndex, labelType,
        nameAndRoleAttrs(ctx, StringAttr::get(ctx, "label"), ArgRole::input),
        loc);
    Value label = func.getArgument(labelIndex);

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    Value prediction = ret.getOperand(0);
    Value lossValue;
    if (loss == "cross-entropy") {
      lossValue = b.create<SoftmaxCrossEntropyLossOp>(
                       loc, prediction, label, Value(),
                       ReductionAttr::get(ctx, Reduction::mean),
                       b.getI64IntegerAttr(-100))
                      .getLoss();
    } else {
      Value diff = b.create<SubOp>(loc, prediction, label);
      Value sq = b.create<MulOp>(loc, diff, diff);
      auto axes = llvm::to_vector(llvm::seq<int64_t>(0, pred.getRank()));
      lossValue = b.create<ReduceMeanOp>(loc, sq, axes, false);
    }

    // The loss is result 0; the prediction and any other outputs follow.
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      func.setResultAttr(i, kRoleAttr, ArgRoleAttr::get(ctx, ArgRole::output));
    func.insertResult(
        0, lossValue.getType(),
        nameAndRoleAttrs(ctx, StringAttr::get(ctx, "loss"), ArgRole::loss));
    ret->insertOperands(0, lossValue);
    return success();
  }
};
} // namespace
