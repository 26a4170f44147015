//===- Support.h - tidal-calibrate's shared helpers -------------*- C++ -*-===//
//
// Errors, clocks, forked measurements and facts about the machine, shared by
// the host measurements (tidal-calibrate.cpp) and the per-op measurements
// (OpTimes.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_SUPPORT_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_SUPPORT_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace calibrate {

/// The output's temp file while it exists (removed by fatal).
extern std::string tempPath;

/// Reports `message` and exits 1, removing the output's temp file.
[[noreturn]] void fatal(const llvm::Twine &message);

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start);
double median(std::vector<double> v);
/// `v` to `decimals` places, as the double nearest the decimal.
double roundTo(double v, int decimals);

/// Runs `body` in a forked child and returns its output in `line`; fails
/// on a crash, a non-zero exit or a child still running after `timeoutS`.
std::string runInChild(const std::function<std::string()> &body,
                       double timeoutS, std::string &line);

/// The CPU's model name, "load L on N CPUs" (or ""), the host name, and
/// the time now as ISO 8601 UTC.
std::string cpuModel();
std::string loadNote();
std::string hostName();
std::string utcNow();

/// The output file: created (empty, as a temp file next to it) before any
/// measurement, so an unwritable path fails at once, and renamed over the
/// path only when complete. Devices and pipes (/dev/null, a FIFO) are
/// written in place, as tidalc does: renaming over them would replace them.
class Output {
public:
  explicit Output(std::string path) : path(std::move(path)) {
    if (toStdout())
      return;
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(this->path, st) && llvm::sys::fs::exists(st)) {
      if (llvm::sys::fs::is_directory(st))
        fatal("cannot write '" + this->path + "': it is a directory");
      if (!llvm::sys::fs::is_regular_file(st)) {
        fd = open(this->path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
          fatal("cannot write '" + this->path + "': " + std::strerror(errno));
        inPlace = true;
        return;
      }
    }
    tempPath = this->path + ".tmp." + std::to_string(getpid());
    fd = open(tempPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::string reason = std::strerror(errno);
      tempPath.clear();
      fatal("cannot write '" + this->path + "': " + reason);
    }
    llvm::sys::RemoveFileOnSignal(tempPath);
  }
  ~Output() { discard(); }

  bool toStdout() const { return path.empty() || path == "-"; }

  void commit(const std::string &text) {
    if (toStdout()) {
      llvm::outs() << text;
      llvm::outs().flush();
      if (llvm::outs().has_error()) {
        std::string reason = llvm::outs().error().message();
        llvm::outs().clear_error();
        fatal("cannot write to stdout: " + reason);
      }
      return;
    }
    const char *p = text.data();
    size_t left = text.size();
    while (left > 0) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        failWrite();
      p += w;
      left -= (size_t)w;
    }
    if (inPlace) {
      int closed = close(fd);
      fd = -1;
      if (closed != 0)
        failWrite();
      return;
    }
    bool synced = fsync(fd) == 0;
    int closed = close(fd);
    fd = -1;
    if (!synced || closed != 0)
      failWrite();
    if (rename(tempPath.c_str(), path.c_str()) != 0)
      failWrite();
    llvm::sys::DontRemoveFileOnSignal(tempPath);
    tempPath.clear();
  }

private:
  [[noreturn]] void failWrite() {
    std::string reason = std::strerror(errno);
    discard();
    fatal("cannot write '" + path + "': " + reason);
  }
  void discard() {
    if (fd >= 0)
      close(fd);
    fd = -1;
    if (!tempPath.empty()) {
      unlink(tempPath.c_str());
      llvm::sys::DontRemoveFileOnSignal(tempPath);
      tempPath.clear();
    }
  }

  std::string path;
  int fd = -1;
  bool inPlace = false;
};

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_SUPPORT_H
