// progress.h - the progress bar on stderr (only when it is a terminal).
#ifndef TIDALRT_DRIVER_PROGRESS_H
#define TIDALRT_DRIVER_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace tidalrt_driver {

class progress_bar {
public:
  // Draws on `stream` only if `enabled` and `stream` is a terminal.
  progress_bar(std::FILE *stream, bool enabled, uint64_t total,
               const char *unit);
  // Clears the bar.
  ~progress_bar();
  progress_bar(const progress_bar &) = delete;
  progress_bar &operator=(const progress_bar &) = delete;

  bool active() const { return on; }
  // `done` of `total` units finished, the last loss (NaN: none). Redraws at
  // most 10 times a second, and always for the last unit.
  void update(uint64_t done, double loss);
  // Erases the bar, so that a message can be printed; the next update
  // draws it again.
  void clear();

private:
  std::FILE *stream;
  bool on;
  bool drawn = false;
  uint64_t total;
  const char *unit;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point last_draw;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_PROGRESS_H
