// file_util.h - reading whole files and writing them atomically.
#ifndef TIDALRT_DRIVER_FILE_UTIL_H
#define TIDALRT_DRIVER_FILE_UTIL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace tidalrt_driver {

// The contents of `path`. Throws a driver_error (exit 1)
// "<path>: cannot read: <reason>".
std::string read_file(const std::string &path);

// The directory part of `path` ("." when it has none).
std::string directory_of(const std::string &path);

// Reads `size` bytes at `offset` of the file `path` into `dst`. Throws a
// driver_error (exit 1) naming the file when it cannot, or is shorter.
void read_file_range(const std::string &path, uint64_t offset, void *dst,
                     size_t size);

// Writes `bytes` to "<path>.tmp.<pid>" in the same directory, fsyncs it and
// renames it over `path`. On failure removes the temporary file, leaves
// `path` as it was and throws a driver_error (exit 1)
// "<path>: cannot write: <reason>".
void write_file_atomically(const std::string &path, const std::string &bytes);

// The same with the contents written by `writer` to the temporary file's
// descriptor; it returns 0 or an errno value.
void write_file_atomically(const std::string &path,
                           const std::function<int(int fd)> &writer);

// Checks, before any work is done, that `path` can be created: its
// directory exists and `path` is not a directory. Throws a driver_error
// (exit 1) naming `option` and the reason.
void check_output_path(const std::string &option, const std::string &path);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_FILE_UTIL_H
