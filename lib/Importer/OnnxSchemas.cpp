//===- OnnxSchemas.cpp - operator versions from ONNX's schema registry ----===//
//
// Compiled with exceptions on: ONNX's headers throw.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <onnx/defs/schema.h>

int64_t mlir::tidal::importer::resolveOpVersion(const std::string &opType,
                                                int64_t opset) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(opType, int(opset), onnx::ONNX_DOMAIN);
  return schema ? schema->SinceVersion() : 0;
}
