//===- ReduceConverters.cpp - ONNX reductions over axes, ArgMax, ArgMin ---===//
//
// ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd become the
// tidal reduction of the same name over the axes that reduceAxes resolves
// (the `axes` attribute, or from opset 18 (ReduceSum: 13) the `axes` input
// known at compile time; none given means all, or the identity with
// `noop_with_empty_axes`). ArgMax and ArgMin keep their attributes, the
// axis made non-negative. The compositions built on reduceAxes (ReduceL1,
// L2, SumSquare, LogSum, LogSumExp) are in DecomposedConverters.cpp.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

FailureOr<llvm::SmallVector<int64_t>> importer::reduceAxes(Node &n) {
  int64_t rank = n.type(0).getRank();
  llvm::SmallVector<int64_t> raw;
  if (n.has(1)) {
    auto c = n.constInts(1, "axes");
    if (failed(c))
      return failure();
    raw = *c;
  } else if (auto a = n.ints("axes")) {
    raw = *a;
  }
  if (raw.empty() && n.i("noop_with_empty_axes", 0))
    return raw;
  if (raw.empty())
    for (int64_t d = 0; d < rank; ++d)
      raw.push_back(d);
  return n.axes(raw, rank);
}

namespace {

/// ONNX's ReduceMax/ReduceMin-20 and ArgMax/ArgMin take bool tensors too.
LogicalResult rejectBool(Node &n) {
  if (n.type(0).getElementType().isInteger(1))
    return n.fail(n.proto.op_type() + " of a bool tensor is not supported");
  return success();
}

LogicalResult convertReduce(Node &n, llvm::StringRef opName) {
  auto x = n.in(0);
  if (failed(x) || failed(rejectBool(n)))
    return failure();
  auto axes = reduceAxes(n);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return n.emit(IdentityOp::getOperationName(), {*x}, {}, 1);
  return n.emit(opName, {*x},
                {n.arr("axes", *axes),
                 n.named("keepdims", n.b().getBoolAttr(n.i("keepdims", 1)))},
                1);
}

LogicalResult convertArgReduce(Node &n, llvm::StringRef opName) {
  auto x = n.in(0);
  if (failed(x) || failed(rejectBool(n)))
    return failure();
  auto axis = n.axis(n.i("axis", 0), n.type(0).getRank());
  if (failed(axis))
    return failure();
  auto flag = [&](llvm::StringRef name, int64_t def) {
    return n.named(name, n.b().getBoolAttr(n.i(name, def)));
  };
  return n.emit(opName, {*x},
                {n.named("axis", n.b().getI64IntegerAttr(*axis)),
                 flag("keepdims", 1), flag("select_last_index", 0)},
                1);
}

} // namespace

void importer::addReduceConverters(llvm::StringMap<Converter> &map) {
  auto reduce = [](llvm::StringRef opName) -> Converter {
    return [opName](Node &n) { return convertReduce(n, opName); };
  };
  map["ReduceSum"] = reduce(ReduceSumOp::getOperationName());
  map["ReduceMean"] = reduce(ReduceMeanOp::getOperationName());
  map["ReduceMax"] = reduce(ReduceMaxOp::getOperationName());
  map["ReduceMin"] = reduce(ReduceMinOp::getOperationName());
  map["ReduceProd"] = reduce(ReduceProdOp::getOperationName());
  map["ArgMax"] = [](Node &n) {
    return convertArgReduce(n, ArgMaxOp::getOperationName());
  };
  map["ArgMin"] = [](Node &n) {
    return convertArgReduce(n, ArgMinOp::getOperationName());
  };
}
