//===- Evaluator.h - reference evaluator of the tidal dialect ---*- C++ -*-===//
//
// The oracle for differential tests (like XLA's HloEvaluator): it runs a
// func.func of tidal ops on host tensors with plain loops, computing every op
// in double and rounding its floating-point results to their element type, so
// that it mimics a float32 execution with exact accumulation. Never a
// production backend.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_EVALUATOR_EVALUATOR_H
#define TIDAL_EVALUATOR_EVALUATOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::tidal::eval {

/// A dense row-major host tensor. Integers and i1 are held as exact doubles.
struct Tensor {
  llvm::SmallVector<int64_t> shape;
  mlir::Type elementType;
  std::vector<double> data;

  /// The number of elements the shape holds.
  int64_t numElements() const;
};

struct EvalOptions {
  /// Seeds the std::mt19937_64 that training-mode dropout draws from.
  uint64_t seed = 0;
};

/// Evaluates `func` on `args` (one per argument, matching its type exactly)
/// and returns the values of its func.return. On failure emits an error
/// diagnostic at the failing op, naming it.
FailureOr<llvm::SmallVector<Tensor>> evaluate(func::FuncOp func,
                                              llvm::ArrayRef<Tensor> args,
                                              const EvalOptions &opts = {});

/// A zero-filled tensor of the static shape and element type of `type`.
Tensor makeTensor(RankedTensorType type);

/// Rounds `value` to the precision of `elementType`: f32 through float,
/// f16/bf16 through APFloat, integers truncated towards zero, i1 to 0 or 1.
double roundTo(Type elementType, double value);

} // namespace mlir::tidal::eval

#endif // TIDAL_EVALUATOR_EVALUATOR_H
