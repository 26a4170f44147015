// thread_adapter.cpp - the governor's decisions applied to a program.
#include "thread_adapter.h"

#include "program.h"

#include <chrono>

namespace tidalrt_driver {

thread_adapter::thread_adapter(int max_threads)
    : governor_(default_governor_settings(max_threads)), threads_(max_threads) {
}

bool thread_adapter::after_step(program_runner &runner) {
  double now = std::chrono::duration<double>(
                   std::chrono::steady_clock::now().time_since_epoch())
                   .count();
  cpu_times times;
  if (!governor_.window_due(now) || !read_cpu_times(times))
    return false;
  int next = governor_.decide(now, times);
  if (next == threads_)
    return false;
  runner.set_threads(next);
  threads_ = next;
  return true;
}

} // namespace tidalrt_driver
