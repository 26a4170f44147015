//===- FunctionInlining.cpp - model-local ONNX functions, expanded --------===//
//
// A model may define functions (ModelProto.functions) and call them as
// nodes of the function's domain and name: PyTorch's dynamo exporter
// (onnxscript's torch_lib) writes aten ops this way, TorchScript's with
// export_modules_as_functions, and hand-built models share subgraphs so.
// Before anything else is imported, every call is replaced by the
// function's body, recursively:
//   - formal inputs and outputs become the call's actual names (an omitted
//     optional input is ""); every other value and node of the body gets
//     the prefix "<call>/" (the call's name, else the function's; "#k"
//     added where two calls would share one);
//   - an attribute that refers to the function's (ref_attr_name) takes the
//     call's attribute of that name, else the function's default (the
//     attribute_proto of IR version 9, read from the bytes the bookworm
//     protobuf keeps as unknown fields), else is dropped (the op's default);
//   - subgraphs of body nodes (If branches) read outer names through the
//     same renaming.
// Errors name the call and the function: a recursive function, a body that
// imports another version of the default opset, overloads (IR version 10),
// an expansion past 2^22 nodes (calls nested to double at every level).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// FunctionProto.attribute_proto (IR 9), which the bookworm onnx.proto
/// predates: field 11, length-delimited AttributeProtos.
constexpr int kAttributeProtoField = 11;
/// FunctionProto.overload (IR 10).
constexpr int kOverloadField = 13;
/// The deepest chain of calls expanded.
constexpr int kMaxDepth = 64;
/// The most nodes the expansion may produce (a function calling another
/// twice, nested, doubles the count per level).
constexpr int64_t kMaxNodes = int64_t(1) << 22;

struct Function {
  const onnx::FunctionProto *proto;
  llvm::StringMap<onnx::AttributeProto> defaults;
};

class Inliner {
public:
  Inliner(onnx::ModelProto &model, std::string &error)
      : model(model), error(error) {}

  LogicalResult run();

private:
  onnx::ModelProto &model;
  std::string &error;
  std::map<std::pair<std::string, std::string>, Function> functions;
  int64_t defaultOpset = 0;
  int64_t calls = 0;
  int64_t emitted = 0; // nodes written so far
  llvm::StringSet<> prefixes;
  std::vector<std::string> stack; // the functions being expanded

  const Function *find(const onnx::NodeProto &node) const {
    auto it = functions.find({node.domain(), node.op_type()});
    return it == functions.end() ? nullptr : &it->second;
  }
  std::string who(const onnx::NodeProto &node) const {
    return "node " +
           (node.name().empty() ? std::string("of type")
                                : "'" + node.name() + "'") +
           " (" + node.domain() + "::" + node.op_type() + ")";
  }
  LogicalResult
  expandNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
              google::protobuf::RepeatedPtrField<onnx::NodeProto> &out);
  LogicalResult expandGraphAttrs(onnx::NodeProto &node);
  /// The nodes `node` expands to (calls in If branches not counted),
  /// saturating past kMaxNodes; a recursive call counts 1 (expandCall
  /// reports it).
  int64_t expandedSize(const onnx::NodeProto &node) {
    const Function *fn = find(node);
    if (!fn)
      return 1;
    auto [it, fresh] = sizes.try_emplace(fn->proto, -1);
    if (!fresh)
      return it->second < 0 ? 1 : it->second;
    int64_t n = 0;
    for (const auto &body : fn->proto->node())
      n = std::min(kMaxNodes + 1, n + expandedSize(body));
    sizes[fn->proto] = n;
    return n;
  }
  llvm::DenseMap<const onnx::FunctionProto *, int64_t> sizes;
  LogicalResult
  expandCall(const onnx::NodeProto &call, const Function &fn,
             google::protobuf::RepeatedPtrField<onnx::NodeProto> &out);
};

