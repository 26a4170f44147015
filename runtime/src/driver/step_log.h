// step_log.h - the --log file: one JSON object per step (JSON Lines).
#ifndef TIDALRT_DRIVER_STEP_LOG_H
#define TIDALRT_DRIVER_STEP_LOG_H

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace tidalrt_driver {

class step_log {
public:
  // An empty `path` disables the log. With `keep_through`, the lines of
  // steps up to it already in the file are kept (a resumed run) and the
  // rest, a partial last line included, dropped; otherwise the file is
  // created afresh. Throws (exit 1) if it cannot be written.
  explicit step_log(const std::string &path,
                    std::optional<uint64_t> keep_through = std::nullopt);
  ~step_log();
  step_log(const step_log &) = delete;
  step_log &operator=(const step_log &) = delete;

  // {"step": ..., "loss": ..., "step_ms": ..., "device_peak_bytes": ...,
  //  "host_peak_bytes": ..., "bytes_to_host": ..., "bytes_to_device": ...,
  //  "copy_seconds": ..., "copy_stall_seconds": ..., "threads": ...} (the
  // device figures are the
  // step's, 0 on the cpu target; "threads", the OpenMP threads the step ran
  // on, only when `threads` > 0). A non-finite loss is written as null.
  // Each line is flushed.
  void write(uint64_t step, double loss, double step_ms,
             uint64_t host_peak_bytes, uint64_t device_peak_bytes = 0,
             uint64_t bytes_to_host = 0, uint64_t bytes_to_device = 0,
             double copy_seconds = 0, double copy_stall_seconds = 0,
             int threads = 0);
  // Closes the file; throws (exit 1) if any write failed.
  void close();

private:
  std::string path;
  std::FILE *file = nullptr;
  bool failed = false;
};

// A double as JSON: %.9g (every float32 round-trips), null if not finite.
std::string json_number(double value);
// A double for the stdout summary: %.9g, or nan, inf, -inf.
std::string text_number(double value);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_STEP_LOG_H
