//===- OpConverters.cpp - ONNX nodes to tidal ops -------------------------===//
//
// One converter per ONNX operator. Each resolves ONNX's conventions (default
// and negative axes, auto_pad, Reshape's 0 and -1, Slice clamping, inputs
// that must be compile-time constants) into the explicit attributes of the
// tidal op; the op itself infers and checks its result types.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"
#include "tidal/Importer/OpVersions.h"

#include <functional>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

LogicalResult importer::windowAttrs(Node &n, RankedTensorType x,
                                    llvm::ArrayRef<int64_t> kernel,
                                    llvm::SmallVectorImpl<int64_t> &strides,
                                    llvm::SmallVectorImpl<int64_t> &dilations,
                                    llvm::SmallVectorImpl<int64_t> &pads) {
  size_t k = kernel.size();
  if (x.getRank() != int64_t(k) + 2)
    return n.fail("input of rank " + llvm::Twine(x.getRank()) + " does not " +
                  "match a " + llvm::Twine(k) + "-D kernel");
  strides.assign(n.ints("strides").value_or(llvm::SmallVector<int64_t>(k, 1)));
  dilations.assign(
      n.ints("dilations").value_or(llvm::SmallVector<int64_t>(k, 1)));
  pads.assign(n.ints("pads").value_or(llvm::SmallVector<int64_t>(2 * k, 0)));
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return n.fail("strides, dilations and pads do not match the kernel's " +
                  llvm::Twine(k) + " spatial dims");
  std::string autoPad = n.s("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return success();
  if (autoPad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
    return success();
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return n.fail("auto_pad '" + autoPad + "' is not valid");
  for (size_t d = 0; d < k; ++d) {
    if (strides[d] <= 0)
      return n.fail("strides must be positive");
    int64_t in = x.getDimSize(2 + d);
    int64_t out = (in + strides[d] - 1) / strides[d];
    int64_t span = (kernel[d] - 1) * dilations[d] + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + span - in);
    int64_t small = total / 2, big = total - small;
    pads[d] = autoPad == "SAME_UPPER" ? small : big;
    pads[k + d] = autoPad == "SAME_UPPER" ? big : small;
  }
  return success();
}

namespace {

//===----------------------------------------------------------------------===//
// Windowed ops
//===----------------------------------------------------------------------===//

LogicalResult convertConv(Node &n) {
  auto ops = inputs(n, 2, 1);
  if (failed(ops))
    return failure();
  auto x = n.type(0), w = n.type(1);
  if (w.getRank() < 3)
    return n.fail("weight must have rank 3 or more");
  llvm::SmallVector<int64_t> kernel(w.getShape().drop_front(2));
  if (auto ks = n.ints("kernel_shape"); ks && *ks != kernel)
    return n.fail("kernel_shape [" + shapeToString(*ks) +
                  "] does not match the weight's spatial shape [" +
                  shapeToString(kernel) + "]");
  llvm::SmallVector<int64_t> strides, dilations, pads;
  if (failed(windowAttrs(n, x, kernel, strides, dilations, pads)))
    return failure();
  return n.emit(ConvOp::getOperationName(), *ops,
                {n.arr("strides", strides), n.arr("pads", pads),
                 n.arr("dilations", dilations),
                 n.named("group", n.b().getI64IntegerAttr(n.i("group", 1)))},
                1);
}

LogicalResult convertPool(Node &n, bool isMax) {
  auto ops = inputs(n, 1);
  if (failed(ops))
    return failure();
  if (isMax && n.usedOutputs() > 1)
    return n.fail("the Indices output is not supported");
  auto kernel = n.ints("kernel_shape");
  if (!kernel)
    return n.fail("attribute 'kernel_shape' is required");
  llvm::SmallVector<int64_t> strides, dilations, pads;
  if (failed(windowAttrs(n, n.type(0), *kernel, strides, dilations, pads)))
    return failure();
  llvm::SmallVector<NamedAttribute> attrs{
      n.arr("kernel_shape", *kernel), n.arr("strides", strides),
      n.arr("pads", pads),
      n.named("ceil_mode", n.b().getBoolAttr(n.i("ceil_mode", 0)))};
  if (isMax) {
    attrs.push_back(n.arr("dilations", dilations));
    return n.emit(MaxPoolOp::getOperationName(), *ops, attrs, 1);
  }
  if (llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return n.fail("dilations are not supported for AveragePool");
  attrs.push_back(n.named("count_include_pad",
                          n.b().getBoolAttr(n.i("count_include_pad", 0))));
  return n.emit(AveragePoolOp::getOperationName(), *ops, attrs, 1);
}

//===----------------------------------------------------------------------===//
// Normalization and dropout
//===----------------------------------------------------------------------===//

LogicalResult convertBatchNorm(Node &n) {
  auto ops = inputs(n, 5);
  if (failed(ops))
    return failure();
  // Opset 14+ says training with training_mode; before, extra outputs do.
  bool training =
      n.g.opset >= 14 ? n.i("training_mode", 0) != 0 : n.usedOutputs() > 1;
  auto eps = n.named("epsilon", n.b().getF32FloatAttr(n.f("epsilon", 1e-5f)));
  if (!training) {
    if (n.usedOutputs() > 1)
      return n.fail("running statistics outputs need training_mode=1");
    return n.emit(BatchNormInferenceOp::getOperationName(), *ops, {eps}, 1);
  }
  // Opset-9..13 saved mean/var outputs are the batch statistics results.
  auto mom = n.named("momentum", n.b().getF32FloatAttr(n.f("momentum", 0.9f)));
  return n.emit(BatchNormTrainingOp::getOperationName(), *ops, {eps, mom}, 5);
}

LogicalResult convertLayerNorm(Node &n) {
  auto ops = inputs(n, 2, 1);
  if (failed(ops))
    return failure();
  auto ax = n.axis(n.i("axis", -1), n.type(0).getRank());
  if (failed(ax))
    return failure();
  return n.emit(
      LayerNormOp::getOperationName(), *ops,
      {n.named("axis", n.b().getI64IntegerAttr(*ax)),
       n.named("epsilon", n.b().getF32FloatAttr(n.f("epsilon", 1e-5f)))},
      3);
}

LogicalResult convertDropout(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  float ratio = 0.5f;
  bool training = false;
  if (n.has(1)) {
    DenseElementsAttr r = n.g.constInput(n.proto, 1);
    if (!r || r.getNumElements() != 1)
      return n.fail("input 'ratio' must be a scalar known at compile time");
    ratio = float(floatValues(r)[0]);
  }
  if (n.has(2)) {
    DenseElementsAttr t = n.g.constInput(n.proto, 2);
    if (!t || t.getNumElements() != 1)
      return n.fail(
          "input 'training_mode' must be a scalar known at compile time");
    training = intValues(t)[0] != 0;
  }
  llvm::SmallVector<NamedAttribute> attrs{
      n.named("ratio", n.b().getF32FloatAttr(ratio)),
      n.named("training", n.b().getBoolAttr(training))};
  if (const auto *seed = n.attr("seed"))
    attrs.push_back(n.named("seed", n.b().getI64IntegerAttr(seed->i())));
  return n.emit(DropoutOp::getOperationName(), {*x}, attrs, 2);
}

//===----------------------------------------------------------------------===//
// Losses and softmax
//===----------------------------------------------------------------------===//

LogicalResult convertSoftmax(Node &n, llvm::StringRef opName) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto ax = n.axis(n.i("axis", -1), n.type(0).getRank());
  if (failed(ax))
    return failure();
  return n.emit(opName, {*x}, {n.named("axis", n.b().getI64IntegerAttr(*ax))},
                1);
}

LogicalResult convertClassLoss(Node &n, bool softmax) {
  auto ops = inputs(n, 2, 1);
  if (failed(ops))
    return failure();
  std::string red = n.s("reduction", "mean");
  Reduction r;
  if (red == "none")
    r = Reduction::none;
  else if (red == "sum")
    r = Reduction::sum;
  else if (red == "mean")
    r = Reduction::mean;
  else
    return n.fail("reduction '" + red + "' is not one of none, sum, mean");
  llvm::SmallVector<NamedAttribute> attrs{
      n.named("reduction", ReductionAttr::get(n.g.ctx, r))};
  if (const auto *ii = n.attr("ignore_index"))
    attrs.push_back(n.named("ignore_index", n.b().getI64IntegerAttr(ii->i())));
  return n.emit(softmax ? SoftmaxCrossEntropyLossOp::getOperationName()
                        : NllLossOp::getOperationName(),
                *ops, attrs, softmax ? 2 : 1);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult convertReshape(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto shape = n.constInts(1, "shape");
  if (failed(shape))
    return failure();
  auto in = n.type(0);
  bool allowZero = n.i("allowzero", 0);
  int64_t known = 1, infer = -1;
  llvm::SmallVector<int64_t> out(*shape);
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 0 && !allowZero) {
      if (int64_t(d) >= in.getRank())
        return n.fail("shape entry 0 at position " + llvm::Twine(d) +
                      " copies a dimension the input does not have");
      out[d] = in.getDimSize(d);
    }
    if (out[d] == -1) {
      if (infer >= 0)
        return n.fail("shape has more than one -1");
      infer = d;
    } else if (out[d] < 0) {
      return n.fail("shape entry " + llvm::Twine(out[d]) + " is invalid");
    } else {
      known *= out[d];
    }
  }
  if (infer >= 0) {
    if (known == 0 || in.getNumElements() % known)
      return n.fail("cannot infer the -1 in shape [" + shapeToString(*shape) +
                    "] for an input of shape " + shapeToString(in.getShape()));
    out[infer] = in.getNumElements() / known;
  }
  return n.emit(ReshapeOp::getOperationName(), {*x}, {n.arr("shape", out)}, 1);
}

LogicalResult convertFlatten(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  int64_t rank = n.type(0).getRank(), a = n.i("axis", 1);
  if (a < -rank || a > rank)
    return n.fail("axis " + llvm::Twine(a) + " is out of range for rank " +
                  llvm::Twine(rank));
  return n.emit(
      FlattenOp::getOperationName(), {*x},
      {n.named("axis", n.b().getI64IntegerAttr(a < 0 ? a + rank : a))}, 1);
}

LogicalResult convertSqueezeLike(Node &n, bool squeeze) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  llvm::SmallVector<int64_t> raw;
  bool given = false;
  if (n.has(1)) {
    auto c = n.constInts(1, "axes");
    if (failed(c))
      return failure();
    raw = *c;
    given = true;
  } else if (auto a = n.ints("axes")) {
    raw = *a;
    given = true;
  }
  if (!squeeze && !given)
    return n.fail("input 'axes' is required");
  int64_t rank = squeeze ? t.getRank() : t.getRank() + int64_t(raw.size());
  llvm::SmallVector<int64_t> axes;
  if (squeeze && !given) {
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) == 1)
        axes.push_back(d);
  } else {
    auto norm = n.axes(raw, rank);
    if (failed(norm))
      return failure();
    axes = *norm;
  }
  return n.emit(squeeze ? SqueezeOp::getOperationName()
                        : UnsqueezeOp::getOperationName(),
                {*x}, {n.arr("axes", axes)}, 1);
}

