//===- OpVersions.h - the ONNX operator versions tidal reads ----*- C++ -*-===//
//
// tidal's own record of ONNX's operator versions (taken from ONNX's
// docs/Operators.md and Changelog.md), so that the importer resolves which
// version of an operator a node uses at its model's opset without asking
// the installed ONNX library, which may predate the opset. It also says
// which of those versions tidal imports, and prints them as the
// supported-operators page (`tidalc --list-ops`).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_IMPORTER_OPVERSIONS_H
#define TIDAL_IMPORTER_OPVERSIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::tidal {

/// The lowest and highest default-domain opsets the importer accepts. An
/// older model is accepted when every operator it uses is defined exactly as
/// at kMinOpset.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 22;

/// How the importer handles an operator.
enum class OpImport {
  /// Becomes tidal ops (OpConverters.cpp and its siblings); many of these
  /// also fold to constants when their inputs are known (ShapeFolding.cpp).
  op,
  /// Only evaluated at compile time, on shapes and constants
  /// (ShapeFolding.cpp); never run-time IR.
  compileTime,
  /// An ai.onnx.preview.training operator (TrainingOps.cpp).
  training,
  /// Control flow imported inline: Loop and Scan bodies once per iteration
  /// (LoopUnrolling.cpp), If's branch taken or both branches and a
  /// selection (IfInlining.cpp).
  unrolled,
  /// A sequence operator: sequences are lists of tensors at import, never
  /// IR (SequenceOps.cpp).
  sequence,
};

/// One operator tidal imports.
struct OpVersionInfo {
  /// "" for the default domain (ai.onnx).
  llvm::StringRef domain;
  llvm::StringRef opType;
  /// Bit v set: ONNX has a version of the operator since opset v (its
  /// since_version), for every v up to kMaxOpset.
  uint32_t since;
  /// Bit v set: tidal imports version v.
  uint32_t handled;
  OpImport how;
  /// What changed in the versions tidal reads, and what it does about it.
  llvm::StringRef notes;
};

/// Every operator tidal imports, ordered by domain and name.
llvm::ArrayRef<OpVersionInfo> supportedOps();

/// The entry of `opType` in `domain` ("" or "ai.onnx" for the default
/// domain), or null when tidal does not import it.
const OpVersionInfo *findOp(llvm::StringRef domain, llvm::StringRef opType);

/// The version of `op` in force at `opset` (its since_version), or 0 when
/// ONNX defines none at that opset.
int64_t resolveOpVersion(const OpVersionInfo &op, int64_t opset);

/// Whether a model at `opset` may use `op`: the version in force is one tidal
/// imports, and below kMinOpset it is also the one in force at kMinOpset.
bool acceptsOpset(const OpVersionInfo &op, int64_t opset);

/// Why a node of `op` at `opset` is not accepted, naming the operator
/// version and the nearest supported form ("Op-v (opsets a-b)"), or "" when
/// it is accepted.
std::string unsupportedVersionReason(const OpVersionInfo &op, int64_t opset);

/// The supported operators as a Markdown page (docs/supported-ops.md).
void printSupportedOps(llvm::raw_ostream &os);

} // namespace mlir::tidal

#endif // TIDAL_IMPORTER_OPVERSIONS_H
