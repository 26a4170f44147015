// Tests of --threads auto's governor (thread_governor.h), fed with the CPU
// times a loaded or quiet machine would show, and of reading those times.
#include "cpu_contention.h"
#include "thread_governor.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace tidalrt_driver;

namespace {

// Cumulative CPU times: each window adds `threads` x `window` seconds of
// runnable time, of which `share` waited for a core.
struct fake_process {
  cpu_times times;
  double now = 100;

  cpu_times window(int threads, double share, int others = -1,
                   double seconds = 0.1) {
    now += seconds;
    times.run_seconds += threads * seconds * (1 - share);
    times.wait_seconds += threads * seconds * share;
    times.others_running = others;
    return times;
  }
};

governor_settings settings(int max_threads, int cpus = 0) {
  governor_settings s;
  s.max_threads = max_threads;
  s.cpus = cpus;
  return s;
}

// Feeds `n` windows at the governor's current count; returns the count.
int feed(thread_governor &g, fake_process &p, int n, double share,
         int others = -1) {
  for (int i = 0; i < n; ++i) {
    cpu_times t = p.window(g.threads(), share, others);
    g.decide(p.now, t);
  }
  return g.threads();
}

} // namespace

TEST(ThreadGovernorTest, QuietMachineKeepsEveryThread) {
  thread_governor g(settings(4, 4));
  fake_process p;
  g.decide(p.now, p.times);
  EXPECT_EQ(feed(g, p, 50, 0.01, 0), 4);
  EXPECT_EQ(g.changes(), 0u);
  EXPECT_NEAR(g.last_wait_share(), 0.01, 1e-9);
}

TEST(ThreadGovernorTest, ShrinksToTheCoresItGot) {
  // Four threads that wait half their time got two cores.
  thread_governor g(settings(4));
  fake_process p;
  g.decide(p.now, p.times);
  EXPECT_EQ(feed(g, p, 1, 0.5), 2);
  // Two busy processes on two cores beside a 2-thread team: one thread.
  thread_governor two(settings(2));
  fake_process q;
  two.decide(q.now, q.times);
  EXPECT_EQ(feed(two, q, 1, 0.5), 1);
  // At one thread there is nothing to drop, however long it waits.
  EXPECT_EQ(feed(two, q, 20, 0.33, 2), 1);
}

TEST(ThreadGovernorTest, ShrinksByAtLeastOneAndNeverBelowOne) {
  thread_governor g(settings(8));
  fake_process p;
  g.decide(p.now, p.times);
  // 8 x (1 - 0.21) = 6.3: six threads.
  EXPECT_EQ(feed(g, p, 1, 0.21), 6);
  // A share just over the threshold still drops one.
  EXPECT_EQ(feed(g, p, 1, 0.2), 5);
  EXPECT_EQ(feed(g, p, 1, 0.99), 1);
  EXPECT_EQ(g.changes(), 3u);
}

TEST(ThreadGovernorTest, GrowsBackWhenTheLoadIsGone) {
  thread_governor g(settings(2, 2));
  fake_process p;
  g.decide(p.now, p.times);
  EXPECT_EQ(feed(g, p, 1, 0.5, 2), 1);
  // Calm at one thread but others still hold a core: no try.
  EXPECT_EQ(feed(g, p, 30, 0.0, 1), 1);
  // The others are gone: after the back-off (1 s) it tries two, and keeps
  // them while they do not wait.
  EXPECT_EQ(feed(g, p, 30, 0.0, 0), 2);
  EXPECT_EQ(feed(g, p, 30, 0.01, 0), 2);
}

TEST(ThreadGovernorTest, AFailedTryBacksOffLongerEachTime) {
  // No CPU gate: tries are judged by the waiting alone.
  governor_settings s = settings(2);
  s.backoff_seconds = 1;
  s.backoff_max_seconds = 4;
  thread_governor g(s);
  fake_process p;
  g.decide(p.now, p.times);
  EXPECT_EQ(feed(g, p, 1, 0.5), 1);
  // Windows of 0.1 s: the try comes after 1 s.
  std::vector<double> tries;
  for (int i = 0; i < 200; ++i) {
    int before = g.threads();
    // One thread is calm; two wait (the load is still there).
    cpu_times t = p.window(before, before == 1 ? 0.0 : 0.5);
    g.decide(p.now, t);
    if (before == 1 && g.threads() == 2)
      tries.push_back(p.now);
  }
  ASSERT_GE(tries.size(), 4u);
  // The failed try's window, then the back-off: 2 s, 4 s, capped at 4 s.
  EXPECT_NEAR(tries[1] - tries[0], 2.1, 0.15);
  EXPECT_NEAR(tries[2] - tries[1], 4.1, 0.15);
  EXPECT_NEAR(tries[3] - tries[2], 4.1, 0.15);
  EXPECT_EQ(g.threads(), 1);
}

TEST(ThreadGovernorTest, GrowsStraightToTheIdleCores) {
  thread_governor g(settings(8, 8));
  fake_process p;
  g.decide(p.now, p.times);
  EXPECT_EQ(feed(g, p, 1, 0.75, 6), 2);
  // Six other tasks went away: every core is idle, and the next try takes
  // them all once the back-off has passed and the last windows were calm.
  EXPECT_EQ(feed(g, p, 30, 0.0, 0), 8);
}

TEST(ThreadGovernorTest, DecidesOncePerWindow) {
  governor_settings s = settings(2);
  s.window_seconds = 0.05;
  thread_governor g(s);
  EXPECT_TRUE(g.window_due(0));
  g.decide(10, cpu_times{});
  EXPECT_FALSE(g.window_due(10.01));
  EXPECT_TRUE(g.window_due(10.05));
  // A window without any CPU time changes nothing.
  EXPECT_EQ(g.decide(10.1, cpu_times{}), 2);
  EXPECT_LT(g.last_wait_share(), 0);
}

TEST(CpuContentionTest, ReadsThisProcessesTimes) {
  cpu_times before;
  if (!read_cpu_times(before))
    GTEST_SKIP() << "no /proc/self/task/*/schedstat on this kernel";
  // Spin for 20 ms of this thread's time.
  auto start = std::chrono::steady_clock::now();
  volatile double x = 0;
  while (std::chrono::steady_clock::now() - start <
         std::chrono::milliseconds(20))
    x = x + 1;
  cpu_times after;
  ASSERT_TRUE(read_cpu_times(after));
  EXPECT_GT(after.run_seconds - before.run_seconds, 0.005);
  EXPECT_GE(after.wait_seconds, before.wait_seconds);
  EXPECT_GE(after.others_running, 0);
  EXPECT_GE(allowed_cpus(), 1);
}
