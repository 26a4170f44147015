//===- Evaluator.cpp - the evaluator's driver: walk, dispatch, round ------===//

#include "EvalSupport.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

int64_t Tensor::numElements() const { return product(shape); }

Tensor eval::makeTensor(RankedTensorType type) {
  Tensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.elementType = type.getElementType();
  t.data.assign(product(t.shape), 0.0);
  return t;
}

double eval::roundTo(Type elementType, double value) {
  if (elementType.isF64())
    return value;
  if (elementType.isF32())
    return static_cast<double>(static_cast<float>(value));
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    llvm::APFloat f(value);
    bool lost = false;
    f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return toDouble(f);
  }
  if (elementType.isInteger(1))
    return value != 0.0 ? 1.0 : 0.0;
  if (isa<IntegerType, IndexType>(elementType))
    return std::isfinite(value) ? std::trunc(value) : value;
  return value;
}

/// Checks one argument against the function's argument type.
static LogicalResult checkArgument(func::FuncOp func, unsigned i,
                                   const Tensor &arg) {
  auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
  if (!type || !type.hasStaticShape())
    return func.emitError("argument ")
           << i << " has type " << func.getArgumentTypes()[i]
           << "; the evaluator needs statically shaped tensors";
  if (type.getElementType() != arg.elementType ||
      ArrayRef<int64_t>(arg.shape) != type.getShape()) {
    InFlightDiagnostic diag = func.emitError("argument ");
    diag << i << " expects " << type << ", got ";
    if (arg.elementType)
      diag << arg.elementType;
    else
      diag << "an untyped tensor";
    return diag << " " << shapeToString(arg.shape);
  }
  if (static_cast<int64_t>(arg.data.size()) != arg.numElements())
    return func.emitError("argument ")
           << i << " holds " << arg.data.size() << " values for shape "
           << shapeToString(arg.shape);
  return success();
}

/// Evaluates one op into pre-allocated results.
static LogicalResult evalOp(Operation *op, EvalState &st,
                            MutableArrayRef<Tensor> results) {
  if (isa<GradientOp>(op))
    return op->emitOpError(
        "tidal.gradient must be expanded by --tidal-autodiff first");
  for (auto fn : {evalElementwiseOp, evalActivationOp, evalLogicOp, evalPadOp,
                  evalLinalgOp, evalConvPoolOp, evalNormOp, evalLossOp,
                  evalShapeOp, evalOptimizerOp}) {
    Handled h = fn(op, st, results);
    if (failed(h))
      return failure();
    if (*h)
      return success();
  }
  return op->emitOpError("is not supported by the reference evaluator");
}

FailureOr<SmallVector<Tensor>> eval::evaluate(func::FuncOp func,
                                              ArrayRef<Tensor> args,
                                              const EvalOptions &opts) {
  if (func.isExternal())
    return func.emitError("cannot evaluate a function without a body");
  if (args.size() != func.getNumArguments())
    return func.emitError("expects ")
           << func.getNumArguments() << " arguments, got " << args.size();
  Block &body = func.getBody().front();
  EvalState st(opts.seed);
  for (unsigned i = 0; i < args.size(); ++i) {
    if (failed(checkArgument(func, i, args[i])))
      return failure();
    st.values[body.getArgument(i)] = args[i];
  }

  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Tensor> out;
      for (Value v : ret.getOperands())
        out.push_back(st.get(v));
      return out;
    }
    SmallVector<Tensor> results;
    for (Type t : op.getResultTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape())
        return op.emitOpError("has result type ")
               << t << "; the evaluator needs statically shaped tensors";
      results.push_back(makeTensor(rt));
    }
    for (Value v : op.getOperands())
      if (!st.values.count(v))
        return op.emitOpError("uses a value the evaluator has not computed");
    if (failed(evalOp(&op, st, results)))
      return failure();
    for (auto [value, t] : llvm::zip(op.getResults(), results)) {
      for (double &x : t.data)
        x = roundTo(t.elementType, x);
      st.values[value] = std::move(t);
    }
  }
  return func.emitError("has no func.return");
}