LogicalResult convertTranspose(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  int64_t rank = n.type(0).getRank();
  llvm::SmallVector<int64_t> perm;
  if (auto p = n.ints("perm"))
    perm = *p;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  return n.emit(TransposeOp::getOperationName(), {*x}, {n.arr("perm", perm)},
                1);
}

LogicalResult convertConcat(Node &n) {
  llvm::SmallVector<Value> ops;
  for (int i = 0; i < n.proto.input_size(); ++i) {
    auto v = n.in(i);
    if (failed(v))
      return failure();
    ops.push_back(*v);
  }
  if (ops.empty())
    return n.fail("needs at least one input");
  auto ax = n.axis(n.i("axis", 0), n.type(0).getRank());
  if (failed(ax))
    return failure();
  return n.emit(ConcatOp::getOperationName(), ops,
                {n.named("axis", n.b().getI64IntegerAttr(*ax))}, 1);
}

LogicalResult convertSplit(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  auto ax = n.axis(n.i("axis", 0), t.getRank());
  if (failed(ax))
    return failure();
  int parts = n.proto.output_size();
  llvm::SmallVector<int64_t> sizes;
  const auto *numOutputs = n.attr("num_outputs");
  if (n.has(1) && numOutputs)
    return n.fail("the 'split' input and the 'num_outputs' attribute are "
                  "both given");
  if (n.has(1)) {
    auto c = n.constInts(1, "split");
    if (failed(c))
      return failure();
    sizes = *c;
  } else if (auto s = n.ints("split")) {
    sizes = *s;
  } else if (numOutputs) {
    // Split-18: chunks of ceil(dim / num_outputs), the last one smaller.
    int64_t count = numOutputs->i(), dim = t.getDimSize(*ax);
    if (count < 1 || count != parts)
      return n.fail("num_outputs " + llvm::Twine(count) + " does not match " +
                    "the node's " + llvm::Twine(parts) + " outputs");
    int64_t chunk = (dim + count - 1) / count;
    if (dim - chunk * (count - 1) < 0)
      return n.fail("a dimension of " + llvm::Twine(dim) +
                    " cannot be split into " + llvm::Twine(count) +
                    " chunks: ONNX's chunks of " + llvm::Twine(chunk) +
                    " leave " + llvm::Twine(dim - chunk * (count - 1)) +
                    " for the last");
    sizes.assign(count - 1, chunk);
    sizes.push_back(dim - chunk * (count - 1));
  } else if (n.g.opset >= 18) {
    return n.fail("Split-18 needs the 'split' input or the 'num_outputs' "
                  "attribute");
  } else {
    int64_t dim = t.getDimSize(*ax);
    int64_t each = (dim + parts - 1) / std::max(parts, 1);
    for (int p = 0; p < parts; ++p) {
      sizes.push_back(std::min(each, dim));
      dim -= sizes.back();
    }
  }
  if ((int)sizes.size() != parts)
    return n.fail("split has " + llvm::Twine(sizes.size()) + " sizes for " +
                  llvm::Twine(parts) + " outputs");
  return n.emit(
      SplitOp::getOperationName(), {*x},
      {n.named("axis", n.b().getI64IntegerAttr(*ax)), n.arr("sizes", sizes)},
      parts);
}

