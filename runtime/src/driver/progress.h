// progress.h - the progress bar on stderr (only when it is a terminal).
#ifndef TIDALRT_DRIVER_PROGRESS_H
#define TIDALRT_DRIVER_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

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
  // Text drawn before the bar ("epoch 2/5"), and the samples one unit
  // stands for (the batch size: the rate is then shown in samples/s).
  void set_label(std::string text) { label = std::move(text); }
  void set_samples_per_unit(uint64_t samples) { per_unit = samples; }

private:
  std::FILE *stream;
  bool on;
  bool drawn = false;
  uint64_t total;
  const char *unit;
  std::string label;
  uint64_t per_unit = 0;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point last_draw;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_PROGRESS_H
