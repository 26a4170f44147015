//===- EmbedModel.h - the model bytes a training executable carries -*- C++
//-*-===//
//
// An executable carries its ONNX model (initial weights, and the template
// --save writes). A model whose initializers are ONNX external data is
// carried with that data moved into the program blob: every external
// initializer is rewritten to location "tidal:embedded" with its offset in
// the blob entry named kExternalDataBlob, which the runtime's ONNX reader
// resolves (runtime/src/driver/onnx_weights.cpp). Models over protobuf's
// 2 GiB limit thus compile as well as small ones.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_IMPORTER_EMBEDMODEL_H
#define TIDAL_IMPORTER_EMBEDMODEL_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::tidal {

/// The program blob entry of the external data (the runtime's
/// external_data_blob).
inline constexpr const char *kExternalDataBlob = "tidal.external_data";

/// Reads the ONNX model at `path` into `model`, its external data (if any)
/// moved into `external` as described above. False with `error` set when
/// the file or its external data cannot be read.
bool readModelForEmbedding(llvm::StringRef path, std::vector<char> &model,
                           std::vector<char> &external, std::string &error);

} // namespace mlir::tidal

#endif // TIDAL_IMPORTER_EMBEDMODEL_H
