// SHA-256 of a trace file, which names the trace in certificate stores and
// checkpoints. OpenSSL's; in dtrcheck-ext.so for the executable (ext/ext_api.h).
#pragma once

#include <string>

namespace dtr {

// SHA-256 (hex) of a file's bytes; throws Error if it cannot be read.
std::string FileDigest(const std::string& path);

}  // namespace dtr
