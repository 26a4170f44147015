// thread_governor.h - the number of threads a training run uses when the
// user did not fix it (`--threads auto`, the default): as many as the
// process was given while it gets its cores, fewer while other work keeps
// them busy, more again once it is gone.
//
// An OpenMP team is only as fast as its slowest thread: when a core is
// taken by another process, a team as wide as the machine waits at every
// barrier for a descheduled thread (bench/README.md "cpu_load"). The
// governor watches the scheduler's accounting of the process's threads
// (cpu_contention.h) over windows of a few steps: when they spent more
// than `drop_wait` of their runnable time waiting for a core, the team
// shrinks to the cores it really got; when they wait little and enough
// other cores are idle, it tries one more thread (or the idle ones), and
// keeps them only if the waiting stays low, waiting longer before the next
// try after each failed one.
#ifndef TIDALRT_DRIVER_THREAD_GOVERNOR_H
#define TIDALRT_DRIVER_THREAD_GOVERNOR_H

#include "cpu_contention.h"

#include <cstdint>

namespace tidalrt_driver {

struct governor_settings {
  // The most threads (the cores the process was given).
  int max_threads = 1;
  // The CPUs that others_running refers to; 0: do not use it.
  int cpus = 0;
  // Decisions are made at most this often (seconds of steps).
  double window_seconds = 0.05;
  // The share of the threads' runnable time spent waiting for a core
  // above which the team shrinks, and below which it may grow.
  double drop_wait = 0.2;
  double calm_wait = 0.08;
  // The wait before trying more threads again after a try failed; it
  // doubles with each failure up to the maximum.
  double backoff_seconds = 1;
  double backoff_max_seconds = 60;
};

// The settings for a process given `max_threads`: the CPU gate is used
// when the process may run on every online CPU.
governor_settings default_governor_settings(int max_threads);

class thread_governor {
public:
  explicit thread_governor(const governor_settings &settings);

  // The thread count for the next step.
  int threads() const { return threads_; }
  // Whether a window ended at `now` (steady-clock seconds): then read the
  // CPU times and call decide().
  bool window_due(double now) const;
  // Ends a window at `now` with the process's cumulative CPU times and
  // returns the thread count for the next steps. The first call only
  // starts the first window.
  int decide(double now, const cpu_times &times);

  // The wait share of the last window (-1 before the first), and how many
  // times the count changed.
  double last_wait_share() const { return last_wait_share_; }
  uint64_t changes() const { return changes_; }

private:
  void set(int threads);

  governor_settings s_;
  int threads_;
  bool started_ = false;
  double window_start_ = 0;
  cpu_times prev_;
  double last_wait_share_ = -1;
  // A try with more threads in progress: the count to return to.
  int probe_from_ = 0;
  double backoff_;
  double next_probe_ = 0;
  // others_running of the last three windows.
  int others_[3] = {-1, -1, -1};
  uint64_t windows_ = 0;
  uint64_t changes_ = 0;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_THREAD_GOVERNOR_H
