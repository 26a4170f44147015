//===- CostModel.cpp - predicted op and step times ------------------------===//

#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/IR/ChannelLayout.h"
#include "tidal/Dialect/Tidal/IR/FusedProgram.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;

static double numel(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && type.hasStaticShape() ? (double)type.getNumElements() : 0;
}

static double bytesOf(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && type.hasStaticShape() ? (double)tensorByteSize(type) : 0;
}

/// Multiply-adds of a convolution: each element of the output-side tensor
/// `y` takes one weight row (Cin/group x kernel) of `w`.
static double convFlops(Value y, Value w) {
  auto wt = cast<ShapedType>(w.getType());
  double row = wt.getDimSize(0) ? numel(w) / wt.getDimSize(0) : 0;
  return 2 * numel(y) * row;
}

/// 2 * M * N * K for a product whose result is `y` and whose left operand
/// has inner dimension `k`.
static double productFlops(Value y, int64_t k) { return 2 * numel(y) * k; }

OpCost tidal::estimateCost(Operation *op, const DeviceProfile &device) {
  OpCost cost;
  // Copies run on the copy streams (timed by the link, not here).
  if (isViewOp(op) || isa<ConstantOp, OffloadOp, PrefetchOp, WaitOp>(op))
    return cost;
  cost.kernel = true;
  for (Value v : op->getOperands())
    cost.bytes += bytesOf(v);
  for (Value v : op->getResults())
    cost.bytes += bytesOf(v);
  double elements = 0;
  for (Value v : op->getResults())
    elements = std::max(elements, numel(v));
  cost.flops =
      llvm::TypeSwitch<Operation *, double>(op)
          .Case(
              [](ConvOp o) { return convFlops(o.getOutput(), o.getWeight()); })
          .Case([](ConvBackwardDataOp o) {
            return convFlops(o.getGrad(), o.getWeight());
          })
          .Case([](ConvBackwardWeightsOp o) {
            return convFlops(o.getGrad(), o.getGradWeight());
          })
          .Case([](GemmOp o) {
            auto a = cast<ShapedType>(o.getA().getType());
            return productFlops(o.getOutput(),
                                a.getDimSize(o.getTransA() ? 0 : 1));
          })
          .Case([](MatMulOp o) {
            auto a = cast<ShapedType>(o.getLhs().getType());
            return productFlops(o.getOutput(), a.getDimSize(a.getRank() - 1));
          })
          .Case<BatchNormTrainingOp, BatchNormBackwardOp, LayerNormOp,
                LayerNormBackwardOp, SoftmaxOp, LogSoftmaxOp, SoftmaxBackwardOp,
                LogSoftmaxBackwardOp>([&](Operation *) { return 8 * elements; })
          .Case([&](FusedElementwiseOp o) {
            // One flop per element per step; the bytes are the chain's
            // inputs and results only.
            return elements * (o.getProgram().size() / kFusedStepWords);
          })
          .Default([&](Operation *) { return elements; });
  if (!device.opUs.empty())
    if (auto it = device.opUs.find(opSignature(op)); it != device.opUs.end()) {
      // What a call costs in a step beyond its time alone, if measured.
      auto seq = device.opUs.find(kSequenceOpKey);
      cost.us = std::max(
          0.0, it->second + (seq != device.opUs.end() ? seq->second : 0.0));
      return cost;
    }
  double computeUs = cost.flops / (device.gflops * 1e3);
  double memoryUs = cost.bytes / (device.gbytesPerS * 1e3);
  cost.us = device.opOverheadUs + std::max(computeUs, memoryUs);
  return cost;
}

std::string tidal::opSignature(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef() << "(";
  llvm::interleave(
      op->getOperandTypes(), os, [&](Type t) { t.print(os); }, ",");
  os << ")->(";
  llvm::interleave(
      op->getResultTypes(), os, [&](Type t) { t.print(os); }, ",");
  os << ")";
  bool first = true;
  for (NamedAttribute attr : op->getAttrs()) {
    if (attr.getName().strref().starts_with("tidal."))
      continue;
    os << (first ? "{" : ",") << attr.getName().strref() << "=";
    attr.getValue().print(os);
    first = false;
  }
  if (!first)
    os << "}";
  // Channel-blocked tensors (tidal-block-channels) run other kernels.
  SmallVector<Value> tensors(op->getOperands());
  llvm::append_range(tensors, op->getResults());
  bool any = false;
  for (auto [i, v] : llvm::enumerate(tensors))
    if (isChannelBlocked(v)) {
      os << (any ? "," : "[blocked:") << i;
      any = true;
    }
  if (any)
    os << "]";
  return text;
}
