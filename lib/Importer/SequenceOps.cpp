//===- SequenceOps.cpp - ONNX sequences as lists known at import ----------===//
//
// torch.jit.script models export split, unbind and list building as
// SplitToSequence, SequenceAt, SequenceInsert, ConcatFromSequence (often
// inside a Loop), and PyTorch's dynamo exporter writes chunk and split the
// same way. Once the shapes are bound, such a sequence's length and its
// elements' positions are known, so the importer keeps a sequence as a list
// of its elements (constants or values) and no sequence reaches the IR:
// SequenceAt picks an element, ConcatFromSequence becomes one concat, and
// SequenceMap imports its body once per element. A position computed from
// data, or a sequence where a tensor is expected, is an error naming the
// node.
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"
#include "ImporterImpl.h"
#include "ModelImporter.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

bool ModelImporter::isSequenceOp(const onnx::NodeProto &node) const {
  static const llvm::StringSet<> ops = {
      "SequenceEmpty",   "SequenceConstruct",  "SequenceAt",
      "SequenceLength",  "SequenceInsert",     "SequenceErase",
      "SplitToSequence", "ConcatFromSequence", "SequenceMap"};
  if (ops.contains(node.op_type()))
    return true;
  // Identity passes a sequence through.
  return node.op_type() == "Identity" && node.input_size() == 1 &&
         gi->sequences.count(node.input(0));
}

namespace {

/// A position input (SequenceAt, SequenceInsert, SequenceErase) into a
/// sequence of `length`: a known integer scalar, counted from the end when
/// negative (p + length, as ONNX Runtime), checked against [0, last].
FailureOr<int64_t> position(GraphImporter &gi, const onnx::NodeProto &node,
                            int input, int64_t length, int64_t last,
                            std::string &why) {
  DenseElementsAttr c = gi.constInput(node, input);
  if (!c || c.getNumElements() != 1 || isa<FloatType>(c.getElementType())) {
    why = "the position '" + node.input(input) +
          "' is not an integer known at compile time";
    return failure();
  }
  int64_t p = intValues(c)[0];
  int64_t at = p < 0 ? p + length : p;
  if (at < 0 || at > last) {
    why = "position " + std::to_string(p) +
          " is outside a sequence of length " + std::to_string(length);
    return failure();
  }
  return at;
}

} // namespace

FailureOr<std::vector<Bound>>
ModelImporter::sequenceInput(const onnx::NodeProto &node, int input,
                             std::string &why) {
  if (input >= node.input_size() || node.input(input).empty()) {
    why = "input " + std::to_string(input) + " (a sequence) is required";
    return failure();
  }
  auto it = gi->sequences.find(node.input(input));
  if (it == gi->sequences.end()) {
    why = "input '" + node.input(input) +
          "' is not a sequence known at import (a graph input of "
          "sequence type, or a tensor)";
    return failure();
  }
  return it->second;
}

/// The slice [start, end) of constant `c` along `axis` (that axis dropped
/// with `squeeze`), as a constant.
static DenseElementsAttr sliceConstant(DenseElementsAttr c, int64_t axis,
                                       int64_t start, int64_t end,
                                       bool squeeze) {
  fold::Vals v(c);
  llvm::ArrayRef<int64_t> shape = v.type.getShape();
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < v.type.getRank(); ++d)
    inner *= shape[d];
  const int64_t count = end - start;
  llvm::SmallVector<int64_t> outShape(shape);
  outShape[axis] = count;
  if (squeeze)
    outShape.erase(outShape.begin() + axis);
  return fold::gatherElements(v, outShape, [&](int64_t k) {
    int64_t i = k % inner, rest = k / inner;
    int64_t at = rest % count, o = rest / count;
    return (o * shape[axis] + start + at) * inner + i;
  });
}

FailureOr<Bound> ModelImporter::sliceAlong(const Bound &b, int64_t axis,
                                           int64_t start, int64_t end,
                                           bool squeeze, std::string &why) {
  // A constant's slices stay constants: an element of a sequence split from
  // a constant (torch 1.13's repeat_interleave loops over the repeats) can
  // then be a shape.
  if (b.constant)
    return Bound{sliceConstant(b.constant, axis, start, end, squeeze), {}, {}};
  FailureOr<Value> v = valueOf(b, why);
  if (failed(v))
    return failure();
  auto type = cast<RankedTensorType>(v->getType());
  llvm::SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
      steps(type.getRank(), 1);
  starts[axis] = start;
  ends[axis] = end;
  Value out = *v;
  if (start != 0 || end != type.getDimSize(axis)) {
    Operation *s = gi->create(
        SliceOp::getOperationName(), {out},
        {builder->getNamedAttr("starts", builder->getDenseI64ArrayAttr(starts)),
         builder->getNamedAttr("ends", builder->getDenseI64ArrayAttr(ends)),
         builder->getNamedAttr("steps", builder->getDenseI64ArrayAttr(steps))},
        1, why);
    if (!s)
      return failure();
    out = s->getResult(0);
  }
  if (squeeze) {
    llvm::SmallVector<int64_t> shape(
        cast<RankedTensorType>(out.getType()).getShape());
    shape.erase(shape.begin() + axis);
    Operation *r = gi->create(
        ReshapeOp::getOperationName(), {out},
        {builder->getNamedAttr("shape", builder->getDenseI64ArrayAttr(shape))},
        1, why);
    if (!r)
      return failure();
    out = r->getResult(0);
  }
  return Bound{{}, out, {}};
}

