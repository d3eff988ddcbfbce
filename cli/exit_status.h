// dtrcheck's exit statuses, the same for every subcommand (docs/cli.md), and
// the one line an error is printed as.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace dtr::cli {

enum ExitStatus : int {
  kExitSuccess = 0,   // done; a check that passes, a run that passes
  kExitNegative = 1,  // a negative answer: `check` fails, `replay --fail-on-oom` runs out
                      // of memory, `prove/explain --expect V` reaches another verdict
  kExitUsage = 2,     // the command line is wrong (ErrorKind::kUsage, CLI11's errors)
  kExitInput = 3,     // a file cannot be read, parsed or written (ErrorKind::kInput)
  kExitEnvironment = 4,  // the run could not finish: memory could not be allocated, an
                         // MPI job failed (a rank stopped answering or ended early, or the
                         // ranks disagreed: checker/farm/mpi_farm.h, docs/mpi.md), or
                         // dtrcheck-ext.so cannot be loaded (ErrorKind::kEnvironment)
};

ExitStatus ExitStatusOf(ErrorKind kind);

// The longest message printed, in bytes; longer ones are cut (model/echo.h).
inline constexpr size_t kMaxMessageBytes = 1024;

// `message` as the one line printed after "dtrcheck: ": every command-line
// argument it repeats that is longer than 512 bytes (a path stays whole) is
// shortened with Echo(), non-printable bytes are escaped and the whole is cut
// at kMaxMessageBytes.
std::string ErrorLine(std::string_view message, const std::vector<std::string>& args);

}  // namespace dtr::cli