LogicalResult convertSlice(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  int64_t rank = t.getRank();
  auto starts = n.constInts(1, "starts");
  if (failed(starts))
    return failure();
  auto ends = n.constInts(2, "ends");
  if (failed(ends))
    return failure();
  llvm::SmallVector<int64_t> axes, steps;
  if (n.has(3)) {
    auto c = n.constInts(3, "axes");
    if (failed(c))
      return failure();
    axes = *c;
  } else {
    for (size_t k = 0; k < starts->size(); ++k)
      axes.push_back(k);
  }
  if (n.has(4)) {
    auto c = n.constInts(4, "steps");
    if (failed(c))
      return failure();
    steps = *c;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return n.fail("starts, ends, axes and steps differ in length");
  llvm::SmallVector<int64_t> s(rank, 0), e(t.getShape()), st(rank, 1);
  llvm::SmallVector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = n.axis(axes[k], rank);
    if (failed(a))
      return failure();
    if (seen[*a])
      return n.fail("axis " + llvm::Twine(axes[k]) + " is repeated");
    seen[*a] = true;
    int64_t dim = t.getDimSize(*a), b = (*starts)[k], en = (*ends)[k],
            step = steps[k];
    if (step == 0)
      return n.fail("step of axis " + llvm::Twine(axes[k]) + " is zero");
    // Clamp as ONNX does; INT64_MAX/MIN ends mean "to the end".
    if (b < 0)
      b = b < -dim ? -1 : b + dim;
    if (en < 0)
      en = en < -dim ? -1 : en + dim;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      en = std::clamp<int64_t>(en, 0, dim);
    } else {
      b = std::clamp<int64_t>(b, -1, dim - 1);
      en = std::clamp<int64_t>(en, -1, dim - 1);
    }
    s[*a] = b;
    e[*a] = en;
    st[*a] = step;
  }
  return n.emit(SliceOp::getOperationName(), {*x},
                {n.arr("starts", s), n.arr("ends", e), n.arr("steps", st)}, 1);
}

