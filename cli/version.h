// What `dtrcheck --version` prints: the version, the source it was built from
// (`git describe` when CMake configured the build) and how it was built.
#pragma once

#include <string>

namespace dtr::cli {

std::string VersionText();

}  // namespace dtr::cli
