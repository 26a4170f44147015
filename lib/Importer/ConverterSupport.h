//===- ConverterSupport.h - what the ONNX op converters share ---*- C++ -*-===//
//
// The view of one ONNX node that every converter works with (attributes
// with defaults, inputs, compile-time constant inputs, axis normalisation,
// op creation), shared by the converter files (OpConverters.cpp,
// ActivationConverters.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_CONVERTERSUPPORT_H
#define TIDAL_LIB_IMPORTER_CONVERTERSUPPORT_H

#include "ImporterImpl.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace mlir::tidal::importer {

/// What a converter works with.
struct Node {
  GraphImporter &g;
  const onnx::NodeProto &proto;
  std::string &error;

  OpBuilder &b() { return g.builder; }

  const onnx::AttributeProto *attr(llvm::StringRef name) const {
    return findAttribute(proto, name);
  }
  int64_t i(llvm::StringRef name, int64_t def) const {
    const auto *a = attr(name);
    return a ? a->i() : def;
  }
  float f(llvm::StringRef name, float def) const {
    const auto *a = attr(name);
    return a ? a->f() : def;
  }
  std::string s(llvm::StringRef name, llvm::StringRef def) const {
    const auto *a = attr(name);
    return a ? a->s() : def.str();
  }
  std::optional<llvm::SmallVector<int64_t>> ints(llvm::StringRef name) const {
    const auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return llvm::SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  bool has(int idx) const { return g.hasInput(proto, idx); }
  /// The number of outputs the graph uses (trailing unnamed ones dropped).
  int usedOutputs() const {
    int n = proto.output_size();
    while (n > 0 && proto.output(n - 1).empty())
      --n;
    return n;
  }

  LogicalResult fail(const llvm::Twine &msg) {
    error = msg.str();
    return failure();
  }
  /// Input `idx` as a value.
  FailureOr<Value> in(int idx) {
    if (!has(idx))
      return fail("input " + llvm::Twine(idx) + " is required");
    return g.input(proto, idx, error);
  }
  RankedTensorType type(int idx) { return g.inputType(proto, idx); }
  /// Input `idx` as a value that must be a float tensor.
  FailureOr<Value> floatIn(int idx) {
    auto v = in(idx);
    if (failed(v))
      return failure();
    if (!isa<FloatType>(type(idx).getElementType()))
      return fail("input must be a float tensor");
    return v;
  }
  /// Input `idx` as integer values, which must be known at compile time.
  FailureOr<llvm::SmallVector<int64_t>> constInts(int idx,
                                                  llvm::StringRef what) {
    DenseElementsAttr c = g.constInput(proto, idx);
    if (!c)
      return fail("input '" + what + "' ('" + proto.input(idx) +
                  "') must be known at compile time: an initializer, a "
                  "Constant or a computation on shapes");
    return intValues(c);
  }
  /// Normalizes a possibly negative axis against `rank`.
  FailureOr<int64_t> axis(int64_t a, int64_t rank) {
    if (a < -rank || a >= rank)
      return fail("axis " + llvm::Twine(a) + " is out of range for rank " +
                  llvm::Twine(rank));
    return a < 0 ? a + rank : a;
  }
  FailureOr<llvm::SmallVector<int64_t>> axes(llvm::ArrayRef<int64_t> raw,
                                             int64_t rank) {
    llvm::SmallVector<int64_t> out;
    for (int64_t a : raw) {
      auto n = axis(a, rank);
      if (failed(n))
        return failure();
      if (llvm::is_contained(out, *n))
        return fail("axis " + llvm::Twine(a) + " is repeated");
      out.push_back(*n);
    }
    llvm::sort(out);
    return out;
  }

  /// Creates `opName` on `operands` and binds the node's outputs.
  LogicalResult emit(llvm::StringRef opName, ValueRange operands,
                     llvm::ArrayRef<NamedAttribute> attrs, unsigned results) {
    Operation *op = g.create(opName, operands, attrs, results, error);
    if (!op)
      return failure();
    g.bindOutputs(proto, op->getResults());
    return success();
  }
  NamedAttribute named(llvm::StringRef n, Attribute a) {
    return b().getNamedAttr(n, a);
  }
  NamedAttribute arr(llvm::StringRef n, llvm::ArrayRef<int64_t> v) {
    return named(n, b().getDenseI64ArrayAttr(v));
  }
};

/// Gathers the required inputs `0..n-1` (and optional ones after them).
inline FailureOr<llvm::SmallVector<Value>> inputs(Node &n, int required,
                                                  int optional = 0) {
  llvm::SmallVector<Value> out;
  for (int i = 0; i < required + optional; ++i) {
    if (i >= required && !n.has(i))
      continue;
    if (i >= required && !out.empty() && (int)out.size() != i)
      return n.fail("optional input " + llvm::Twine(i) +
                    " given without the ones before it");
    auto v = n.in(i);
    if (failed(v))
      return failure();
    out.push_back(*v);
  }
  return out;
}

inline LogicalResult simple(Node &n, llvm::StringRef opName, int arity) {
  auto ops = inputs(n, arity);
  if (failed(ops))
    return failure();
  return n.emit(opName, *ops, {}, 1);
}

/// Builds ops for one node, stopping at the first failure.
struct Composer {
  Node &n;
  bool ok = true;