LogicalResult convertGather(Node &n) {
  auto ops = inputs(n, 2);
  if (failed(ops))
    return failure();
  auto ax = n.axis(n.i("axis", 0), n.type(0).getRank());
  if (failed(ax))
    return failure();
  llvm::SmallVector<NamedAttribute> attrs{
      n.named("axis", n.b().getI64IntegerAttr(*ax))};
  // nn.Embedding's padding_idx, given on the command line.
  if (auto it = n.g.paddingRows.find(n.proto.input(0));
      it != n.g.paddingRows.end() && *ax == 0) {
    int64_t row = it->second, rows = n.type(0).getDimSize(0);
    attrs.push_back(n.named(
        "padding_index", n.b().getI64IntegerAttr(row < 0 ? row + rows : row)));
    n.g.paddingRead.insert(it->first());
  }
  return n.emit(GatherOp::getOperationName(), *ops, attrs, 1);
}

LogicalResult convertGemm(Node &n) {
  auto ops = inputs(n, 2, 1);
  if (failed(ops))
    return failure();
  return n.emit(GemmOp::getOperationName(), *ops,
                {n.named("alpha", n.b().getF32FloatAttr(n.f("alpha", 1.0f))),
                 n.named("beta", n.b().getF32FloatAttr(n.f("beta", 1.0f))),
                 n.named("trans_a", n.b().getBoolAttr(n.i("transA", 0))),
                 n.named("trans_b", n.b().getBoolAttr(n.i("transB", 0)))},
                1);
}

LogicalResult convertLeakyRelu(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  return n.emit(LeakyReluOp::getOperationName(), {*x},
                {n.named("alpha", n.b().getF32FloatAttr(n.f("alpha", 0.01f)))},
                1);
}

} // namespace

