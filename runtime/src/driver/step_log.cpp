// step_log.cpp - the --log JSON Lines file.
#include "step_log.h"

#include "error.h"
#include "file_util.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tidalrt_driver {

std::string json_number(double value) {
  if (!std::isfinite(value))
    return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

std::string text_number(double value) {
  // printf would write "-nan" for the NaN that x86 arithmetic produces.
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return json_number(value);
}

step_log::step_log(const std::string &path,
                   std::optional<uint64_t> keep_through)
    : path(path) {
  if (path.empty())
    return;
  if (keep_through) {
    std::string kept;
    if (std::FILE *old = std::fopen(path.c_str(), "r")) {
      char *line = nullptr;
      size_t capacity = 0;
      ssize_t length;
      unsigned long long step;
      while ((length = getline(&line, &capacity, old)) > 0)
        if (line[length - 1] == '\n' &&
            std::sscanf(line, "{\"step\": %llu,", &step) == 1 &&
            step <= *keep_through)
          kept.append(line, static_cast<size_t>(length));
      std::free(line);
      std::fclose(old);
    }
    write_file_atomically(path, kept);
  }
  file = std::fopen(path.c_str(), keep_through ? "a" : "w");
  if (!file)
    fail_input("--log " + path + ": cannot write: " + errno_message(errno));
}

step_log::~step_log() {
  if (file)
    std::fclose(file);
}

void step_log::write(uint64_t step, double loss, double step_ms,
                     uint64_t host_peak_bytes, uint64_t device_peak_bytes,
                     uint64_t bytes_to_host, uint64_t bytes_to_device,
                     double copy_seconds, double copy_stall_seconds,
                     int threads) {
  if (!file)
    return;
  int n = std::fprintf(
      file,
      "{\"step\": %llu, \"loss\": %s, \"step_ms\": %.6f, "
      "\"device_peak_bytes\": %llu, \"host_peak_bytes\": %llu, "
      "\"bytes_to_host\": %llu, \"bytes_to_device\": %llu, "
      "\"copy_seconds\": %s, \"copy_stall_seconds\": %s%s}\n",
      static_cast<unsigned long long>(step), json_number(loss).c_str(), step_ms,
      static_cast<unsigned long long>(device_peak_bytes),
      static_cast<unsigned long long>(host_peak_bytes),
      static_cast<unsigned long long>(bytes_to_host),
      static_cast<unsigned long long>(bytes_to_device),
      json_number(copy_seconds).c_str(),
      json_number(copy_stall_seconds).c_str(),
      threads > 0 ? (", \"threads\": " + std::to_string(threads)).c_str() : "");
  if (n < 0 || std::fflush(file) != 0)
    failed = true;
}

void step_log::close() {
  if (!file)
    return;
  bool bad = failed || std::ferror(file);
  int error = errno;
  if (std::fclose(file) != 0) {
    bad = true;
    error = errno;
  }
  file = nullptr;
  if (bad)
    fail_input(path + ": cannot write: " + errno_message(error));
}

} // namespace tidalrt_driver
