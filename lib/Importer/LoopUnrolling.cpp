//===- LoopUnrolling.cpp - Loop and Scan with a compile-time trip count ---===//
//
// PyTorch exports nn.EmbeddingBag and torch.jit.script for-loops as
// ONNX Loop; tf2onnx and hand-written models use Scan. tidal's step is a
// straight line of ops, so a loop whose trip count the bound shapes decide
// is unrolled at import: each iteration imports a copy of the body whose
// values carry the prefix "<node>#<i>/", with the iteration number and the
// condition bound to constants, the loop-carried values to the previous
// iteration's, and the scan outputs stacked after the last iteration (a
// constant stays a constant, so a shape computation inside the body still
// folds). A trip count, a condition or a sequence length computed from data
// is an error naming the node, and so is a loop that would unroll past
// kMaxUnrolledNodes nodes.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "ModelImporter.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// The most body nodes all iterations of one loop may import together.
constexpr int64_t kMaxUnrolledNodes = int64_t(1) << 20;
/// The most iterations of a Loop without a trip count (a condition that
/// never turns false is found out after this many).
constexpr int64_t kMaxUntilFalse = 4096;

/// A copy of `body` whose own names (and node names) carry `prefix`; the
/// names it reads from the enclosing graphs are kept.
onnx::GraphProto renamedBody(const onnx::GraphProto &body,
                             const std::string &prefix) {
  llvm::StringSet<> local = definedNames(body);
  auto rename = [&](const std::string &v) -> std::string {
    return !v.empty() && local.contains(v) ? prefix + v : v;
  };
  onnx::GraphProto g = body;
  for (auto &in : *g.mutable_input())
    in.set_name(rename(in.name()));
  for (auto &init : *g.mutable_initializer())
    init.set_name(rename(init.name()));
  for (auto &out : *g.mutable_output())
    out.set_name(rename(out.name()));
  for (int k = 0; k < g.node_size(); ++k) {
    onnx::NodeProto &node = *g.mutable_node(k);
    node.set_name(prefix + (node.name().empty()
                                ? node.op_type() + "_" + std::to_string(k)
                                : node.name()));
    for (std::string &in : *node.mutable_input())
      in = rename(in);
    for (std::string &o : *node.mutable_output())
      o = rename(o);
    // Subgraphs (an If in the body) read the body's names through the
    // same renaming; their own names are theirs.
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        renameOuter(*attr.mutable_g(), {}, rename);
      for (auto &sub : *attr.mutable_graphs())
        renameOuter(sub, {}, rename);
    }
  }
  return g;
}

} // namespace

void ModelImporter::bindTensor(const std::string &name, const Bound &b) {
  if (b.sequence)
    gi->sequences[name] = *b.sequence;
  else if (b.constant)
    gi->constants[name] = b.constant;
  else
    gi->values[name] = b.value;
}

FailureOr<Bound> ModelImporter::boundTensor(const std::string &name,
                                            std::string &why) {
  if (auto s = gi->sequences.find(name); s != gi->sequences.end())
    return Bound{{}, {}, std::make_shared<std::vector<Bound>>(s->second)};
  if (auto c = gi->constants.find(name); c != gi->constants.end())
    return Bound{c->second, {}, {}};
  onnx::NodeProto read;
  read.add_input(name);
  FailureOr<Value> v = gi->input(read, 0, why);
  if (failed(v))
    return failure();
  return Bound{{}, *v, {}};
}

FailureOr<Value> ModelImporter::valueOf(const Bound &b, std::string &why) {
  if (b.value)
    return b.value;
  if (!b.constant) {
    why = "a sequence, where a tensor is expected";
    return failure();
  }
  Operation *op =
      gi->create(ConstantOp::getOperationName(), {},
                 {builder->getNamedAttr("value", b.constant)}, 1, why);
  if (!op)
    return failure();
  return op->getResult(0);
}

