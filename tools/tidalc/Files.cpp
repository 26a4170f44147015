//===- Files.cpp - tidalc's file and size helpers -------------------------===//
//
// See Files.h.
//
//===----------------------------------------------------------------------===//

#include "Files.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tidalc {

std::string writeAtomically(StringRef path, StringRef text) {
  if (path == "-") {
    outs() << text;
    outs().flush();
    return "";
  }
  // Devices and pipes (/dev/null, a FIFO) are written in place: renaming
  // over them would replace the device with a regular file.
  sys::fs::file_status st;
  if (!sys::fs::status(path, st) && sys::fs::exists(st) &&
      !sys::fs::is_regular_file(st)) {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (!ec)
      os << text;
    if (ec || os.has_error()) {
      os.clear_error();
      return "cannot write '" + path.str() + "'";
    }
    return "";
  }
  SmallString<256> dir(path);
  sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  SmallString<256> model(dir);
  sys::path::append(model, sys::path::filename(path) + ".tmp%%%%%%");
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, tmp))
    return "cannot write '" + path.str() + "': " + ec.message();
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      sys::fs::remove(tmp);
      return "cannot write '" + path.str() + "'";
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return "cannot write '" + path.str() + "': " + ec.message();
  }
  return "";
}

bool readFile(StringRef path, std::vector<char> &bytes, std::string &error) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  bytes.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  return true;
}

std::optional<int64_t> parseSize(StringRef text) {
  text = text.trim();
  size_t digits = 0;
  while (digits < text.size() && (isDigit(text[digits]) || text[digits] == '.'))
    ++digits;
  double number;
  if (digits == 0 || text.substr(0, digits).getAsDouble(number))
    return std::nullopt;
  StringRef unit = text.substr(digits).trim();
  static const std::pair<StringRef, double> units[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  for (auto [name, scale] : units)
    if (unit.equals_insensitive(name)) {
      double bytes = number * scale;
      if (bytes < 1 || bytes > 9.2e18)
        return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  return std::nullopt;
}

} // namespace tidalc
