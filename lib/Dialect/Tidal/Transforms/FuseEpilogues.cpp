//===- FuseEpilogues.cpp - fold a ReLU or clip into its batch norm --------===//
//
// relu(batch_norm_*(x)) -> batch_norm_*(x) {relu = true} and
// clip(batch_norm_*(x)) -> batch_norm_*(x) {clip_min, clip_max} where the
// activation is the normalization output's only reader (see Passes.td).
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

/// The relu or clip that is `output`'s only reader, if any, of the same
/// type.
Operation *onlyActivation(Value output) {
  if (!output.hasOneUse())
    return nullptr;
  Operation *user = *output.getUsers().begin();
  if (!isa<ReluOp, ClipOp>(user) ||
      user->getResult(0).getType() != output.getType())
    return nullptr;
  return user;
}

struct FuseEpilogues : tidal::impl::TidalFuseEpiloguesPassBase<FuseEpilogues> {
  using TidalFuseEpiloguesPassBase::TidalFuseEpiloguesPassBase;

  /// Folds the relu or clip that alone reads `norm`'s output into it.
  template <typename NormOp> void fuse(NormOp norm) {
    Value output = norm.getOutput();
    Operation *user = onlyActivation(output);
    if (norm.getRelu() || norm.getClipMin() || !user)
      return;
    if (auto clip = dyn_cast<ClipOp>(user)) {
      norm.setClipMinAttr(clip.getMinAttr());
      norm.setClipMaxAttr(clip.getMaxAttr());
    } else {
      norm.setRelu(true);
    }
    norm->setLoc(FusedLoc::get(&getContext(), {norm.getLoc(), user->getLoc()}));
    user->getResult(0).replaceAllUsesWith(output);
    user->erase();
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
