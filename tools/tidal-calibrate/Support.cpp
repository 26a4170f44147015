//===- Support.cpp - tidal-calibrate's shared helpers ---------------------===//
//
// See Support.h.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace calibrate {

std::string tempPath;

/// Reports `message` and exits 1, removing the output's temp file.
[[noreturn]] void fatal(const Twine &message) {
  if (!tempPath.empty())
    unlink(tempPath.c_str());
  llvm::outs().flush();
  llvm::errs() << "tidal-calibrate: error: " << message << "\n";
  std::exit(1);
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// `v` to `decimals` places. Dividing the rounded integer by a power of ten
/// gives the double nearest the decimal, which prints as written ("222.6";
/// multiplying by 0.1 instead gives 222.60000000000002).
double roundTo(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

/// Runs `body` in a forked child and returns its line in `line`; fails on
/// a crash, a non-zero exit or a child still running after `timeoutS`.
std::string runInChild(const std::function<std::string()> &body,
                       double timeoutS, std::string &line) {
  int fds[2];
  if (pipe(fds) != 0)
    return std::string("pipe: ") + std::strerror(errno);
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::string("fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    // The parent owns the temp file; a crash here must not remove it.
    if (!tempPath.empty())
      llvm::sys::DontRemoveFileOnSignal(tempPath);
    tempPath.clear();
    llvm::sys::unregisterHandlers();
    close(fds[0]);
    std::string result = body() + "\n";
    const char *p = result.data();
    size_t left = result.size();
    while (left > 0) {
      ssize_t w = write(fds[1], p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        _exit(3);
      p += w;
      left -= (size_t)w;
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  Clock::time_point start = Clock::now();
  bool timedOut = false;
  for (;;) {
    double left = timeoutS - secondsSince(start);
    if (left <= 0) {
      timedOut = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int r = poll(&pfd, 1, (int)std::ceil(left * 1000));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      break;
    if (r == 0)
      continue;
    char buf[512];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    out.append(buf, (size_t)n);
  }
  close(fds[0]);
  if (timedOut)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut)
    return "did not finish in " + std::to_string((int)timeoutS) + " s";
  if (WIFSIGNALED(status))
    return std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  line = out;
  return "";
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (StringRef(line).starts_with("model name")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return StringRef(line).substr(colon + 1).trim().str();
    }
  return "host CPU";
}

/// "load 0.52 on 2 CPUs" (the 1-minute load average), or "": on a busy
/// machine the figures come out low and noisy, and the summary says so.
std::string loadNote() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (!(in >> load))
    return "";
  std::string s;
  raw_string_ostream os(s);
  os << "load " << format("%.2f", load) << " on "
     << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs";
  return s;
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0])
    return "unknown";
  return buf;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace calibrate
