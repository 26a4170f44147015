//===- Descriptor.cpp - kernel call descriptors ---------------------------===//

#include "tidal/Conversion/TidalToRuntime/Descriptor.h"

#include "tidal/Conversion/TidalToRuntime/KernelOps.h"
#include "tidal/Dialect/Tidal/IR/ChannelLayout.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "tidalrt/tidalrt.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tidal;

/// Ops whose last ODS operand is Optional: their full operand count.
static unsigned fullOperandCount(Operation *op) {
  return llvm::StringSwitch<unsigned>(op->getName().stripDialect())
      .Cases("gemm", "conv", "layer_norm", "softmax_cross_entropy_loss",
             "nll_loss", "nll_loss_backward", 3)
      .Case("softmax_cross_entropy_loss_backward", 4)
      .Default(0);
}

SmallVector<Value> tidal::kernelTensors(Operation *op) {
  SmallVector<Value> tensors(op->getOperands());
  unsigned full = fullOperandCount(op);
  while (tensors.size() < full)
    tensors.push_back(Value());
  llvm::append_range(tensors, op->getResults());
  return tensors;
}

static LogicalResult encodeAttr(Operation *op, StringRef name, Attribute attr,
                                SmallVectorImpl<int64_t> &words) {
  if (!attr) {
    words.push_back(TIDALRT_ATTR_ABSENT);
    return success();
  }
  if (auto b = dyn_cast<BoolAttr>(attr)) {
    words.append({TIDALRT_ATTR_INT, b.getValue() ? 1 : 0});
    return success();
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    words.append({TIDALRT_ATTR_INT, i.getValue().getSExtValue()});
    return success();
  }
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    double d = f.getValueAsDouble();
    int64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    words.append({TIDALRT_ATTR_FLOAT, bits});
    return success();
  }
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr)) {
    words.append({TIDALRT_ATTR_INTS, (int64_t)a.size()});
    llvm::append_range(words, a.asArrayRef());
    return success();
  }
  // Enums (#tidal<reduction ...>) are I32EnumAttr-backed dialect attributes
  // whose printed value is the case name; they convert through their
  // integer storage.
  if (auto reduction = dyn_cast<ReductionAttr>(attr)) {
    words.append({TIDALRT_ATTR_INT, (int64_t)reduction.getValue()});
    return success();
  }
  if (auto mode = dyn_cast<PadModeAttr>(attr)) {
    words.append({TIDALRT_ATTR_INT, (int64_t)mode.getValue()});
    return success();
  }
  return op->emitError() << "attribute '" << name
                         << "' cannot be passed to the runtime: " << attr;
}

FailureOr<SmallVector<int64_t>> tidal::encodeDescriptor(Operation *op,
                                                        int64_t index) {
  SmallVector<int64_t> words = {index, 0};
  SmallVector<Value> tensors = kernelTensors(op);
  words[1] = (int64_t)tensors.size();
  for (Value v : tensors) {
    if (!v) {
      words.append({TIDALRT_ELEMENT_TYPE_F32, -1});
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(v.getType());
    std::optional<int64_t> code =
        type ? runtimeElementType(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !code)
      return op->emitError() << "tensor type " << v.getType()
                             << " has no runtime representation";
    int64_t layout = isChannelBlocked(v) ? TIDALRT_LAYOUT_CHANNEL_BLOCKED
                                         : TIDALRT_LAYOUT_DENSE;
    words.push_back(*code | layout << TIDALRT_LAYOUT_SHIFT);
    words.push_back(type.getRank());
    llvm::append_range(words, type.getShape());
  }

  std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
  if (!info)
    return op->emitError("unregistered op");
  NamedAttrList defaults;
  info->populateDefaultAttrs(defaults);
  SmallVector<StringRef> names;
  for (StringAttr name : info->getAttributeNames())
    if (!name.getValue().ends_with("SegmentSizes"))
      names.push_back(name.getValue());
  llvm::sort(names);
  words.push_back((int64_t)names.size());
  for (StringRef name : names) {
    Attribute attr = op->getInherentAttr(name).value_or(Attribute());
    if (!attr)
      attr = defaults.get(name);
    if (failed(encodeAttr(op, name, attr, words)))
      return failure();
  }
  return words;
}