LogicalResult ModelImporter::convertSequenceNode(const onnx::NodeProto &node,
                                                 int index, bool inAlgorithm,
                                                 std::string &why,
                                                 std::string &error) {
  const std::string &op = node.op_type();
  auto bindSequence = [&](int output, std::vector<Bound> elements) {
    if (output < node.output_size() && !node.output(output).empty())
      gi->sequences[node.output(output)] = std::move(elements);
    return success();
  };
  auto one = [&](const std::string &name) -> FailureOr<Bound> {
    return boundTensor(name, why);
  };
  if (op == "SequenceEmpty")
    return bindSequence(0, {});
  if (op == "SequenceConstruct") {
    std::vector<Bound> elements;
    for (const std::string &in : node.input()) {
      FailureOr<Bound> b = one(in);
      if (failed(b))
        return failure();
      if (b->isSequence()) {
        why = "input '" + in + "' is a sequence (sequences hold tensors)";
        return failure();
      }
      elements.push_back(*b);
    }
    return bindSequence(0, std::move(elements));
  }
  if (op == "Identity") {
    auto seq = sequenceInput(node, 0, why);
    if (failed(seq))
      return failure();
    return bindSequence(0, *seq);
  }
  auto seq = sequenceInput(node, 0, why);
  if (op != "SplitToSequence" && failed(seq))
    return failure();
  const int64_t n = succeeded(seq) ? (int64_t)seq->size() : 0;
  if (op == "SequenceLength") {
    auto i64 = RankedTensorType::get({}, builder->getI64Type());
    if (node.output_size() > 0 && !node.output(0).empty())
      gi->constants[node.output(0)] =
          DenseElementsAttr::get(i64, builder->getI64IntegerAttr(n));
    return success();
  }
  if (op == "SequenceAt") {
    if (n == 0) {
      why = "the sequence is empty";
      return failure();
    }
    FailureOr<int64_t> at = position(*gi, node, 1, n, n - 1, why);
    if (failed(at))
      return failure();
    bindTensor(node.output(0), (*seq)[*at]);
    return success();
  }
  if (op == "SequenceInsert") {
    FailureOr<Bound> t = one(node.input(1));
    if (failed(t))
      return failure();
    int64_t at = n;
    if (gi->hasInput(node, 2)) {
      FailureOr<int64_t> p = position(*gi, node, 2, n, n, why);
      if (failed(p))
        return failure();
      at = *p;
    }
    std::vector<Bound> elements = *seq;
    elements.insert(elements.begin() + at, *t);
    return bindSequence(0, std::move(elements));
  }
  if (op == "SequenceErase") {
    if (n == 0) {
      why = "the sequence is empty";
      return failure();
    }
    int64_t at = n - 1;
    if (gi->hasInput(node, 1)) {
      FailureOr<int64_t> p = position(*gi, node, 1, n, n - 1, why);
      if (failed(p))
        return failure();
      at = *p;
    }
    std::vector<Bound> elements = *seq;
    elements.erase(elements.begin() + at);
    return bindSequence(0, std::move(elements));
  }
  if (op == "SplitToSequence") {
    FailureOr<Bound> x = one(node.input(0));
    if (failed(x))
      return failure();
    if (x->isSequence()) {
      why = "input '" + node.input(0) + "' is a sequence, not a tensor";
      return failure();
    }
    auto type = cast<RankedTensorType>(x->type());
    const int64_t rank = type.getRank();
    int64_t axis =
        findAttribute(node, "axis") ? findAttribute(node, "axis")->i() : 0;
    if (axis < -rank || axis >= rank) {
      why = "axis " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank);
      return failure();
    }
    axis = axis < 0 ? axis + rank : axis;
    const int64_t dim = type.getDimSize(axis);
    // keepdims = 0 drops the split axis when `split` is absent or a scalar
    // (ONNX Runtime's reading, which PyTorch's unbind export relies on:
    // split 1, keepdims 0); with a list of sizes it is ignored.
    llvm::SmallVector<int64_t> sizes;
    const auto *keep = findAttribute(node, "keepdims");
    bool squeeze = keep && keep->i() == 0;
    if (gi->hasInput(node, 1)) {
      DenseElementsAttr split = gi->constInput(node, 1);
      if (!split) {
        why = "the split '" + node.input(1) + "' is not known at compile time";
        return failure();
      }
      llvm::SmallVector<int64_t> given = intValues(split);
      if (cast<RankedTensorType>(split.getType()).getRank() == 0) {
        if (given[0] <= 0) {
          why = "split size " + std::to_string(given[0]) + " is not positive";
          return failure();
        }
        for (int64_t s = 0; s < dim; s += given[0])
          sizes.push_back(std::min(given[0], dim - s));
        if (squeeze && given[0] != 1) {
          why = "keepdims = 0 with split size " + std::to_string(given[0]) +
                " (only pieces of size 1 can drop the axis)";
          return failure();
        }
      } else {
        squeeze = false;
        sizes = given;
        int64_t total = 0;
        for (int64_t s : sizes)
          total += s;
        if (total != dim ||
            llvm::any_of(sizes, [](int64_t s) { return s < 0; })) {
          why = "the split sizes add up to " + std::to_string(total) +
                ", not the axis' " + std::to_string(dim);
          return failure();
        }
      }
    } else {
      sizes.assign(dim, 1);
    }
    std::vector<Bound> elements;
    int64_t start = 0;
    for (int64_t s : sizes) {
      FailureOr<Bound> part =
          sliceAlong(*x, axis, start, start + s, squeeze, why);
      if (failed(part))
        return failure();
      elements.push_back(*part);
      start += s;
    }
    return bindSequence(0, std::move(elements));
  }
  if (op == "ConcatFromSequence") {
    if (n == 0) {
      why = "the sequence is empty";
      return failure();
    }
    const auto *axisAttr = findAttribute(node, "axis");
    if (!axisAttr) {
      why = "attribute 'axis' is required";
      return failure();
    }
    const auto *newAxisAttr = findAttribute(node, "new_axis");
    const bool newAxis = newAxisAttr && newAxisAttr->i() != 0;
    const int64_t rank =
        cast<RankedTensorType>((*seq)[0].type()).getRank() + (newAxis ? 1 : 0);
    int64_t axis = axisAttr->i();
    if (axis < -rank || axis >= rank) {
      why = "axis " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank);
      return failure();
    }
    axis = axis < 0 ? axis + rank : axis;
    FailureOr<Bound> out = failure();
    if (newAxis) {
      out = stackTensors(*seq, axis, why);
    } else if (n == 1) {
      out = (*seq)[0];
    } else {
      llvm::SmallVector<Value> parts;
      for (const Bound &b : *seq) {
        FailureOr<Value> v = valueOf(b, why);
        if (failed(v))
          return failure();
        parts.push_back(*v);
      }
      Operation *c = gi->create(
          ConcatOp::getOperationName(), parts,
          {builder->getNamedAttr("axis", builder->getI64IntegerAttr(axis))}, 1,
          why);
      if (c)
        out = Bound{{}, c->getResult(0), {}};
    }
    if (failed(out))
      return failure();
    bindTensor(node.output(0), *out);
    return success();
  }
  // SequenceMap: the body once per element of the first input; further
  // sequence inputs give their element of the same position, tensors are
  // passed whole. Each body output is a sequence.
  const onnx::AttributeProto *bodyAttr = findAttribute(node, "body");
  if (!bodyAttr || !bodyAttr->has_g()) {
    why = "has no body graph";
    return failure();
  }
  const onnx::GraphProto &body = bodyAttr->g();
  if (body.input_size() != node.input_size()) {
    why = "its body has " + std::to_string(body.input_size()) +
          " inputs for the node's " + std::to_string(node.input_size());
    return failure();
  }
  std::vector<Bound> extra;
  for (int k = 1; k < node.input_size(); ++k) {
    FailureOr<Bound> b = one(node.input(k));
    if (failed(b))
      return failure();
    if (b->isSequence() && (int64_t)b->sequence->size() != n) {
      why = "input '" + node.input(k) + "' has " +
            std::to_string(b->sequence->size()) + " elements, input '" +
            node.input(0) + "' " + std::to_string(n);
      return failure();
    }
    extra.push_back(*b);
  }
  const std::string prefix = unrollPrefix(node, index);
  std::vector<std::vector<Bound>> results(body.output_size());
  const Location mapLoc = gi->loc;
  for (int64_t i = 0; i < n; ++i) {
    llvm::SmallVector<Bound> inputs{(*seq)[i]};
    for (const Bound &b : extra)
      inputs.push_back(b.isSequence() ? (*b.sequence)[i] : b);
    llvm::SmallVector<Bound> outputs;
    if (failed(importBody(body, prefix + "#" + std::to_string(i) + "/", inputs,
                          outputs, inAlgorithm, why, error)))
      return failInBody(node, index, inAlgorithm,
                        "element " + std::to_string(i), why, error);
    for (auto [j, b] : llvm::enumerate(outputs))
      results[j].push_back(b);
  }
  gi->loc = mapLoc;
  for (int j = 0; j < (int)results.size(); ++j)
    (void)bindSequence(j, std::move(results[j]));
  return success();
}