LogicalResult Inliner::run() {
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      defaultOpset = o.version();
  for (const auto &fn : model.functions()) {
    Function f{&fn, {}};
    const auto &unknown = fn.unknown_fields();
    for (int i = 0; i < unknown.field_count(); ++i) {
      const auto &field = unknown.field(i);
      if (field.number() == kOverloadField) {
        error = "function '" + fn.domain() + "::" + fn.name() +
                "' has an overload (ONNX IR version 10), which tidal does "
                "not import";
        return failure();
      }
      if (field.number() != kAttributeProtoField ||
          field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
        continue;
      onnx::AttributeProto attr;
      if (!attr.ParseFromString(field.length_delimited())) {
        error = "function '" + fn.domain() + "::" + fn.name() +
                "' has an attribute default that does not parse";
        return failure();
      }
      f.defaults[attr.name()] = attr;
    }
    for (const auto &o : fn.opset_import())
      if ((o.domain().empty() || o.domain() == "ai.onnx") &&
          o.version() != defaultOpset) {
        error = "function '" + fn.domain() + "::" + fn.name() +
                "' imports opset " + std::to_string(o.version()) +
                " of the default domain and the model " +
                std::to_string(defaultOpset) + ": tidal imports one opset";
        return failure();
      }
    if (!functions.emplace(std::make_pair(fn.domain(), fn.name()), f).second) {
      error = "function '" + fn.domain() + "::" + fn.name() +
              "' is defined twice (overloads, ONNX IR version 10, are not "
              "imported)";
      return failure();
    }
  }
  if (functions.empty())
    return success();
  // Count first: copying a doubling chain of calls would take minutes
  // before the limit below stops it.
  int64_t total = 0;
  for (const auto &node : model.graph().node())
    total = std::min(kMaxNodes + 1, total + expandedSize(node));
  if (total > kMaxNodes) {
    error = "expanding the model's functions gives more than " +
            std::to_string(kMaxNodes) + " nodes";
    return failure();
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> flat;
  if (failed(expandNodes(model.graph().node(), flat)))
    return failure();
  model.mutable_graph()->mutable_node()->Swap(&flat);
  for (auto &ti : *model.mutable_training_info()) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> algorithm;
    if (failed(expandNodes(ti.algorithm().node(), algorithm)))
      return failure();
    ti.mutable_algorithm()->mutable_node()->Swap(&algorithm);
  }
  model.clear_functions();
  return success();
}

LogicalResult Inliner::expandGraphAttrs(onnx::NodeProto &node) {
  auto expandGraph = [&](onnx::GraphProto &g) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    if (failed(expandNodes(g.node(), nodes)))
      return failure();
    g.mutable_node()->Swap(&nodes);
    return success();
  };
  for (auto &attr : *node.mutable_attribute()) {
    if (attr.has_g() && failed(expandGraph(*attr.mutable_g())))
      return failure();
    for (auto &g : *attr.mutable_graphs())
      if (failed(expandGraph(g)))
        return failure();
  }
  return success();
}

LogicalResult Inliner::expandNodes(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
    google::protobuf::RepeatedPtrField<onnx::NodeProto> &out) {
  for (const auto &node : nodes) {
    if (const Function *fn = find(node)) {
      if (failed(expandCall(node, *fn, out)))
        return failure();
      continue;
    }
    if (++emitted > kMaxNodes) {
      error = "expanding the model's functions gives more than " +
              std::to_string(kMaxNodes) + " nodes";
      return failure();
    }
    onnx::NodeProto *copy = out.Add();
    *copy = node;
    if (failed(expandGraphAttrs(*copy)))
      return failure();
  }
  return success();
}

