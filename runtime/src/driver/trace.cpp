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
            ", \"pid\": 1, \"tid\": 1, \"args\": {" + args + "}}";
}

void trace_recorder::host_bytes(double at_us, uint64_t bytes) {
  if (!on)
    return;
  events +=
      ",\n{\"name\": \"host_bytes\", \"ph\": \"C\", \"ts\": " + micros(at_us) +
      ", \"pid\": 1, \"args\": {\"host\": " + std::to_string(bytes) + "}}";
}

void trace_recorder::write(const std::string &path,
                           const std::string &program_name) const {
  std::string text =
      "{\"traceEvents\": [\n"
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
      "{\"name\": " +
      json_string(program_name) +
      "}},\n"
      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
      "\"args\": {\"name\": \"host\"}}" +
      events + "\n], \"displayTimeUnit\": \"ms\"}\n";
  write_file_atomically(path, text);
}

} // namespace tidalrt_driver
