// shared_link.cpp - a host link shared by simulated devices (shared_link.h).
#include "shared_link.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace tidalrt_device {

// The segment: when each direction is next free (0: to the device, 1: to
// the host).
constexpr size_t kSegmentBytes = 2 * sizeof(std::atomic<int64_t>);

struct shared_link {
  std::atomic<int64_t> *free_at = nullptr; // [2], in shared memory
  double gbps = 0;
};

static_assert(std::atomic<int64_t>::is_always_lock_free,
              "the switch's word must be lock-free to live in shared memory");

tidalrt_status_t open_shared_link_from_env(shared_link **out) {
  *out = nullptr;
  const char *name = std::getenv("TIDAL_SIM_SWITCH");
  if (!name || !*name)
    return nullptr;
  for (const char *c = name; *c; ++c)
    if (!(std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ||
          *c == '_' || *c == '.') ||
        c - name >= 200)
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "TIDAL_SIM_SWITCH='%s': a switch name is up "
                                 "to 200 of [A-Za-z0-9._-]",
                                 name);
  const char *text = std::getenv("TIDAL_SIM_SWITCH_GBPS");
  char *end = nullptr;
  double gbps = text ? std::strtod(text, &end) : 0;
  if (!text || end == text || *end || !std::isfinite(gbps) || gbps <= 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "TIDAL_SIM_SWITCH needs TIDAL_SIM_SWITCH_GBPS, "
                               "the switch's bandwidth in GB/s (> 0), got "
                               "'%s'",
                               text ? text : "");
  std::string path = std::string("/tidal-switch-") + name;
  int fd = shm_open(path.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0)
    return tidalrt_status_make(TIDALRT_INTERNAL, "shm_open %s: %s",
                               path.c_str(), std::strerror(errno));
  // A new segment is zero-filled: the switch is free since time 0.
  if (ftruncate(fd, kSegmentBytes) != 0) {
    int e = errno;
    close(fd);
    return tidalrt_status_make(TIDALRT_INTERNAL, "ftruncate %s: %s",
                               path.c_str(), std::strerror(e));
  }
  void *p =
      mmap(nullptr, kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return tidalrt_status_make(TIDALRT_INTERNAL, "mmap %s: %s", path.c_str(),
                               std::strerror(errno));
  auto *link = new (std::nothrow) shared_link();
  if (!link) {
    munmap(p, kSegmentBytes);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
  }
  link->free_at = static_cast<std::atomic<int64_t> *>(p);
  link->gbps = gbps;
  *out = link;
  return nullptr;
}

void close_shared_link(shared_link *link) {
  if (!link)
    return;
  munmap(link->free_at, kSegmentBytes);
  delete link;
}

int64_t reserve_shared_link(shared_link *link, uint64_t bytes,
                            int64_t earliest_ns, bool to_host) {
  // 1 GB/s moves one byte per nanosecond.
  const int64_t duration =
      static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / link->gbps));
  std::atomic<int64_t> &word = link->free_at[to_host ? 1 : 0];
  int64_t free_at = word.load(std::memory_order_relaxed);
  for (;;) {
    int64_t start = free_at > earliest_ns ? free_at : earliest_ns;
    if (word.compare_exchange_weak(free_at, start + duration,
                                   std::memory_order_relaxed))
      return start + duration;
  }
}

} // namespace tidalrt_device
