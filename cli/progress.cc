#include "cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace dtr::cli {

ProgressBar::ProgressBar(std::string label, std::chrono::milliseconds quiet_start)
    : label_(std::move(label)),
      terminal_(isatty(STDERR_FILENO)),
      quiet_start_(quiet_start),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_ && terminal_) fmt::print(stderr, "\r\033[K");
}

std::chrono::seconds ProgressBar::PlainInterval() {
  static const std::chrono::seconds interval = [] {
    constexpr std::chrono::seconds kDefault{30};
    const char* text = std::getenv("DTRCHECK_PROGRESS_SECONDS");
    if (text == nullptr || *text == '\0') return kDefault;
    int64_t secs = 0;
    const char* end = text + std::strlen(text);
    auto [p, ec] = std::from_chars(text, end, secs);
    if (ec != std::errc() || p != end || secs < 0) {
      fmt::print(stderr,
                 "dtrcheck: DTRCHECK_PROGRESS_SECONDS='{}' is not a whole number of seconds; "
                 "progress lines every {} s\n",
                 text, kDefault.count());
      return kDefault;
    }
    return std::chrono::seconds(secs);
  }();
  return interval;
}

bool ProgressBar::Due(bool finished) {
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (!drawn_ && now - start_ < quiet_start_) return false;
    if (drawn_ && !finished && now - last_draw_ < std::chrono::milliseconds(100)) return false;
  } else if (now - last_draw_ < PlainInterval()) {
    return false;
  }
  last_draw_ = now;
  drawn_ = true;
  return true;
}

void ProgressBar::Update(size_t done, size_t total) { Draw(done, total, fmt::format("{}/{}", done, total)); }

void ProgressBar::UpdatePercent(size_t done, size_t total, const std::string& note) {
  Draw(done, total, fmt::format("{:.1f}% {}", total ? 100.0 * done / total : 0.0, note));
}

void ProgressBar::Draw(size_t done, size_t total, const std::string& count) {
  if (total == 0 || !Due(done >= total)) return;
  double secs = std::chrono::duration<double>(last_draw_ - start_).count();
  double eta = done > 0 ? secs * (total - done) / done : 0;
  if (!terminal_) {
    fmt::print(stderr, "{} {}  {:.0f}s elapsed, ~{:.0f}s left\n", label_, count, secs, eta);
    std::fflush(stderr);
    return;
  }
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * done / total);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  fmt::print(stderr, "\r{} [{}] {}  {:.1f}s elapsed, ~{:.0f}s left\033[K", label_, bar, count, secs, eta);
  std::fflush(stderr);
}

void ProgressBar::Status(const std::string& text) {
  // A status line is drawn as it comes on a terminal (each may stand for a
  // long step), at the plain interval elsewhere.
  if (terminal_) {
    drawn_ = true;
    last_draw_ = std::chrono::steady_clock::now();
  } else if (!Due(false)) {
    return;
  }
  double secs = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string line = fmt::format("{} {:.1f}s: {}", label_, secs, text);
  if (line.size() > 118) line = line.substr(0, 115) + "...";
  if (terminal_)
    fmt::print(stderr, "\r{}\033[K", line);
  else
    fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

}  // namespace dtr::cli
