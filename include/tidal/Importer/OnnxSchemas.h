//===- OnnxSchemas.h - ONNX operator schemas tidal checks nodes against ---===//
//
// The arity and attributes of every ONNX operator version tidal imports,
// generated from ONNX's own schemas (scripts/gen_onnx_schemas.py writes
// lib/Importer/OnnxSchemas.inc). The importer checks every node against its
// schema before any converter reads it, so that converters only ever index
// inputs, outputs and attributes whose presence and type are known.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_IMPORTER_ONNXSCHEMAS_H
#define TIDAL_IMPORTER_ONNXSCHEMAS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace mlir::tidal {

struct OnnxAttributeSchema {
  const char *name;
  /// An onnx::AttributeProto::AttributeType.
  int type;
  bool required;
};

struct OnnxSchema {
  const char *domain;
  const char *opType;
  int64_t sinceVersion;
  int minInputs, maxInputs, minOutputs, maxOutputs;
  /// One letter per formal parameter: S single, O optional, V variadic.
  const char *inputs, *outputs;
  std::vector<OnnxAttributeSchema> attributes;
};

/// The schema of version `sinceVersion` of `opType` in `domain` ("" for
/// ai.onnx), or null when the table has none.
const OnnxSchema *findOnnxSchema(llvm::StringRef domain, llvm::StringRef opType,
                                 int64_t sinceVersion);

/// Checks `node` against `schema`: input and output counts, that no required
/// input or output is left unnamed, that every attribute is one the schema
/// defines with the type it defines, and that required attributes are
/// present. Returns the first violation as a message ("" when the node
/// conforms).
std::string checkNodeSchema(const onnx::NodeProto &node,
                            const OnnxSchema &schema);

/// The name ONNX gives an attribute type ("INT", "FLOATS", ...).
llvm::StringRef attributeTypeName(int type);

} // namespace mlir::tidal

#endif // TIDAL_IMPORTER_ONNXSCHEMAS_H
