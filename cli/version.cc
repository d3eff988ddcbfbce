#include "cli/version.h"

#include <fmt/core.h>

#include "cli/build_info.h"  // generated into the build directory

namespace dtr::cli {

std::string VersionText() {
  return fmt::format("dtrcheck 0.1 (git {})\nbuilt with {}, build type {}", DTRCHECK_GIT_DESCRIBE,
                     DTRCHECK_COMPILER, DTRCHECK_BUILD_TYPE);
}

}  // namespace dtr::cli
