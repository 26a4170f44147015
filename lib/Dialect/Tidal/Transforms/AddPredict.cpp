//===- AddPredict.cpp - an eval-mode copy of the forward function ---------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALADDPREDICTPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

struct AddPredict : tidal::impl::TidalAddPredictPassBase<AddPredict> {
  using TidalAddPredictPassBase::TidalAddPredictPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto forward = symbols.lookup<func::FuncOp>(funcName);
    if (!forward) {
      module.emitError() << "tidal-add-predict: no function @" << funcName;
      return signalPassFailure();
    }
    // A training_info graph carries its own algorithm: nothing to copy.
    if (forward->hasAttr(kTrainingInfoAttr))
      return;
    if (symbols.lookup(predictName)) {
      module.emitError() << "tidal-add-predict: @" << predictName
                         << " already exists";
      return signalPassFailure();
    }
    auto predict = cast<func::FuncOp>(forward->clone());
    predict.setSymName(predictName);
    symbols.insert(predict);

    WalkResult walk = predict.walk([&](Operation *op) -> WalkResult {
      OpBuilder b(op);
      if (auto bn = dyn_cast<BatchNormTrainingOp>(op)) {
        if (!bn.getBatchMean().use_empty() || !bn.getBatchVar().use_empty())
          return bn.emitError("batch statistics are used by the forward "
                              "graph; no eval-mode copy can be made");
        auto inference = b.create<BatchNormInferenceOp>(
            bn.getLoc(), bn.getInput(), bn.getScale(), bn.getBias(),
            bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr(),
            bn.getReluAttr(), bn.getClipMinAttr(), bn.getClipMaxAttr());
        bn.getOutput().replaceAllUsesWith(inference.getOutput());
        bn.getNewRunningMean().replaceAllUsesWith(bn.getRunningMean());
        bn.getNewRunningVar().replaceAllUsesWith(bn.getRunningVar());
        bn.erase();
      } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
        if (!dropout.getMask().use_empty())
          return dropout.emitError("the dropout mask is used by the forward "
                                   "graph; no eval-mode copy can be made");
        dropout.getOutput().replaceAllUsesWith(dropout.getInput());
        dropout.erase();
      } else if (isa<GradientOp>(op)) {
        return op->emitError("a forward function with tidal.gradient has "
                             "no eval-mode copy");
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace
