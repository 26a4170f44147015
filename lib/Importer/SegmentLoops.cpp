//===- SegmentLoops.cpp - nn.EmbeddingBag's offsets Loop as a segment sum -===//
//
// nn.EmbeddingBag with an `offsets` input (bags of different sizes, the
// DLRM form) exports a Loop over the bags whose body slices the indices
// between offsets[i] and offsets[i + 1] (data), gathers those rows of the
// table and reduces them: the slice bounds are data, so the Loop cannot be
// unrolled. That body is recognised and replaced by a segment reduction in
// O(indices x dim):
//   rows = gather(W, indices)                        [P, D]
//   starts marked (a scatter-add of ones at each bag's start) and summed
//   cumulatively (Hillis-Steele: log2(P) shifted adds) give every position
//   its bag: seg = cumsum(marks) - 1 (an empty bag marks the same position
//   twice, so the ids after it skip one, as they must);
//   out = scatter-add of rows into [bags, D] by seg   (sum)
//   divided by max(end - start, 1)                    (mean; empty bags 0)
// The gradient reaches W through the gather's and the scatter-add's.
// Bodies of any other shape (per_sample_weights, mode max) fall back to
// unrolling, which names the data-dependent slice.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "ModelImporter.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// The matched body: out = Reduce(Gather(table, Slice(indices,
/// bounds[iter], nextBounds[iter]))). `axes` names the tensors that must
/// hold [0] (the Slice's axes, the reduction's), `steps` those that must
/// hold [1], checked against their values by segmentLoop.
struct SegmentBody {
  std::string indices, table, starts, ends;
  bool mean = false;
  llvm::SmallVector<std::string> axes, steps;
};

/// The one node producing `name` in `g`, or null.
const onnx::NodeProto *producer(const onnx::GraphProto &g,
                                const std::string &name) {
  for (const auto &node : g.node())
    for (const std::string &o : node.output())
      if (o == name)
        return &node;
  return nullptr;
}

/// A Gather(outer, iter) feeding an Unsqueeze (directly or not): the name
/// of `outer`.
std::optional<std::string> boundOf(const onnx::GraphProto &g,
                                   const std::string &name,
                                   const std::string &iter) {
  const onnx::NodeProto *n = producer(g, name);
  if (n && n->op_type() == "Unsqueeze")
    n = producer(g, n->input(0));
  if (!n || n->op_type() != "Gather" || n->input_size() != 2 ||
      n->input(1) != iter || producer(g, n->input(0)))
    return std::nullopt;
  if (const auto *a = findAttribute(*n, "axis"); a && a->i() != 0)
    return std::nullopt;
  return n->input(0);
}

std::optional<SegmentBody> matchSegmentBody(const onnx::NodeProto &loop) {
  const onnx::AttributeProto *bodyAttr = findAttribute(loop, "body");
  if (!bodyAttr || !bodyAttr->has_g() || loop.input_size() != 2 ||
      loop.output_size() != 1)
    return std::nullopt;
  const onnx::GraphProto &g = bodyAttr->g();
  if (g.input_size() != 2 || g.output_size() != 2)
    return std::nullopt;
  const std::string &iter = g.input(0).name();
  const onnx::NodeProto *reduce = producer(g, g.output(1).name());
  if (!reduce ||
      (reduce->op_type() != "ReduceSum" && reduce->op_type() != "ReduceMean"))
    return std::nullopt;
  if (const auto *k = findAttribute(*reduce, "keepdims"); !k || k->i() != 0)
    return std::nullopt;
  SegmentBody out;
  // The reduction runs over the rows only: axes [0], as an input or (Reduce
  // Mean before opset 18) an attribute.
  if (reduce->input_size() > 1 && !reduce->input(1).empty()) {
    out.axes.push_back(reduce->input(1));
  } else {
    const auto *a = findAttribute(*reduce, "axes");
    if (!a || a->ints_size() != 1 || a->ints(0) != 0)
      return std::nullopt;
  }
  const onnx::NodeProto *gather = producer(g, reduce->input(0));
  if (!gather || gather->op_type() != "Gather" || gather->input_size() != 2 ||
      producer(g, gather->input(0)))
    return std::nullopt;
  if (const auto *a = findAttribute(*gather, "axis"); a && a->i() != 0)
    return std::nullopt;
  const onnx::NodeProto *slice = producer(g, gather->input(1));
  if (!slice || slice->op_type() != "Slice" || slice->input_size() < 3 ||
      producer(g, slice->input(0)))
    return std::nullopt;
  auto starts = boundOf(g, slice->input(1), iter);
  auto ends = boundOf(g, slice->input(2), iter);
  if (!starts || !ends)
    return std::nullopt;
  if (slice->input_size() > 3 && !slice->input(3).empty())
    out.axes.push_back(slice->input(3));
  if (slice->input_size() > 4 && !slice->input(4).empty())
    out.steps.push_back(slice->input(4));
  out.indices = slice->input(0);
  out.table = gather->input(0);
  out.starts = *starts;
  out.ends = *ends;
  out.mean = reduce->op_type() == "ReduceMean";
  return out;
}

} // namespace

