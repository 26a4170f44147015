//===- EvalSupport.h - shared state and index helpers of the evaluator ----===//
//
// Each op family lives in its own file and exposes one dispatcher; the
// driver (Evaluator.cpp) pre-allocates every result from its type, calls the
// dispatchers in turn, and rounds the results afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_EVALUATOR_EVALSUPPORT_H
#define TIDAL_LIB_EVALUATOR_EVALSUPPORT_H

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Evaluator/Evaluator.h"

#include "llvm/ADT/DenseMap.h"

#include <random>

namespace mlir::tidal::eval {

/// The values computed so far and the random engine of one evaluation.
struct EvalState {
  llvm::DenseMap<Value, Tensor> values;
  std::mt19937_64 rng;

  explicit EvalState(uint64_t seed) : rng(seed) {}
  const Tensor &get(Value v) const { return values.find(v)->second; }
};

/// What a family dispatcher returns: failure (a diagnostic was emitted),
/// true (the op was evaluated into `results`), false (not in this family).
using Handled = FailureOr<bool>;

Handled evalElementwiseOp(Operation *op, EvalState &st,
                          MutableArrayRef<Tensor> results);
Handled evalActivationOp(Operation *op, EvalState &st,
                         MutableArrayRef<Tensor> results);
Handled evalLogicOp(Operation *op, EvalState &st,
                    MutableArrayRef<Tensor> results);
Handled evalPadOp(Operation *op, EvalState &st,
                  MutableArrayRef<Tensor> results);
Handled evalLinalgOp(Operation *op, EvalState &st,
                     MutableArrayRef<Tensor> results);
Handled evalConvPoolOp(Operation *op, EvalState &st,
                       MutableArrayRef<Tensor> results);
Handled evalNormOp(Operation *op, EvalState &st,
                   MutableArrayRef<Tensor> results);
Handled evalLossOp(Operation *op, EvalState &st,
                   MutableArrayRef<Tensor> results);
Handled evalShapeOp(Operation *op, EvalState &st,
                    MutableArrayRef<Tensor> results);
Handled evalOptimizerOp(Operation *op, EvalState &st,
                        MutableArrayRef<Tensor> results);

/// Adapts a LogicalResult kernel to a dispatcher's answer.
inline Handled done(LogicalResult r) {
  if (failed(r))
    return failure();
  return true;
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

inline int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// Row-major strides of `shape`.
inline llvm::SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The multi-index of flat position `flat` in `shape`.
inline void unravel(int64_t flat, ArrayRef<int64_t> shape,
                    llvm::SmallVectorImpl<int64_t> &idx) {
  idx.assign(shape.size(), 0);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
}

/// The flat position of multi-index `idx` with `strides`.
inline int64_t ravel(ArrayRef<int64_t> idx, ArrayRef<int64_t> strides) {
  int64_t flat = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    flat += idx[i] * strides[i];
  return flat;
}

/// The flat position in a tensor of shape `in` that NumPy broadcasting maps
/// result multi-index `outIdx` to (dimensions aligned at the right).
inline int64_t broadcastFlat(ArrayRef<int64_t> outIdx, ArrayRef<int64_t> in) {
  int64_t flat = 0, stride = 1;
  size_t offset = outIdx.size() - in.size();
  for (int64_t i = static_cast<int64_t>(in.size()) - 1; i >= 0; --i) {
    if (in[i] != 1)
      flat += outIdx[offset + i] * stride;
    stride *= in[i];
  }
  return flat;
}

/// Whether `t`'s element type is a floating-point type.
inline bool isFloat(const Tensor &t) { return isa<FloatType>(t.elementType); }

/// A double-valued attribute of a float type (F32Attr or F64Attr).
inline double toDouble(const llvm::APFloat &f) {
  bool lost = false;
  llvm::APFloat d = f;
  d.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return d.convertToDouble();
}

} // namespace mlir::tidal::eval

#endif // TIDAL_LIB_EVALUATOR_EVALSUPPORT_H