LogicalResult
Inliner::expandCall(const onnx::NodeProto &call, const Function &fn,
                    google::protobuf::RepeatedPtrField<onnx::NodeProto> &out) {
  const onnx::FunctionProto &f = *fn.proto;
  const std::string name = f.domain() + "::" + f.name();
  for (const std::string &s : stack)
    if (s == name) {
      error = who(call) + ": function '" + name + "' calls itself";
      return failure();
    }
  if ((int)stack.size() >= kMaxDepth) {
    error = who(call) + ": functions nest deeper than " +
            std::to_string(kMaxDepth) + " calls";
    return failure();
  }
  if (call.input_size() > f.input_size() ||
      call.output_size() > f.output_size()) {
    error = who(call) + ": " + std::to_string(call.input_size()) +
            " inputs and " + std::to_string(call.output_size()) +
            " outputs for function '" + name + "', which has " +
            std::to_string(f.input_size()) + " and " +
            std::to_string(f.output_size());
    return failure();
  }
  // A prefix no other call used (two calls may share a name).
  std::string prefix = (call.name().empty() ? f.name() : call.name()) + "/";
  while (!prefixes.insert(prefix).second)
    prefix = (call.name().empty() ? f.name() : call.name()) + "#" +
             std::to_string(++calls) + "/";
  llvm::StringMap<std::string> formal;
  for (int i = 0; i < f.input_size(); ++i)
    formal[f.input(i)] = i < call.input_size() ? call.input(i) : "";
  for (int i = 0; i < f.output_size(); ++i)
    formal[f.output(i)] = i < call.output_size() && !call.output(i).empty()
                              ? call.output(i)
                              : prefix + f.output(i);
  auto rename = [&](const std::string &v) -> std::string {
    if (v.empty())
      return v;
    auto it = formal.find(v);
    return it != formal.end() ? it->second : prefix + v;
  };

  google::protobuf::RepeatedPtrField<onnx::NodeProto> body;
  for (int k = 0; k < f.node_size(); ++k) {
    const onnx::NodeProto &src = f.node(k);
    onnx::NodeProto *node = body.Add();
    *node = src;
    node->set_name(prefix + (src.name().empty()
                                 ? src.op_type() + "#" + std::to_string(k)
                                 : src.name()));
    for (std::string &in : *node->mutable_input())
      in = rename(in);
    for (std::string &o : *node->mutable_output())
      o = rename(o);
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
    for (const auto &attr : src.attribute()) {
      if (attr.ref_attr_name().empty()) {
        onnx::AttributeProto *a = attrs.Add();
        *a = attr;
        if (a->has_g())
          renameOuter(*a->mutable_g(), {}, rename);
        for (auto &g : *a->mutable_graphs())
          renameOuter(g, {}, rename);
        continue;
      }
      const onnx::AttributeProto *given =
          findAttribute(call, attr.ref_attr_name());
      if (!given) {
        auto it = fn.defaults.find(attr.ref_attr_name());
        if (it != fn.defaults.end())
          given = &it->second;
      }
      if (!given)
        continue; // neither given nor defaulted: the op's own default
      onnx::AttributeProto *a = attrs.Add();
      *a = *given;
      a->set_name(attr.name());
      a->clear_ref_attr_name();
    }
    node->mutable_attribute()->Swap(&attrs);
  }
  stack.push_back(name);
  LogicalResult result = expandNodes(body, out);
  stack.pop_back();
  return result;
}

} // namespace

void importer::renameOuter(
    onnx::GraphProto &g, llvm::StringSet<> local,
    const std::function<std::string(const std::string &)> &rename) {
  for (const auto &name : definedNames(g))
    local.insert(name.getKey());
  for (auto &node : *g.mutable_node()) {
    for (std::string &in : *node.mutable_input())
      if (!in.empty() && !local.contains(in))
        in = rename(in);
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        renameOuter(*attr.mutable_g(), local, rename);
      for (auto &sub : *attr.mutable_graphs())
        renameOuter(sub, local, rename);
    }
  }
  for (auto &out : *g.mutable_output())
    if (!local.contains(out.name()))
      out.set_name(rename(out.name()));
}

LogicalResult importer::inlineModelFunctions(onnx::ModelProto &model,
                                             std::string &error) {
  return Inliner(model, error).run();
}
