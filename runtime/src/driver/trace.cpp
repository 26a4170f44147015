// trace.cpp - Chrome trace events (chrome://tracing, ui.perfetto.dev).
#include "trace.h"

#include "file_util.h"

#include <cstdio>

namespace tidalrt_driver {

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

// Trace timestamps are microseconds; keep nanosecond resolution.
std::string micros(double us) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", us);
  return buffer;
}

} // namespace

trace_recorder::trace_recorder(bool enabled)
    : on(enabled), start(std::chrono::steady_clock::now()) {}

double trace_recorder::now_us() const {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

void trace_recorder::complete(const std::string &name, const char *category,
                              double start_us, double duration_us,
                              const std::string &args) {
  if (!on)
    return;
  events += ",\n{\"name\": " + json_string(name) + ", \"cat\": \"" + category +
            "\", \"ph\": \"X\", \"ts\": " + micros(start_us) +
            ", \"dur\": " + micros(duration_us) +
            ", \"pid\": " + std::to_string(rank < 0 ? 1 : rank + 1) +
            ", \"tid\": 1, \"args\": {" + args + "}}";
}

void trace_recorder::set_rank(int64_t r) { rank = r; }

double trace_recorder::steady_us(double seconds) const {
  double start_seconds =
      std::chrono::duration<double>(start.time_since_epoch()).count();
  return (seconds - start_seconds) * 1e6;
}

void trace_recorder::collective(const std::string &name, double start_seconds,
                                double end_seconds, uint64_t bytes) {
  if (!on)
    return;
  any_collective = true;
  events += ",\n{\"name\": " + json_string(name) +
            ", \"cat\": \"comm\", \"ph\": \"X\", \"ts\": " +
            micros(steady_us(start_seconds)) +
            ", \"dur\": " + micros((end_seconds - start_seconds) * 1e6) +
            ", \"pid\": " + std::to_string(rank < 0 ? 1 : rank + 1) +
            ", \"tid\": 2, \"args\": {\"bytes\": " + std::to_string(bytes) +
            "}}";
}

void trace_recorder::counter(const char *name, double at_us, const char *key,
                             const std::string &value) {
  if (!on)
    return;
  events += ",\n{\"name\": \"" + std::string(name) +
            "\", \"ph\": \"C\", \"ts\": " + micros(at_us) +
            ", \"pid\": " + std::to_string(rank < 0 ? 1 : rank + 1) +
            ", \"args\": {\"" + key + "\": " + value + "}}";
}

void trace_recorder::host_bytes(double at_us, uint64_t bytes) {
  counter("host_bytes", at_us, "host", std::to_string(bytes));
}

void trace_recorder::threads(double at_us, int threads) {
  counter("threads", at_us, "threads", std::to_string(threads));
}

void trace_recorder::write(const std::string &path,
                           const std::string &program_name) const {
  const std::string pid = std::to_string(rank < 0 ? 1 : rank + 1);
  std::string text = "{\"traceEvents\": [\n"
                     "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " +
                     pid +
                     ", \"args\": {\"name\": " + json_string(program_name) +
                     "}},\n"
                     "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " +
                     pid + ", \"tid\": 1, \"args\": {\"name\": \"host\"}}";
  if (any_collective)
    text += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + pid +
            ", \"tid\": 2, \"args\": {\"name\": \"all-reduce "
            "(communication thread)\"}}";
  // The steady clock at ts 0, so that the traces of the ranks of one
  // machine line up when merged (scripts/merge_traces.py).
  text +=
      events +
      "\n], \"displayTimeUnit\": \"ms\", \"otherData\": "
      "{\"steady_start_us\": " +
      micros(std::chrono::duration<double, std::micro>(start.time_since_epoch())
                 .count()) +
      "}}\n";
  write_file_atomically(path, text);
}

} // namespace tidalrt_driver
