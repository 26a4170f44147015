//===- TidalDialect.cpp - the tidal dialect and its attributes ------------===//

#include "tidal/Dialect/Tidal/IR/TidalDialect.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;

#include "tidal/Dialect/Tidal/IR/TidalEnums.cpp.inc"
#include "tidal/Dialect/Tidal/IR/TidalOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tidal/Dialect/Tidal/IR/TidalAttrs.cpp.inc"

DictionaryAttr tidal::nameAndRoleAttrs(MLIRContext *ctx, StringAttr name,
                                       ArgRole role) {
  SmallVector<NamedAttribute, 2> attrs;
  if (name)
    attrs.emplace_back(StringAttr::get(ctx, kNameAttr), name);
  attrs.emplace_back(StringAttr::get(ctx, kRoleAttr),
                     ArgRoleAttr::get(ctx, role));
  return DictionaryAttr::get(ctx, attrs);
}

void TidalDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tidal/Dialect/Tidal/IR/TidalAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tidal/Dialect/Tidal/IR/TidalOps.cpp.inc"
      >();
}

bool tidal::isViewOp(Operation *op) {
  return isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, IdentityOp>(op);
}

bool tidal::isHostPlaced(Operation *op) {
  // A discardable attribute: not looked up among the op's inherent ones
  // (the liveness analysis asks this of every op, thousands of times on a
  // deep net).
  auto device =
      dyn_cast_or_null<StringAttr>(op->getDiscardableAttr(kDeviceAttr));
  return device && device.getValue() == kHostValue;
}

bool tidal::isHostArgument(FunctionOpInterface func, unsigned argNumber) {
  auto space = func.getArgAttrOfType<StringAttr>(argNumber, kSpaceAttr);
  return space && space.getValue() == kHostValue;
}

bool tidal::isHostResult(FunctionOpInterface func, unsigned resultNumber) {
  auto space = func.getResultAttrOfType<StringAttr>(resultNumber, kSpaceAttr);
  return space && space.getValue() == kHostValue;
}

bool tidal::isOptimizerUpdate(Operation *op) {
  return isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp, OnnxMomentumOp,
             OnnxAdagradOp, OnnxAdamOp>(op);
}

Value tidal::optimizerGradient(Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp, OnnxMomentumOp,
            OnnxAdagradOp, OnnxAdamOp>(
          [](auto update) -> Value { return update.getGrad(); })
      .Default([](Operation *) { return Value(); });
}

bool tidal::isCollectiveOp(Operation *op) {
  return isa<AllReduceStartOp, AllReduceWaitOp, AllGatherStartOp,
             AllGatherWaitOp, ReduceScatterStartOp, ReduceScatterWaitOp>(op);
}

int64_t tidal::tensorByteSize(ShapedType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

void tidal::assignRandomStreams(Operation *scope) {
  // Dropout and the random draws share one numbering.
  auto isRandom = [](Operation *op) {
    return isa<DropoutOp, RandomNormalOp, RandomUniformOp>(op);
  };
  int64_t next = 0;
  scope->walk([&](Operation *op) {
    if (!isRandom(op))
      return;
    if (auto stream = op->getAttrOfType<IntegerAttr>("stream"))
      next = std::max(next, stream.getInt() + 1);
  });
  Builder b(scope->getContext());
  scope->walk([&](Operation *op) {
    if (isRandom(op) && !op->getAttr("stream"))
      op->setAttr("stream", b.getI64IntegerAttr(next++));
  });
}
