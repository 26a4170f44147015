//===- FoldSupport.h - what the compile-time folds share ------------------===//
//
// The values of folded constants (Vals), element picking, broadcasting
// binary arithmetic, and the call each group of folds receives
// (ShapeFolding.cpp dispatches to FoldElementwise.cpp and
// FoldDataMovement.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_FOLDSUPPORT_H
#define TIDAL_LIB_IMPORTER_FOLDSUPPORT_H

#include "ImporterImpl.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::tidal::importer::fold {

/// Largest constant the folder materializes (shape tensors are tiny).
constexpr int64_t kMaxFoldElements = 1 << 16;

/// An integer attribute of `node`, or `def`.
int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name, int64_t def);

/// Row-major strides of a shape.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// Values of a constant as doubles or integers, with its shape.
struct Vals {
  RankedTensorType type;
  bool isFloat;
  llvm::SmallVector<double> f;
  llvm::SmallVector<int64_t> i;

  explicit Vals(DenseElementsAttr a)
      : type(cast<RankedTensorType>(a.getType())),
        isFloat(isa<FloatType>(a.getElementType())) {
    if (isFloat)
      f = floatValues(a);
    else
      i = intValues(a);
  }
  double at(int64_t k) const { return isFloat ? f[k] : double(i[k]); }
  int64_t iat(int64_t k) const { return isFloat ? int64_t(f[k]) : i[k]; }
};

/// Builds a result of `shape` by picking source element `pick(k)` of `v`.
DenseElementsAttr gatherElements(const Vals &v, llvm::ArrayRef<int64_t> shape,
                                 llvm::function_ref<int64_t(int64_t)> pick);

/// Element-wise binary op (Add, Sub, Mul, Div, Equal, Less, Greater, Pow)
/// with broadcasting over two constants; null with `error` set on failure.
DenseElementsAttr binary(const Vals &a, const Vals &b, llvm::StringRef op,
                         std::string &error);

/// `v` broadcast to `shape` (adding zeros), or nothing with `error` set
/// when it does not broadcast to it.
std::optional<Vals> broadcastTo(const Vals &v, llvm::ArrayRef<int64_t> shape,
                                std::string &error);

/// `a` and `b` broadcast to their common shape, or nothing with `error` set
/// when they do not broadcast.
std::optional<std::pair<Vals, Vals>> broadcastPair(const Vals &a, const Vals &b,
                                                   std::string &error);

/// One node to fold: its known inputs (null for an omitted optional one;
/// the first is present), where its results go, and its error.
struct FoldCall {
  MLIRContext *ctx;
  const onnx::NodeProto &node;
  llvm::ArrayRef<DenseElementsAttr> in;
  llvm::SmallVectorImpl<DenseElementsAttr> &results;
  std::string &error;
  Vals x; // in[0]

  /// `a` counted from the end when negative.
  static int64_t normAxis(int64_t a, int64_t r) { return a < 0 ? a + r : a; }
  /// Whether `a` is outside [0, r), setting `error` if so.
  bool badAxis(int64_t a, int64_t r) {
    if (a >= 0 && a < r)
      return false;
    error = "axis out of range for a rank-" + std::to_string(r) + " input";
    return true;
  }
};

/// Identity, Neg, Sqrt, Abs, Relu, Ceil, Floor, Cast, Add/Sub/Mul/Div/Pow and
/// the comparisons, Mod, Not/And/Or, ConstantOfShape, Range, Where. False when
/// `c.node` is none of these; else true, with the results or `c.error` set.
bool foldElementwise(FoldCall &c);

/// ScatterND, Gather, Unsqueeze/Squeeze, Reshape/Flatten, Concat, Slice,
/// Expand, Split, Transpose; as foldElementwise.
bool foldDataMovement(FoldCall &c);

/// ReduceProd, ReduceSum, ReduceMax, ReduceMin, CumSum of integer constants; as
/// foldElementwise.
bool foldReduce(FoldCall &c);

/// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
/// (FoldSpectral.cpp); as foldElementwise.
bool foldSpectral(FoldCall &c);

/// The most elements an EyeLike constant may have (16 MiB of float32).
constexpr int64_t kMaxEyeElements = int64_t(1) << 22;

/// EyeLike of a static `like` type: ones on diagonal `k`, `dtype` or
/// `like`'s element type. Always true (results or `error` set).
bool foldEyeLike(MLIRContext *ctx, const onnx::NodeProto &node,
                 RankedTensorType like,
                 llvm::SmallVectorImpl<DenseElementsAttr> &results,
                 std::string &error);

} // namespace mlir::tidal::importer::fold

#endif // TIDAL_LIB_IMPORTER_FOLDSUPPORT_H
