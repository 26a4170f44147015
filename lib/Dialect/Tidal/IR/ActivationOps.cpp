//===- ActivationOps.cpp - verifiers of the activation family -------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;

LogicalResult ClipOp::verify() {
  float lo = getMin().convertToFloat(), hi = getMax().convertToFloat();
  if (std::isnan(lo) || std::isnan(hi))
    return emitOpError("bounds must not be NaN, got min ")
           << lo << " and max " << hi;
  if (lo > hi)
    return emitOpError("min ") << lo << " is greater than max " << hi;
  return success();
}

LogicalResult CeluOp::verify() {
  if (getAlpha().convertToFloat() == 0.0f)
    return emitOpError("alpha must not be 0 (it divides the input)");
  return success();
}
