//===- Json.h - llvm::json::parse with a nesting limit ----------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level and so does the
// destructor of the value it returns: a 100 KB file of nested brackets
// overflowed the stack of tidal-calibrate --check (found while fuzzing the
// profile reader). The readers of files tidal reads back (machine profiles,
// plans) parse through parseJsonBounded instead.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_SUPPORT_JSON_H
#define TIDAL_SUPPORT_JSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace mlir::tidal {

/// The deepest nesting parseJsonBounded accepts; tidal's own documents
/// nest fewer than ten levels.
constexpr unsigned kMaxJsonDepth = 512;

/// llvm::json::parse, or an error when arrays and objects nest deeper than
/// kMaxJsonDepth (brackets inside strings do not count).
inline llvm::Expected<llvm::json::Value>
parseJsonBounded(llvm::StringRef text) {
  unsigned depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "arrays and objects nest deeper than %u levels", kMaxJsonDepth);
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

} // namespace mlir::tidal

#endif // TIDAL_SUPPORT_JSON_H
