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

  /// Folds the relu that alone reads `norm`'s output into it.
  template <typename NormOp> void fuse(NormOp norm) {
    Value output = norm.getOutput();
    ReluOp user = onlyRelu(output);
    if (norm.getRelu() || !user ||
        user.getResult().getType() != output.getType())
      return;
    norm.setRelu(true);
    norm->setLoc(FusedLoc::get(&getContext(), {norm.getLoc(), user.getLoc()}));
    user.getResult().replaceAllUsesWith(output);
    user.erase();
    ++numFused;
  }

  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<BatchNormTrainingOp, BatchNormInferenceOp>(op))
        norms.push_back(op);
    });
    for (Operation *op : norms) {
      if (auto training = dyn_cast<BatchNormTrainingOp>(op))
        fuse(training);
      else
        fuse(cast<BatchNormInferenceOp>(op));
    }
  }
};

} // namespace
