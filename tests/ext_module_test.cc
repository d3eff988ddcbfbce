// dtrcheck loads Z3, MPI and OpenSSL (dtrcheck-ext.so, ext/ext_api.h) only
// for the commands that use them: a copy of the executable without the module
// beside it replays and sweeps as the real one does, and a command that
// hashes a trace (bounds with a certificate store) stops with one line naming
// the module (exit status 4), as it does when the module beside it comes
// from another build; with the module copied beside it, it does what the real
// one does.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "ext/ext_build_id.h"
#include "tests/shell_run.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

ShellOutput RunIn(const fs::path& dir, const std::string& binary, const std::string& args) {
  return RunShell("cd " + dir.string() + " && " + binary + " " + args, dir / ".stderr");
}

TEST_CASE("dtrcheck loads dtrcheck-ext.so only for the commands that need Z3, MPI or OpenSSL") {
  const fs::path dir = TempPath("dtrcheck_ext_module");
  fs::remove_all(dir);
  fs::create_directories(dir / "alone");
  const fs::path real = DTRCHECK_BINARY;
  const fs::path module = real.parent_path() / "dtrcheck-ext.so";
  REQUIRE(fs::exists(module));
  const std::string alone = (dir / "alone" / "dtrcheck").string();
  fs::copy_file(real, alone);
  REQUIRE(RunIn(dir, real.string(), "gen demo -o demo.log").status == 0);

  for (const char* args : {"replay demo.log --ratio 0.6 --json", "replay demo.log --ratio 0.3",
                           "sweep demo.log --ratios 0.3:0.9:0.1", "info demo.log"}) {
    CAPTURE(args);
    const ShellOutput want = RunIn(dir, real.string(), args);
    const ShellOutput got = RunIn(dir, alone, args);
    CHECK(got.status == want.status);
    CHECK(got.out == want.out);
    CHECK(got.err == want.err);
    CHECK(!want.out.empty());
  }

  // bounds with a certificate store: SHA-256 of the trace (OpenSSL); Z3 is
  // loaded by the same module, and used by the bounds and prove tests.
  auto bounds = [&](const std::string& binary, const std::string& store) {
    ShellOutput o = RunIn(
        dir, binary,
        "bounds demo.log --search-seconds 0 --ratios 0.4,0.5 --fine-step '' --store " + store);
    o.out = std::regex_replace(o.out, std::regex("[0-9.]+s\\b"), "Ts");  // times
    return o;
  };
  auto stored = [&](const std::string& store) {
    std::vector<std::string> names;
    if (fs::exists(dir / store))
      for (const auto& e : fs::directory_iterator(dir / store))
        names.push_back(e.path().filename().string());
    return names;
  };
  const ShellOutput want = bounds(real.string(), "store_real");
  REQUIRE(want.status == 0);
  REQUIRE(stored("store_real").size() == 1);
  const ShellOutput missing = bounds(alone, "store_missing");
  CHECK(missing.status == 4);
  CHECK(missing.out.empty());
  CHECK(missing.err.rfind("dtrcheck: cannot load " + (dir / "alone" / "dtrcheck-ext.so").string(),
                          0) == 0);
  CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
  CHECK(stored("store_missing").empty());

  // A module from another build (its digest of the shared sources differs:
  // here one character of it changed) is refused in one line, before any use.
  {
    std::ifstream in(module, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find(kExtBuildId);
    REQUIRE(at != std::string::npos);
    bytes[at] = bytes[at] == '0' ? '1' : '0';
    std::ofstream(dir / "alone" / "dtrcheck-ext.so", std::ios::binary) << bytes;
    fs::permissions(dir / "alone" / "dtrcheck-ext.so", fs::perms::owner_all);
  }
  const ShellOutput other = bounds(alone, "store_other");
  CHECK(other.status == 4);
  CHECK(other.out.empty());
  CHECK(other.err.find("it comes from another build") != std::string::npos);
  CHECK(std::count(other.err.begin(), other.err.end(), '\n') == 1);
  CHECK(stored("store_other").empty());
  fs::remove(dir / "alone" / "dtrcheck-ext.so");

  fs::copy_file(module, dir / "alone" / "dtrcheck-ext.so");
  const ShellOutput with = bounds(alone, "store_with");
  CHECK(with.status == want.status);
  CHECK(with.out == want.out);
  CHECK(stored("store_with") == stored("store_real"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dtr::testing
