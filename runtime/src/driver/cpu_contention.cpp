// cpu_contention.cpp - reading the scheduler's per-thread accounting.
#include "cpu_contention.h"

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <sched.h>
#include <sys/sysinfo.h>

namespace tidalrt_driver {

namespace {

// The first line of `path` into `buf`; false if it cannot be read.
bool read_line(const char *path, char *buf, size_t size) {
  std::FILE *f = std::fopen(path, "r");
  if (!f)
    return false;
  bool ok = std::fgets(buf, static_cast<int>(size), f) != nullptr;
  std::fclose(f);
  return ok;
}

// The state letter of /proc/self/task/TID/stat: after the ')' that ends
// the command name (which may itself hold spaces and parentheses).
char task_state(const char *stat) {
  const char *close = std::strrchr(stat, ')');
  if (!close || close[1] != ' ')
    return '?';
  return close[2];
}

} // namespace

bool read_cpu_times(cpu_times &out) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return false;
  cpu_times t;
  int ours_running = 0;
  bool any = false;
  char path[96], line[512];
  while (dirent *entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
      continue;
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
                  entry->d_name);
    unsigned long long run_ns = 0, wait_ns = 0;
    // A thread that ended since readdir has no file any more.
    if (!read_line(path, line, sizeof(line)) ||
        std::sscanf(line, "%llu %llu", &run_ns, &wait_ns) != 2)
      continue;
    any = true;
    t.run_seconds += static_cast<double>(run_ns) * 1e-9;
    t.wait_seconds += static_cast<double>(wait_ns) * 1e-9;
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", entry->d_name);
    if (read_line(path, line, sizeof(line)) && task_state(line) == 'R')
      ++ours_running;
  }
  closedir(dir);
  if (!any)
    return false;
  // "0.50 0.40 0.30 3/412 12345": the running count is the fourth field's
  // numerator.
  int running = -1;
  if (read_line("/proc/loadavg", line, sizeof(line))) {
    double a, b, c;
    int r, total;
    if (std::sscanf(line, "%lf %lf %lf %d/%d", &a, &b, &c, &r, &total) == 5)
      running = r;
  }
  t.others_running = running < 0              ? -1
                     : running > ours_running ? running - ours_running
                                              : 0;
  out = t;
  return true;
}

int allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return get_nprocs();
  int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

bool allowed_all_cpus() { return allowed_cpus() >= get_nprocs(); }

} // namespace tidalrt_driver
