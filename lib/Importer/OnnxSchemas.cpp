//===- OnnxSchemas.cpp - checking ONNX nodes against their schemas --------===//

#include "tidal/Importer/OnnxSchemas.h"

#include <onnx/onnx_pb.h>

#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tidal;

namespace {

const OnnxSchema kSchemas[] = {
#include "OnnxSchemas.inc"
};

/// The type an attribute declares, or for files that leave `type` unset
/// (old exporters), the one its populated field implies.
int attributeType(const onnx::AttributeProto &a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED)
    return a.type();
  if (a.has_f())
    return onnx::AttributeProto::FLOAT;
  if (a.has_i())
    return onnx::AttributeProto::INT;
  if (a.has_s())
    return onnx::AttributeProto::STRING;
  if (a.has_t())
    return onnx::AttributeProto::TENSOR;
  if (a.has_g())
    return onnx::AttributeProto::GRAPH;
  if (a.floats_size())
    return onnx::AttributeProto::FLOATS;
  if (a.ints_size())
    return onnx::AttributeProto::INTS;
  if (a.strings_size())
    return onnx::AttributeProto::STRINGS;
  if (a.tensors_size())
    return onnx::AttributeProto::TENSORS;
  if (a.graphs_size())
    return onnx::AttributeProto::GRAPHS;
  return onnx::AttributeProto::UNDEFINED;
}

bool isList(int type) {
  switch (type) {
  case onnx::AttributeProto::FLOATS:
  case onnx::AttributeProto::INTS:
  case onnx::AttributeProto::STRINGS:
  case onnx::AttributeProto::TENSORS:
  case onnx::AttributeProto::GRAPHS:
  case onnx::AttributeProto::SPARSE_TENSORS:
  case onnx::AttributeProto::TYPE_PROTOS:
    return true;
  default:
    return false;
  }
}

std::string plural(int n, llvm::StringRef what) {
  return std::to_string(n) + " " + what.str() + (n == 1 ? "" : "s");
}

/// "2 inputs", "1 to 3 inputs", "at least 1 input".
std::string range(int lo, int hi, llvm::StringRef what) {
  if (lo == hi)
    return plural(lo, what);
  if (hi == INT32_MAX)
    return "at least " + plural(lo, what);
  return std::to_string(lo) + " to " + plural(hi, what);
}

/// The formal parameter that position `i` binds to.
char formalAt(const char *formals, int i) {
  int n = static_cast<int>(std::strlen(formals));
  if (n == 0)
    return 'O';
  if (i < n)
    return formals[i];
  return formals[n - 1] == 'V' ? 'V' : 'O';
}

} // namespace

llvm::StringRef mlir::tidal::attributeTypeName(int type) {
  if (!onnx::AttributeProto::AttributeType_IsValid(type) ||
      type == onnx::AttributeProto::UNDEFINED)
    return "no value";
  return onnx::AttributeProto::AttributeType_Name(
      static_cast<onnx::AttributeProto::AttributeType>(type));
}

const OnnxSchema *mlir::tidal::findOnnxSchema(llvm::StringRef domain,
                                              llvm::StringRef opType,
                                              int64_t sinceVersion) {
  if (domain == "ai.onnx")
    domain = "";
  for (const OnnxSchema &s : kSchemas)
    if (s.sinceVersion == sinceVersion && opType == s.opType &&
        domain == s.domain)
      return &s;
  return nullptr;
}

std::string mlir::tidal::checkNodeSchema(const onnx::NodeProto &node,
                                         const OnnxSchema &schema) {
  std::string form =
      std::string(schema.opType) + "-" + std::to_string(schema.sinceVersion);
  auto count = [&](int n, int lo, int hi, llvm::StringRef what) {
    return form + " takes " + range(lo, hi, what) + ", the node has " +
           std::to_string(n);
  };
  int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema.minInputs || inputs > schema.maxInputs)
    return count(inputs, schema.minInputs, schema.maxInputs, "input");
  if (outputs < schema.minOutputs || outputs > schema.maxOutputs)
    return form + " has " +
           range(schema.minOutputs, schema.maxOutputs, "output") +
           ", the node has " + std::to_string(outputs);
  for (int i = 0; i < inputs; ++i)
    if (node.input(i).empty() && formalAt(schema.inputs, i) != 'O')
      return form + ": input " + std::to_string(i) +
             " is required but the node leaves it empty";
  for (int i = 0; i < outputs; ++i)
    if (node.output(i).empty() && formalAt(schema.outputs, i) == 'S')
      return form + ": output " + std::to_string(i) +
             " is required but the node leaves it empty";
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (!seen.insert(a.name()).second)
      return "attribute '" + a.name() + "' is given twice";
    const OnnxAttributeSchema *match = nullptr;
    for (const OnnxAttributeSchema &s : schema.attributes)
      if (a.name() == s.name)
        match = &s;
    if (!match)
      return form + " has no attribute '" + a.name() + "'";
    int type = attributeType(a);
    bool list = isList(match->type);
    // An empty list written without its type has nothing to check.
    if (type != match->type && !(list && type == 0))
      return "attribute '" + a.name() + "' must be " +
             attributeTypeName(match->type).str() + ", the node gives " +
             attributeTypeName(type).str();
  }
  for (const OnnxAttributeSchema &s : schema.attributes)
    if (s.required && !seen.contains(s.name))
      return "required attribute '" + std::string(s.name) + "' is missing";
  return "";
}
