// One error type for every expected failure at the library's boundary: a bad
// trace, a bad flag, an unknown heuristic. The message is a complete line,
// usually "FILE:LINE: what is wrong"; main prints it and exits with the
// status of its kind (docs/cli.md). Text taken from the input is echoed
// through Echo() (model/echo.h), so a message stays one readable line.
#pragma once

#include <stdexcept>
#include <string>

namespace dtr {

enum class ErrorKind {
  kUsage,  // the request cannot be answered as asked: a bad option, a question
           // that does not apply (explain of a passing run); exit status 2
  kInput,  // a file cannot be read, parsed or written, or its content is
           // invalid (a malformed trace, script or checkpoint); exit status 3
  kEnvironment,  // the installation cannot do it: dtrcheck-ext.so cannot be
                 // loaded (ext/ext_api.h); exit status 4
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::kUsage)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// An Error of kind kInput: a file that cannot be read, parsed or written.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message, ErrorKind::kInput) {}
};

// "PATH: what (the system's reason)" for a failed system call on PATH, with
// strerror of the current errno (read it right after the call fails).
std::string SystemErrorMessage(const std::string& path, const std::string& what);

}  // namespace dtr
