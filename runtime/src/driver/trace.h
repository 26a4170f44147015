// trace.h - the --trace file: the measured timeline as a Chrome trace.
#ifndef TIDALRT_DRIVER_TRACE_H
#define TIDALRT_DRIVER_TRACE_H

#include <chrono>
#include <cstdint>
#include <string>

namespace tidalrt_driver {

// Collects events in memory; write() stores them atomically.
class trace_recorder {
public:
  explicit trace_recorder(bool enabled);
  bool enabled() const { return on; }

  // Microseconds since the recorder was made (steady clock).
  double now_us() const;
  // A complete event ("ph": "X") on the host thread; `args` is the body of
  // a JSON object (e.g. "\"loss\": 0.5") or empty.
  void complete(const std::string &name, const char *category, double start_us,
                double duration_us, const std::string &args = "");
  // A sample of the "host_bytes" counter track ("ph": "C").
  void host_bytes(double at_us, uint64_t bytes);
  // A sample of the "threads" counter track: the OpenMP threads the
  // kernels run on from `at_us` (--threads auto changes it).
  void threads(double at_us, int threads);

  // A data-parallel run's rank: its events go to process `rank` + 1 (so
  // that merged traces show one process per rank, scripts/merge_traces.py).
  void set_rank(int64_t rank);
  // A collective that ran on the communication thread (track 2), between
  // two steady-clock times in seconds (tidalrt_comm_event_t).
  void collective(const std::string &name, double start_seconds,
                  double end_seconds, uint64_t bytes);

  // Writes {"traceEvents": [...], "displayTimeUnit": "ms"} to `path`
  // atomically. Throws (exit 1) on failure.
  void write(const std::string &path, const std::string &program_name) const;

private:
  double steady_us(double seconds) const;
  // A sample of counter track `name`: {"args": {key: value}}.
  void counter(const char *name, double at_us, const char *key,
               const std::string &value);

  bool on;
  std::chrono::steady_clock::time_point start;
  std::string events;
  int64_t rank = -1; // -1: not a data-parallel run
  bool any_collective = false;
};

// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string &text);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_TRACE_H
