// progress.cpp - a one-line progress bar redrawn with '\r'.
#include "progress.h"

#include <cmath>
#include <string>
#include <unistd.h>

namespace tidalrt_driver {

progress_bar::progress_bar(std::FILE *stream, bool enabled, uint64_t total,
                           const char *unit)
    : stream(stream), on(enabled && isatty(fileno(stream))), total(total),
      unit(unit), start(std::chrono::steady_clock::now()),
      last_draw(start - std::chrono::seconds(1)) {}

progress_bar::~progress_bar() { clear(); }

void progress_bar::clear() {
  if (on && drawn) {
    std::fputs("\r\033[K", stream);
    std::fflush(stream);
    drawn = false;
  }
}

namespace {

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  auto s = static_cast<unsigned long long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof(buffer), "%llu:%02llu:%02llu", s / 3600,
                  s / 60 % 60, s % 60);
  else
    std::snprintf(buffer, sizeof(buffer), "%llu:%02llu", s / 60, s % 60);
  return buffer;
}

} // namespace

void progress_bar::update(uint64_t done, double loss) {
  if (!on)
    return;
  auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_draw < std::chrono::milliseconds(100))
    return;
  last_draw = now;
  double elapsed = std::chrono::duration<double>(now - start).count();
  double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  double eta = rate > 0 ? static_cast<double>(total - done) / rate : NAN;
  const int width = 24;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width)
    bar += '>' + std::string(static_cast<size_t>(width - filled - 1), ' ');
  char loss_text[32] = "";
  if (!std::isnan(loss))
    std::snprintf(loss_text, sizeof(loss_text), " loss %.4g", loss);
  char rate_text[48];
  if (per_unit)
    std::snprintf(rate_text, sizeof(rate_text), "%.0f samples/s",
                  rate * static_cast<double>(per_unit));
  else
    std::snprintf(rate_text, sizeof(rate_text), "%.1f %s/s", rate, unit);
  std::fprintf(stream, "\r\033[K%s%s[%s] %llu/%llu%s  %s  ETA %s",
               label.c_str(), label.empty() ? "" : " ", bar.c_str(),
               static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), loss_text, rate_text,
               clock_text(eta).c_str());
  std::fflush(stream);
  drawn = true;
}

} // namespace tidalrt_driver
