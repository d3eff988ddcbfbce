#include "model/error.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>

namespace dtr {

std::string SystemErrorMessage(const std::string& path, const std::string& what) {
  int err = errno;
  if (err == 0) return fmt::format("{}: {}", path, what);
  return fmt::format("{}: {} ({})", path, what, std::strerror(err));
}

}  // namespace dtr
