//===- ConvRules.cpp - gradients of convolution and its transpose ---------===//
//
// y = conv(x, W, b): dx = conv_backward_data(dy, W), dW =
// conv_backward_weights(dy, x), db = dy summed over all but the channels.
//
// z = conv_backward_data(u, W) is the adjoint of x -> conv(x, W) applied to
// u (ONNX ConvTranspose imports as it), linear in u and in W:
// <dz, z> = <conv(dz, W), u>, so du = conv(dz, W) and dW =
// conv_backward_weights(u, dz) (the weight gradient of the convolution
// whose input is dz and whose output gradient is u).
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isConvOp(Operation *op) {
  return isa<ConvOp, ConvBackwardDataOp>(op);
}

void tidal::buildConvGradients(OpBuilder &b, Operation *op, Value g,
                               ArrayRef<bool> wanted,
                               SmallVectorImpl<Value> &out) {
  Location loc = op->getLoc();
  auto want = [&](unsigned i) { return i < wanted.size() && wanted[i]; };
  if (auto conv = dyn_cast<ConvOp>(op)) {
    if (want(0))
      out[0] = b.create<ConvBackwardDataOp>(
          loc, conv.getInput().getType(), g, conv.getWeight(),
          conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
          conv.getGroupAttr());
    if (want(1))
      out[1] = b.create<ConvBackwardWeightsOp>(
          loc, conv.getWeight().getType(), g, conv.getInput(),
          conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
          conv.getGroupAttr());
    if (conv.getBias() && want(2)) {
      SmallVector<int64_t> axes{0};
      for (int64_t i = 2, e = cast<RankedTensorType>(g.getType()).getRank();
           i < e; ++i)
        axes.push_back(i);
      out[2] = b.create<ReduceSumOp>(loc, g, axes, false);
    }
    return;
  }
  auto t = cast<ConvBackwardDataOp>(op);
  if (want(0))
    out[0] = b.create<ConvOp>(loc, t.getGrad().getType(), g, t.getWeight(),
                              Value(), t.getStridesAttr(), t.getPadsAttr(),
                              t.getDilationsAttr(), t.getGroupAttr());
  if (want(1))
    out[1] = b.create<ConvBackwardWeightsOp>(
        loc, t.getWeight().getType(), t.getGrad(), g, t.getStridesAttr(),
        t.getPadsAttr(), t.getDilationsAttr(), t.getGroupAttr());
}
