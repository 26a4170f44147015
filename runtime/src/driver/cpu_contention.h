// cpu_contention.h - how much of the CPU this process gets: the time its
// threads ran and the time they waited, runnable, for a core (Linux
// schedstat), and how many other tasks are runnable on the machine now.
#ifndef TIDALRT_DRIVER_CPU_CONTENTION_H
#define TIDALRT_DRIVER_CPU_CONTENTION_H

#include <cstdint>

namespace tidalrt_driver {

struct cpu_times {
  // Summed over the process's threads since they started: seconds on a
  // core and seconds runnable but waiting for one.
  double run_seconds = 0;
  double wait_seconds = 0;
  // Runnable tasks on the machine that are not this process's threads
  // (/proc/loadavg's running count less ours); -1 when unknown.
  int others_running = -1;
};

// Reads /proc/self/task/*/schedstat, /proc/self/task/*/stat and
// /proc/loadavg. False when schedstat is unavailable (not Linux, or a
// kernel without CONFIG_SCHED_INFO); `out` is then left as it was.
bool read_cpu_times(cpu_times &out);

// The CPUs this process may run on (its affinity mask), and whether that
// is every online CPU (then others_running counts tasks on our CPUs).
int allowed_cpus();
bool allowed_all_cpus();

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_CPU_CONTENTION_H