LogicalResult ModelImporter::importBody(const onnx::GraphProto &body,
                                        const std::string &prefix,
                                        llvm::ArrayRef<Bound> inputs,
                                        llvm::SmallVectorImpl<Bound> &outputs,
                                        bool inAlgorithm, std::string &why,
                                        std::string &error) {
  onnx::GraphProto g = renamedBody(body, prefix);
  for (auto [in, b] : llvm::zip(g.input(), inputs))
    bindTensor(in.name(), b);
  // A body's own initializers are constants of the body.
  for (const auto &init : g.initializer()) {
    DenseElementsAttr value =
        decodeTensor(&ctx, init, llvm::sys::path::parent_path(path), why);
    if (!value) {
      why = "body initializer '" + init.name() + "': " + why;
      return failure();
    }
    gi->constants[init.name()] = value;
  }
  if (failed(checkNodeOpsets(g, inAlgorithm, trainingOpset, error)))
    return failure();
  // What the body reads from outside it was imported before the loop
  // (sortNodes ordered the loop after its producers, through
  // collectOuterReferences).
  llvm::StringSet<> outer;
  onnx::NodeProto holder;
  *holder.add_attribute()->mutable_g() = g;
  collectOuterReferences(holder, outer);
  std::vector<int> order;
  if (failed(sortNodes(g, std::move(outer), inAlgorithm, order, error)) ||
      failed(convertNodes(g, order, inAlgorithm, error)))
    return failure();
  outputs.clear();
  for (const auto &out : g.output()) {
    FailureOr<Bound> b = boundTensor(out.name(), why);
    if (failed(b)) {
      why = "body output '" + out.name() + "': " + why;
      return failure();
    }
    outputs.push_back(*b);
  }
  return success();
}

