// thread_governor.cpp - choosing the thread count from the CPU times.
#include "thread_governor.h"

#include <algorithm>
#include <cmath>

namespace tidalrt_driver {

governor_settings default_governor_settings(int max_threads) {
  governor_settings s;
  s.max_threads = max_threads;
  s.cpus = allowed_all_cpus() ? allowed_cpus() : 0;
  return s;
}

thread_governor::thread_governor(const governor_settings &settings)
    : s_(settings), threads_(std::max(1, settings.max_threads)),
      backoff_(settings.backoff_seconds) {}

bool thread_governor::window_due(double now) const {
  return !started_ || now - window_start_ >= s_.window_seconds;
}

void thread_governor::set(int threads) {
  threads = std::clamp(threads, 1, std::max(1, s_.max_threads));
  if (threads != threads_)
    ++changes_;
  threads_ = threads;
}

int thread_governor::decide(double now, const cpu_times &times) {
  if (!started_) {
    started_ = true;
    window_start_ = now;
    prev_ = times;
    return threads_;
  }
  double run = times.run_seconds - prev_.run_seconds;
  double wait = times.wait_seconds - prev_.wait_seconds;
  prev_ = times;
  window_start_ = now;
  others_[windows_++ % 3] = times.others_running;
  if (run + wait <= 0)
    return threads_;
  double share = wait / (run + wait);
  last_wait_share_ = share;

  if (probe_from_) {
    int from = probe_from_;
    probe_from_ = 0;
    if (share >= s_.drop_wait) {
      // More threads only waited: back, and wait longer before the next
      // try.
      set(from);
      backoff_ = std::min(backoff_ * 2, s_.backoff_max_seconds);
      next_probe_ = now + backoff_;
      return threads_;
    }
    backoff_ = s_.backoff_seconds;
  }
  if (share >= s_.drop_wait && threads_ > 1) {
    // The cores the team really got.
    int got = static_cast<int>(std::floor(threads_ * (1 - share) + 0.5));
    set(std::min(got, threads_ - 1));
    next_probe_ = now + backoff_;
    return threads_;
  }
  if (threads_ < s_.max_threads && share < s_.calm_wait && now >= next_probe_) {
    int target = threads_ + 1;
    if (s_.cpus > 0) {
      // Only while other tasks leave a core idle (the busiest of the last
      // windows counts; unknown counts as busy).
      int busiest = 0;
      for (int others : others_)
        busiest = std::max(busiest, others < 0 ? s_.cpus : others);
      int idle = s_.cpus - busiest;
      if (idle < target)
        return threads_;
      target = std::min(idle, s_.max_threads);
    }
    probe_from_ = threads_;
    set(target);
  }
  return threads_;
}

} // namespace tidalrt_driver
