// thread_adapter.h - --threads auto wired to a program: after each step,
// the governor (thread_governor.h) reads the process's CPU times once per
// window and, when it picks another count, the program's kernels switch to
// it (program_runner::set_threads, which prepares them for a new count).
// The executable's training loop and library trainers (threads < 0) use it.
#ifndef TIDALRT_DRIVER_THREAD_ADAPTER_H
#define TIDALRT_DRIVER_THREAD_ADAPTER_H

#include "thread_governor.h"

#include <cstdint>

namespace tidalrt_driver {

class program_runner;

class thread_adapter {
public:
  // Starts at `max_threads` (the program must already run at that count).
  explicit thread_adapter(int max_threads);

  // Called after a step; returns true when the count changed (the kernels
  // run at threads() from the next step on).
  bool after_step(program_runner &runner);
  int threads() const { return threads_; }
  uint64_t changes() const { return governor_.changes(); }

private:
  thread_governor governor_;
  int threads_;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_THREAD_ADAPTER_H