  Value op(llvm::StringRef name, ValueRange operands,
           llvm::ArrayRef<NamedAttribute> attrs = {}, unsigned result = 0,
           unsigned results = 1) {
    if (!ok)
      return {};
    Operation *o = n.g.create(name, operands, attrs, results, n.error);
    if (!o) {
      ok = false;
      return {};
    }
    return o->getResult(result);
  }
  Value reshape(Value v, llvm::ArrayRef<int64_t> shape) {
    return op(ReshapeOp::getOperationName(), {v}, {n.arr("shape", shape)});
  }
  /// A splat constant of `elt` shaped `shape`.
  Value splat(Type elt, llvm::ArrayRef<int64_t> shape, double value) {
    auto type = RankedTensorType::get(shape, elt);
    Attribute a = isa<FloatType>(elt)
                      ? Attribute(n.b().getFloatAttr(elt, value))
                      : Attribute(n.b().getIntegerAttr(elt, (int64_t)value));
    return op(ConstantOp::getOperationName(), {},
              {n.named("value", DenseElementsAttr::get(type, a))});
  }
  Value binary(llvm::StringRef name, Value a, Value b) {
    return op(name, {a, b});
  }
  /// An int64 constant shaped `shape` holding `v`.
  Value i64Const(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> v) {
    auto type = RankedTensorType::get(shape, n.b().getI64Type());
    return op(ConstantOp::getOperationName(), {},
              {n.named("value", DenseElementsAttr::get(type, v))});
  }
  /// A bool constant shaped `shape` holding `v`.
  Value boolConst(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<bool> v) {
    auto type = RankedTensorType::get(shape, n.b().getI1Type());
    return op(ConstantOp::getOperationName(), {},
              {n.named("value", DenseElementsAttr::get(type, v))});
  }
  Value gather(Value data, Value idx, int64_t axis) {
    return op(GatherOp::getOperationName(), {data, idx},
              {n.named("axis", n.b().getI64IntegerAttr(axis))});
  }
  LogicalResult bind(Value v) {
    if (!ok)
      return failure();
    n.g.bindOutputs(n.proto, v);
    return success();
  }
};

using Converter = std::function<LogicalResult(Node &)>;

/// Resolves strides/dilations/pads/auto_pad of a window over `kernel`'s
/// spatial dims of `x` (Conv, the pools; OpConverters.cpp).
LogicalResult windowAttrs(Node &n, RankedTensorType x,
                          llvm::ArrayRef<int64_t> kernel,
                          llvm::SmallVectorImpl<int64_t> &strides,
                          llvm::SmallVectorImpl<int64_t> &dilations,
                          llvm::SmallVectorImpl<int64_t> &pads);

/// Adds the converters of the activation family and the element-wise math
/// ops (ActivationConverters.cpp).
void addActivationConverters(llvm::StringMap<Converter> &converters);

/// Adds the converters of the comparisons, mask logic, Where, Expand and
/// the variadic Max, Min, Sum, Mean (LogicConverters.cpp).
void addLogicConverters(llvm::StringMap<Converter> &converters);

/// Adds the Pad converter (PadConverters.cpp).
void addPadConverters(llvm::StringMap<Converter> &converters);

/// Adds the converters of ops built from other tidal ops: Instance- and
/// GroupNormalization, Gelu, PRelu, Trilu, Tile, ReduceL1/L2/SumSquare,
/// ReduceLogSum, ReduceLogSumExp
/// (DecomposedConverters.cpp).
void addDecomposedConverters(llvm::StringMap<Converter> &converters);

/// Adds LSTM, GRU and RNN, unrolled over the sequence
/// (RecurrentConverters.cpp).
void addRecurrentConverters(llvm::StringMap<Converter> &converters);

/// Adds LpNormalization, MeanVarianceNormalization and Hardmax
/// (NormalizationConverters.cpp).
void addNormalizationConverters(llvm::StringMap<Converter> &converters);

/// Adds GridSample (as gathers) and AffineGrid (GridSampleConverter.cpp).
void addGridSampleConverter(llvm::StringMap<Converter> &converters);

/// Adds DeformConv as bilinear samples and a grouped matmul
/// (DeformConvConverter.cpp).
void addDeformConvConverter(llvm::StringMap<Converter> &converters);

/// Adds Det as Gaussian elimination with partial pivoting
/// (LinalgConverters.cpp).
void addLinalgConverters(llvm::StringMap<Converter> &converters);

/// Adds RandomNormal[Like], RandomUniform[Like] and Bernoulli
/// (RandomConverters.cpp).
void addRandomConverters(llvm::StringMap<Converter> &converters);

/// The axes an ONNX reduction (ReduceSum, ReduceMax, ReduceL2, ...) of node
/// `n` reduces, non-negative and sorted: its `axes` input (known at compile
/// time) or attribute; all axes when none are given, or none (the node is
/// the identity) with `noop_with_empty_axes` (ReduceConverters.cpp).
FailureOr<llvm::SmallVector<int64_t>> reduceAxes(Node &n);

/// Adds ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ArgMax and
/// ArgMin (ReduceConverters.cpp).
void addReduceConverters(llvm::StringMap<Converter> &converters);

/// Adds Einsum as transposes around one matmul (EinsumConverter.cpp).
void addEinsumConverter(llvm::StringMap<Converter> &converters);
/// Adds ConvTranspose as tidal.conv_backward_data, and Col2Im as one with
/// one-hot kernels (ConvTransposeConverter.cpp).
void addConvTransposeConverter(llvm::StringMap<Converter> &converters);
/// Adds Resize and Upsample as gathers along each resized axis, weighted
/// and summed for linear and cubic (ResizeConverter.cpp).
void addResizeConverters(llvm::StringMap<Converter> &converters);
/// Adds GatherElements, GatherND, ScatterElements, ScatterND and CumSum as
/// gathers, scatter-adds and a matmul (IndexingConverters.cpp).
void addIndexingConverters(llvm::StringMap<Converter> &converters);
/// Adds DepthToSpace, SpaceToDepth, GlobalMaxPool, Shrink and
/// ThresholdedRelu as compositions (RearrangeConverters.cpp).
void addRearrangeConverters(llvm::StringMap<Converter> &converters);

/// TopK with K above what k rounds of argmax handle well: a bitonic sorting
/// network over the axis (TopKSort.cpp); binds the node's two outputs.
LogicalResult topKBySort(Node &n, Value x, int64_t axis, int64_t k,
                         bool largest);

/// LpPool, GlobalLpPool and LRN as sums over windows through average_pool
/// (WindowConverters.cpp).
void addWindowConverters(llvm::StringMap<Converter> &converters);

/// DFT as one matmul with a constant matrix, STFT as a strided 1-D
/// convolution with the window times that matrix (SpectralConverters.cpp).
void addSpectralConverters(llvm::StringMap<Converter> &converters);

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_CONVERTERSUPPORT_H