FailureOr<Bound> ModelImporter::stackTensors(llvm::ArrayRef<Bound> parts,
                                             int64_t axis, std::string &why) {
  for (const Bound &p : parts)
    if (p.isSequence()) {
      why = "it is a sequence (ONNX stacks only tensors)";
      return failure();
    }
  auto first = cast<RankedTensorType>(parts[0].type());
  for (const Bound &p : parts)
    if (p.type() != first) {
      why = "its iterations' values have different types (" +
            typeToString(first) + " and " + typeToString(p.type()) + ")";
      return failure();
    }
  llvm::SmallVector<int64_t> shape(first.getShape());
  if (axis < 0 || axis > (int64_t)shape.size()) {
    why = "axis " + std::to_string(axis) + " is out of range for rank " +
          std::to_string(shape.size() + 1);
    return failure();
  }
  llvm::SmallVector<int64_t> one(shape);
  one.insert(one.begin() + axis, 1);
  shape.insert(shape.begin() + axis, (int64_t)parts.size());
  auto type = RankedTensorType::get(shape, first.getElementType());
  if (std::string problem = tensorSizeProblem(type); !problem.empty()) {
    why = "its stacked value " + problem;
    return failure();
  }
  if (llvm::all_of(parts, [](const Bound &p) { return bool(p.constant); })) {
    // outer x parts x inner, in row-major order.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
      inner *= shape[d];
    llvm::SmallVector<llvm::SmallVector<Attribute>> values;
    for (const Bound &p : parts)
      values.emplace_back(p.constant.getValues<Attribute>().begin(),
                          p.constant.getValues<Attribute>().end());
    llvm::SmallVector<Attribute> all;
    all.reserve(outer * parts.size() * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (const auto &v : values)
        all.append(v.begin() + o * inner, v.begin() + (o + 1) * inner);
    return Bound{DenseElementsAttr::get(type, all), {}};
  }
  llvm::SmallVector<Value> pieces;
  for (auto [i, p] : llvm::enumerate(parts)) {
    FailureOr<Value> v = valueOf(p, why);
    if (failed(v))
      return failure();
    Operation *r = gi->create(
        ReshapeOp::getOperationName(), {*v},
        {builder->getNamedAttr("shape", builder->getDenseI64ArrayAttr(one))}, 1,
        why);
    if (!r)
      return failure();
    pieces.push_back(r->getResult(0));
  }
  if (pieces.size() == 1)
    return Bound{{}, pieces[0]};
  Operation *c = gi->create(
      ConcatOp::getOperationName(), pieces,
      {builder->getNamedAttr("axis", builder->getI64IntegerAttr(axis))}, 1,
      why);
  if (!c)
    return failure();
  return Bound{{}, c->getResult(0)};
}

LogicalResult ModelImporter::failInBody(const onnx::NodeProto &node, int index,
                                        bool inAlgorithm,
                                        const std::string &where,
                                        std::string &why, std::string &error) {
  if (!error.empty())
    error =
        describeNode(node, index, inAlgorithm) + ", " + where + ": " + error;
  else
    why = where + ": " + why;
  return failure();
}

std::string ModelImporter::unrollPrefix(const onnx::NodeProto &node,
                                        int index) {
  std::string base = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  std::string prefix = base;
  for (int k = 2; !unrolled.insert(prefix).second; ++k)
    prefix = base + "~" + std::to_string(k);
  return prefix;
}

LogicalResult ModelImporter::unrollLoop(const onnx::NodeProto &node, int index,
                                        bool inAlgorithm, std::string &why,
                                        std::string &error) {
  const onnx::AttributeProto *bodyAttr = findAttribute(node, "body");
  if (!bodyAttr || !bodyAttr->has_g()) {
    why = "has no body graph";
    return failure();
  }
  const onnx::GraphProto &body = bodyAttr->g();
  // nn.EmbeddingBag over data offsets: a segment reduction, not unrolled.
  FailureOr<bool> segment = segmentLoop(node, why);
  if (failed(segment))
    return failure();
  if (*segment)
    return success();
  const int carried = std::max(0, node.input_size() - 2);
  const int scans = body.output_size() - 1 - carried;
  if (body.input_size() != 2 + carried || scans < 0) {
    why = "its body has " + std::to_string(body.input_size()) + " inputs and " +
          std::to_string(body.output_size()) + " outputs for " +
          std::to_string(carried) +
          " loop-carried values (ONNX: 2 + N inputs, 1 + N + K outputs)";
    return failure();
  }
  if (node.output_size() > carried + scans) {
    why = "has " + std::to_string(node.output_size()) + " outputs; its body " +
          "gives " + std::to_string(carried) + " loop-carried values and " +
          std::to_string(scans) + " scan outputs";
    return failure();
  }
  // The trip count and the first condition must be known.
  std::optional<int64_t> trips;
  if (gi->hasInput(node, 0)) {
    DenseElementsAttr m = gi->constInput(node, 0);
    if (!m || m.getNumElements() != 1) {
      why = "the trip count '" + node.input(0) +
            "' is not known at compile time (tidal unrolls a Loop whose trip "
            "count and condition the bound shapes decide)";
      return failure();
    }
    trips = std::max<int64_t>(0, intValues(m)[0]);
  }
  bool cond = true;
  if (gi->hasInput(node, 1)) {
    DenseElementsAttr c = gi->constInput(node, 1);
    if (!c || c.getNumElements() != 1) {
      why = "the condition '" + node.input(1) +
            "' is not known at compile time (tidal unrolls a Loop whose trip "
            "count and condition the bound shapes decide)";
      return failure();
    }
    cond = intValues(c)[0] != 0;
  }
  const int64_t perIteration = std::max(1, body.node_size());
  const int64_t maxTrips =
      trips ? kMaxUnrolledNodes / perIteration
            : std::min(kMaxUntilFalse, kMaxUnrolledNodes / perIteration);
  if (trips && *trips > maxTrips) {
    why = "runs " + std::to_string(*trips) + " iterations of " +
          std::to_string(body.node_size()) +
          " nodes: unrolled, that passes the " +
          std::to_string(kMaxUnrolledNodes) + " nodes tidal imports per loop";
    return failure();
  }
  llvm::SmallVector<Bound> state;
  for (int j = 0; j < carried; ++j) {
    if (node.input(2 + j).empty()) {
      why = "loop-carried input " + std::to_string(2 + j) + " is empty";
      return failure();
    }
    FailureOr<Bound> b = boundTensor(node.input(2 + j), why);
    if (failed(b))
      return failure();
    state.push_back(*b);
  }
  const Location loopLoc = gi->loc;
  const std::string prefix = unrollPrefix(node, index);
  auto i64 = RankedTensorType::get({}, builder->getI64Type());
  auto i1 = RankedTensorType::get({}, builder->getI1Type());
  std::vector<llvm::SmallVector<Bound>> scanned(scans);
  int64_t i = 0;
  for (; cond && (!trips || i < *trips); ++i) {
    if (i >= maxTrips) {
      why = "does not stop within " + std::to_string(maxTrips) +
            " iterations (no trip count, and its condition stays true)";
      return failure();
    }
    llvm::SmallVector<Bound> inputs{
        Bound{DenseElementsAttr::get(i64, builder->getI64IntegerAttr(i)), {}},
        Bound{DenseElementsAttr::get(i1, builder->getBoolAttr(true)), {}}};
    inputs.append(state);
    llvm::SmallVector<Bound> outputs;
    std::string iteration = prefix + "#" + std::to_string(i) + "/";
    if (failed(importBody(body, iteration, inputs, outputs, inAlgorithm, why,
                          error)))
      return failInBody(node, index, inAlgorithm,
                        "iteration " + std::to_string(i), why, error);
    if (!outputs[0].constant || outputs[0].constant.getNumElements() != 1) {
      why = "the condition its body computes in iteration " +
            std::to_string(i) +
            " is not known at compile time (it depends on data)";
      return failure();
    }
    cond = intValues(outputs[0].constant)[0] != 0;
    for (int j = 0; j < carried; ++j)
      state[j] = outputs[1 + j];
    for (int k = 0; k < scans; ++k)
      scanned[k].push_back(outputs[1 + carried + k]);
  }
  gi->loc = loopLoc;
  for (int j = 0; j < carried && j < node.output_size(); ++j)
    if (!node.output(j).empty())
      bindTensor(node.output(j), state[j]);
  for (int k = 0; k < scans && carried + k < node.output_size(); ++k) {
    const std::string &out = node.output(carried + k);
    if (out.empty())
      continue;
    if (i == 0) {
      why = "runs no iteration, so its scan output '" + out +
            "' would be empty (tidal has no empty tensors)";
      return failure();
    }
    FailureOr<Bound> stacked = stackTensors(scanned[k], 0, why);
    if (failed(stacked)) {
      why = "scan output '" + out + "': " + why;
      return failure();
    }
    bindTensor(out, *stacked);
  }
  return success();
}

FailureOr<Bound> ModelImporter::takeIndex(const Bound &b, int64_t axis,
                                          int64_t index, std::string &why) {
  auto type = cast<RankedTensorType>(b.type());
  llvm::SmallVector<int64_t> shape(type.getShape());
  llvm::SmallVector<int64_t> rest(shape);
  rest.erase(rest.begin() + axis);
  auto restType = RankedTensorType::get(rest, type.getElementType());
  if (b.constant) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
      inner *= shape[d];
    auto all = b.constant.getValues<Attribute>();
    llvm::SmallVector<Attribute> picked;
    picked.reserve(outer * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < inner; ++e)
        picked.push_back(all[(o * shape[axis] + index) * inner + e]);
    return Bound{DenseElementsAttr::get(restType, picked), {}};
  }
  return sliceAlong(b, axis, index, index + 1, /*squeeze=*/true, why);
}