FailureOr<bool> ModelImporter::segmentLoop(const onnx::NodeProto &node,
                                           std::string &why) {
  std::optional<SegmentBody> body = matchSegmentBody(node);
  if (!body)
    return false;
  DenseElementsAttr trips = gi->constInput(node, 0);
  if (!trips || trips.getNumElements() != 1)
    return false;
  // The axes must be [0] and the steps [1]: a Constant node of the body or
  // a constant of the enclosing graph.
  const onnx::GraphProto &g = findAttribute(node, "body")->g();
  auto valueOfName = [&](const std::string &name) -> DenseElementsAttr {
    if (const onnx::NodeProto *c = producer(g, name)) {
      const onnx::AttributeProto *v = findAttribute(*c, "value");
      if (c->op_type() != "Constant" || !v || !v->has_t())
        return {};
      std::string ignored;
      return decodeTensor(&ctx, v->t(), "", ignored);
    }
    auto it = gi->constants.find(name);
    return it == gi->constants.end() ? DenseElementsAttr() : it->second;
  };
  auto holds = [&](const std::string &name, int64_t want) {
    DenseElementsAttr c = valueOfName(name);
    return c && c.getNumElements() == 1 && intValues(c)[0] == want;
  };
  for (const std::string &a : body->axes)
    if (!holds(a, 0))
      return false;
  for (const std::string &st : body->steps)
    if (!holds(st, 1))
      return false;
  const int64_t bags = intValues(trips)[0];
  FailureOr<Bound> idx = boundTensor(body->indices, why),
                   table = boundTensor(body->table, why),
                   starts = boundTensor(body->starts, why),
                   ends = boundTensor(body->ends, why);
  if (failed(idx) || failed(table) || failed(starts) || failed(ends))
    return failure();
  if (idx->isSequence() || table->isSequence() || starts->isSequence() ||
      ends->isSequence())
    return false;
  auto it = cast<RankedTensorType>(idx->type());
  auto tt = cast<RankedTensorType>(table->type());
  auto st = cast<RankedTensorType>(starts->type());
  auto et = cast<RankedTensorType>(ends->type());
  if (it.getRank() != 1 || tt.getRank() != 2 ||
      !isa<FloatType>(tt.getElementType()) || st.getRank() != 1 ||
      et.getRank() != 1 || st.getDimSize(0) < bags || et.getDimSize(0) < bags)
    return false;
  const int64_t positions = it.getDimSize(0), dim = tt.getDimSize(1);
  Type f32 = builder->getF32Type(), i64 = builder->getI64Type();
  auto create = [&](llvm::StringRef name, ValueRange operands,
                    llvm::ArrayRef<NamedAttribute> attrs,
                    llvm::ArrayRef<Type> types = {}) -> Value {
    if (!why.empty())
      return {};
    Operation *op = gi->create(name, operands, attrs, 1, why, types);
    return op ? op->getResult(0) : Value();
  };
  auto arr = [&](llvm::StringRef n, llvm::ArrayRef<int64_t> v) {
    return builder->getNamedAttr(n, builder->getDenseI64ArrayAttr(v));
  };
  auto constant = [&](RankedTensorType type, DenseElementsAttr value) {
    return create(ConstantOp::getOperationName(), {},
                  {builder->getNamedAttr("value", value)});
  };
  auto first = [&](const Bound &b) -> Value { // b[0:bags] as int64
    FailureOr<Value> v = valueOf(b, why);
    if (failed(v))
      return {};
    Value s =
        create(SliceOp::getOperationName(), {*v},
               {arr("starts", {0}), arr("ends", {bags}), arr("steps", {1})});
    if (s &&
        !cast<RankedTensorType>(s.getType()).getElementType().isInteger(64))
      s = builder->create<CastOp>(gi->loc, RankedTensorType::get({bags}, i64),
                                  s);
    return s;
  };
  FailureOr<Value> idxV = valueOf(*idx, why), tableV = valueOf(*table, why);
  if (failed(idxV) || failed(tableV))
    return failure();
  Value startV = first(*starts), endV = first(*ends);
  if (!startV || !endV)
    return failure();
  // Every position's bag: marks at the starts (over P + 1 positions, so a
  // trailing empty bag starting at P marks none of the real ones), summed
  // cumulatively.
  auto onesType = RankedTensorType::get({bags}, f32);
  Value ones = constant(
      onesType,
      DenseElementsAttr::get(onesType, builder->getF32FloatAttr(1.0f)));
  const int64_t marked = positions + 1;
  Value running =
      create(GatherBackwardOp::getOperationName(), {ones, startV},
             {builder->getNamedAttr("axis", builder->getI64IntegerAttr(0))},
             {RankedTensorType::get({marked}, f32)});
  for (int64_t shift = 1; shift < marked && running; shift *= 2) {
    Value head = create(
        SliceOp::getOperationName(), {running},
        {arr("starts", {0}), arr("ends", {marked - shift}), arr("steps", {1})});
    Value shifted =
        create(PadOp::getOperationName(), {head},
               {arr("pads", {shift, 0}),
                builder->getNamedAttr(
                    "mode", PadModeAttr::get(&ctx, PadMode::constant)),
                builder->getNamedAttr("value", builder->getF64FloatAttr(0))});
    running = create(AddOp::getOperationName(), {running, shifted}, {});
  }
  auto scalarF32 = RankedTensorType::get({}, f32);
  Value one =
      constant(scalarF32,
               DenseElementsAttr::get(scalarF32, builder->getF32FloatAttr(1)));
  Value real =
      create(SliceOp::getOperationName(), {running},
             {arr("starts", {0}), arr("ends", {positions}), arr("steps", {1})});
  Value segF = create(SubOp::getOperationName(), {real, one}, {});
  Value seg = segF ? builder->create<CastOp>(
                         gi->loc, RankedTensorType::get({positions}, i64), segF)
                   : Value();
  if (!seg)
    return failure();
  Value rows =
      create(GatherOp::getOperationName(), {*tableV, *idxV},
             {builder->getNamedAttr("axis", builder->getI64IntegerAttr(0))});
  Value out =
      create(GatherBackwardOp::getOperationName(), {rows, seg},
             {builder->getNamedAttr("axis", builder->getI64IntegerAttr(0))},
             {RankedTensorType::get({bags, dim}, tt.getElementType())});
  if (body->mean && out) {
    Value sizes = create(SubOp::getOperationName(), {endV, startV}, {});
    if (!sizes)
      return failure();
    Value count = builder->create<CastOp>(
        gi->loc, RankedTensorType::get({bags}, tt.getElementType()), sizes);
    auto st1 = RankedTensorType::get({}, tt.getElementType());
    Value atLeastOne =
        create(MaxOp::getOperationName(),
               {count, constant(st1, DenseElementsAttr::get(
                                         st1, builder->getFloatAttr(
                                                  tt.getElementType(), 1.0)))},
               {});
    Value column = create(ReshapeOp::getOperationName(), {atLeastOne},
                          {arr("shape", {bags, 1})});
    out = create(DivOp::getOperationName(), {out, column}, {});
  }
  if (!out || !why.empty())
    return failure();
  gi->values[node.output(0)] = out;
  return true;
}
