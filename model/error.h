// One error type for every expected failure at the library's boundary: a bad
// trace, a bad flag, an unknown heuristic. The message is a complete line,
// usually "FILE:LINE: what is wrong"; main prints it and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace dtr {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace dtr
