#include "cli/version.h"

#include <fmt/core.h>

#include "checker/farm/mpi_farm.h"
#include "cli/build_info.h"  // generated into the build directory

namespace dtr::cli {

std::string VersionText() {
  std::string mpi = MpiLibraryVersion();
  return fmt::format("dtrcheck 0.1 (git {})\nbuilt with {}, build type {}\nMPI backend: {}", DTRCHECK_GIT_DESCRIBE,
                     DTRCHECK_COMPILER, DTRCHECK_BUILD_TYPE,
                     mpi.empty() ? "none (built without MPI; docs/mpi.md)" : mpi);
}

}  // namespace dtr::cli