LogicalResult importer::convertNode(GraphImporter &g,
                                    const onnx::NodeProto &node,
                                    std::string &error) {
  Node n{g, node, error};
  const std::string &op = node.op_type();
  // Every input must be defined (sortNodes checked the edges; this also
  // catches an empty required input).
  for (int i = 0; i < node.input_size(); ++i) {
    if (n.has(i) && g.sequences.count(node.input(i)))
      return n.fail("input '" + node.input(i) +
                    "' is a sequence, where the operator takes a tensor");
    if (n.has(i) && !g.inputType(node, i))
      return n.fail("input '" + node.input(i) + "' is not defined");
  }
  if (std::string why = countProblem(g, node, /*folding=*/false); !why.empty())
    return n.fail(why);

  auto unary = [](llvm::StringRef name) -> Converter {
    return [name](Node &n) { return simple(n, name, 1); };
  };
  auto binary = [](llvm::StringRef name) -> Converter {
    return [name](Node &n) { return simple(n, name, 2); };
  };
  auto named = [](LogicalResult (*f)(Node &, llvm::StringRef),
                  llvm::StringRef name) -> Converter {
    return [f, name](Node &n) { return f(n, name); };
  };
  static const llvm::StringMap<Converter> converters = [&] {
    llvm::StringMap<Converter> map = {
        {"Relu", unary(ReluOp::getOperationName())},
        {"Sigmoid", unary(SigmoidOp::getOperationName())},
        {"Tanh", unary(TanhOp::getOperationName())},
        {"Sqrt", unary(SqrtOp::getOperationName())},
        {"Erf", unary(ErfOp::getOperationName())},
        {"Exp", unary(ExpOp::getOperationName())},
        {"Log", unary(LogOp::getOperationName())},
        {"Neg", unary(NegOp::getOperationName())},
        {"Identity", unary(IdentityOp::getOperationName())},
        {"GlobalAveragePool", unary(GlobalAveragePoolOp::getOperationName())},
        {"Add", binary(AddOp::getOperationName())},
        {"Sub", binary(SubOp::getOperationName())},
        {"Mul", binary(MulOp::getOperationName())},
        {"Div", binary(DivOp::getOperationName())},
        {"Pow", binary(PowOp::getOperationName())},
        {"MatMul", binary(MatMulOp::getOperationName())},
        {"LeakyRelu", convertLeakyRelu},
        {"Gemm", convertGemm},
        {"Conv", convertConv},
        {"MaxPool", [](Node &n) { return convertPool(n, /*isMax=*/true); }},
        {"AveragePool",
         [](Node &n) { return convertPool(n, /*isMax=*/false); }},
        {"BatchNormalization", convertBatchNorm},
        {"LayerNormalization", convertLayerNorm},
        {"Dropout", convertDropout},
        {"Softmax", named(convertSoftmax, SoftmaxOp::getOperationName())},
        {"LogSoftmax", named(convertSoftmax, LogSoftmaxOp::getOperationName())},
        {"SoftmaxCrossEntropyLoss",
         [](Node &n) { return convertClassLoss(n, /*softmax=*/true); }},
        {"NegativeLogLikelihoodLoss",
         [](Node &n) { return convertClassLoss(n, /*softmax=*/false); }},
        {"Reshape", convertReshape},
        {"Flatten", convertFlatten},
        {"Squeeze", [](Node &n) { return convertSqueezeLike(n, true); }},
        {"Unsqueeze", [](Node &n) { return convertSqueezeLike(n, false); }},
        {"Transpose", convertTranspose},
        {"Concat", convertConcat},
        {"Split", convertSplit},
        {"Slice", convertSlice},
        {"Gather", convertGather}};
    addActivationConverters(map);
    addLogicConverters(map);
    addPadConverters(map);
    addDecomposedConverters(map);
    addRecurrentConverters(map);
    addRandomConverters(map);
    addGridSampleConverter(map);
    addNormalizationConverters(map);
    addEinsumConverter(map);
    addReduceConverters(map);
    addConvTransposeConverter(map);
    addResizeConverters(map);
    addIndexingConverters(map);
    addRearrangeConverters(map);
    addWindowConverters(map);
    addSpectralConverters(map);
    addDeformConvConverter(map);
    addLinalgConverters(map);
    return map;
  }();
  if (auto it = converters.find(op); it != converters.end())
    return it->second(n);
  if (const OpVersionInfo *info = findOp("", op);
      info && info->how == OpImport::compileTime)
    return n.fail(op + " is evaluated only at compile time, and this node "
                       "cannot be: an input is not known at compile time, "
                       "or its result has more than 65536 elements");
  return n.fail("operator " + op + " (opset " + llvm::Twine(g.opset) +
                ") is not supported by tidal");
}
