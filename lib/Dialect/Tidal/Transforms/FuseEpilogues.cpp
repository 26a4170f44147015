//===- FuseEpilogues.cpp - fold a ReLU into its batch normalization -------===//
//
// relu(batch_norm_*(x)) -> batch_norm_*(x) {relu = true} where the relu is
// the normalization output's only reader (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALFUSEEPILOGUESPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// The relu that is `output`'s only reader, if any.
ReluOp onlyRelu(Value output) {
  if (!output.hasOneUse())
    return nullptr;
  return dyn_cast<ReluOp>(*output.getUsers().begin());
}

struct FuseEpilogues : tidal::impl::TidalFuseEpiloguesPassBase<FuseEpilogues> {
  using TidalFuseEpiloguesPassBase::TidalFuseEpiloguesPassBase;

  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<BatchNormTrainingOp, BatchNormInferenceOp>(op))
        norms.push_back(op);
    });
    for (Operation *op : norms) {
      auto relu = op->getAttrOfType<BoolAttr>("relu");
      if (relu && relu.getValue())
        continue;
      Value output = op->getResult(0);
      ReluOp user = onlyRelu(output);
      if (!user || user.getResult().getType() != output.getType())
        continue;
      op->setAttr("relu", BoolAttr::get(&getContext(), true));
      op->setLoc(FusedLoc::get(&getContext(), {op->getLoc(), user.getLoc()}));
      user.getResult().replaceAllUsesWith(output);
      user.erase();
      ++numFused;
    }
  }
};

} // namespace
