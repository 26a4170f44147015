//===- Files.h - tidalc's file and size helpers -----------------*- C++ -*-===//
//
// Whole-file reads, atomic writes (SPEC: nothing partial is ever left), and
// the size syntax of --device-memory.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDALC_FILES_H
#define TIDAL_TOOLS_TIDALC_FILES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidalc {

/// Writes `text` to `path` atomically: a temp file in the same directory,
/// then a rename ("-": stdout; a device or FIFO: in place). Returns an
/// error message or "".
std::string writeAtomically(llvm::StringRef path, llvm::StringRef text);

/// Reads a whole file; false and an error message on failure.
bool readFile(llvm::StringRef path, std::vector<char> &bytes,
              std::string &error);

/// Parses a size: bytes, or a number with KB/MB/GB/TB (powers of 1000) or
/// KiB/MiB/GiB/TiB (powers of 1024).
std::optional<int64_t> parseSize(llvm::StringRef text);

} // namespace tidalc

#endif // TIDAL_TOOLS_TIDALC_FILES_H