LogicalResult ModelImporter::unrollScan(const onnx::NodeProto &node, int index,
                                        bool inAlgorithm, std::string &why,
                                        std::string &error) {
  const onnx::AttributeProto *bodyAttr = findAttribute(node, "body");
  const onnx::AttributeProto *numAttr = findAttribute(node, "num_scan_inputs");
  if (!bodyAttr || !bodyAttr->has_g() || !numAttr) {
    why = "needs a body graph and num_scan_inputs";
    return failure();
  }
  const onnx::GraphProto &body = bodyAttr->g();
  const int64_t scanIns = numAttr->i();
  const int64_t states = node.input_size() - scanIns;
  const int64_t scanOuts = body.output_size() - states;
  if (scanIns < 1 || states < 0 || body.input_size() != node.input_size() ||
      scanOuts < 0 || node.output_size() > states + scanOuts) {
    why = "its " + std::to_string(node.input_size()) + " inputs, " +
          std::to_string(node.output_size()) + " outputs and " +
          std::to_string(scanIns) + " scan inputs do not match its body's " +
          std::to_string(body.input_size()) + " inputs and " +
          std::to_string(body.output_size()) + " outputs";
    return failure();
  }
  auto list = [&](llvm::StringRef name,
                  int64_t count) -> FailureOr<llvm::SmallVector<int64_t>> {
    llvm::SmallVector<int64_t> out(count, 0);
    if (const onnx::AttributeProto *a = findAttribute(node, name)) {
      if (a->ints_size() != count) {
        why = name.str() + " has " + std::to_string(a->ints_size()) +
              " entries for " + std::to_string(count);
        return failure();
      }
      out.assign(a->ints().begin(), a->ints().end());
    }
    return out;
  };
  auto inAxes = list("scan_input_axes", scanIns);
  auto inDirs = list("scan_input_directions", scanIns);
  auto outAxes = list("scan_output_axes", scanOuts);
  auto outDirs = list("scan_output_directions", scanOuts);
  if (failed(inAxes) || failed(inDirs) || failed(outAxes) || failed(outDirs))
    return failure();
  llvm::SmallVector<Bound> state, scanned;
  for (int64_t j = 0; j < node.input_size(); ++j) {
    if (node.input(j).empty()) {
      why = "input " + std::to_string(j) + " is empty";
      return failure();
    }
    FailureOr<Bound> b = boundTensor(node.input(j), why);
    if (failed(b))
      return failure();
    (j < states ? state : scanned).push_back(*b);
  }
  // The sequence length: every scan input's extent along its axis.
  int64_t length = -1;
  for (int64_t m = 0; m < scanIns; ++m) {
    if (scanned[m].isSequence()) {
      why = "scan input " + std::to_string(m) + " is a sequence";
      return failure();
    }
    auto type = cast<RankedTensorType>(scanned[m].type());
    int64_t rank = type.getRank(), &axis = (*inAxes)[m];
    if (axis < -rank || axis >= rank) {
      why = "scan_input_axes[" + std::to_string(m) +
            "] = " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank);
      return failure();
    }
    axis = axis < 0 ? axis + rank : axis;
    if (length >= 0 && type.getDimSize(axis) != length) {
      why = "its scan inputs have different lengths (" +
            std::to_string(length) + " and " +
            std::to_string(type.getDimSize(axis)) + ")";
      return failure();
    }
    length = type.getDimSize(axis);
  }
  const int64_t perIteration = std::max(1, body.node_size());
  if (length * perIteration > kMaxUnrolledNodes) {
    why = "runs " + std::to_string(length) + " iterations of " +
          std::to_string(body.node_size()) +
          " nodes: unrolled, that passes the " +
          std::to_string(kMaxUnrolledNodes) + " nodes tidal imports per loop";
    return failure();
  }
  if (length == 0 && scanOuts > 0) {
    why = "scans a sequence of length 0, so its scan outputs would be empty "
          "(tidal has no empty tensors)";
    return failure();
  }
  const Location scanLoc = gi->loc;
  const std::string prefix = unrollPrefix(node, index);
  std::vector<llvm::SmallVector<Bound>> outs(scanOuts);
  for (int64_t t = 0; t < length; ++t) {
    llvm::SmallVector<Bound> inputs(state);
    gi->loc = scanLoc;
    for (int64_t m = 0; m < scanIns; ++m) {
      int64_t at = (*inDirs)[m] ? length - 1 - t : t;
      FailureOr<Bound> e = takeIndex(scanned[m], (*inAxes)[m], at, why);
      if (failed(e)) {
        why = "scan input " + std::to_string(m) + ": " + why;
        return failure();
      }
      inputs.push_back(*e);
    }
    llvm::SmallVector<Bound> outputs;
    std::string iteration = prefix + "#" + std::to_string(t) + "/";
    if (failed(importBody(body, iteration, inputs, outputs, inAlgorithm, why,
                          error)))
      return failInBody(node, index, inAlgorithm,
                        "iteration " + std::to_string(t), why, error);
    for (int64_t j = 0; j < states; ++j)
      state[j] = outputs[j];
    for (int64_t k = 0; k < scanOuts; ++k)
      outs[k].push_back(outputs[states + k]);
  }
  gi->loc = scanLoc;
  for (int64_t j = 0; j < states && j < node.output_size(); ++j)
    if (!node.output(j).empty())
      bindTensor(node.output(j), state[j]);
  for (int64_t k = 0; k < scanOuts && states + k < node.output_size(); ++k) {
    const std::string &out = node.output(states + k);
    if (out.empty())
      continue;
    if ((*outDirs)[k])
      std::reverse(outs[k].begin(), outs[k].end());
    int64_t rank = cast<RankedTensorType>(outs[k][0].type()).getRank() + 1;
    int64_t axis = (*outAxes)[k];
    if (axis < -rank || axis >= rank) {
      why = "scan_output_axes[" + std::to_string(k) +
            "] = " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank);
      return failure();
    }
    FailureOr<Bound> stacked =
        stackTensors(outs[k], axis < 0 ? axis + rank : axis, why);
    if (failed(stacked)) {
      why = "scan output '" + out + "': " + why;
      return failure();
    }
    bindTensor(out, *stacked);
  }
  return success();
}
