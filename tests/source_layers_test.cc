// The layers of docs/layout.md, checked on the source tree: no file includes
// a header from a layer above its own. Between the top-level folders the
// arrows point model -> checker -> diagnose -> reports -> api -> cli/python
// (and model -> traces -> api); inside checker/ they point farm -> engine -> drivers -> persist and
// engine -> proofs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Each layer with the layers it may include from (itself included).
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = [] {
    std::map<std::string, std::set<std::string>> a;
    a["checker/farm"] = {"model", "checker/farm"};
    a["checker/engine"] = {"model", "checker/farm", "checker/engine"};
    a["checker/proofs"] = {"model", "checker/farm", "checker/engine", "checker/proofs"};
    a["checker/drivers"] = {"model", "checker/farm", "checker/engine", "checker/drivers"};
    a["checker/persist"] = {"model", "checker/farm", "checker/engine", "checker/drivers", "checker/persist"};
    a["model"] = {"model"};
    std::set<std::string> below = {"model", "checker/farm", "checker/engine", "checker/proofs",
                                   "checker/drivers", "checker/persist"};
    for (const char* top : {"diagnose", "reports", "api"}) {
      below.insert(top);
      a[top] = below;
    }
    // traces/ (the generators and the demo) sits on model, beside the rest;
    // the front door loads the demo.
    a["api"].insert("traces");
    a["traces"] = {"model", "checker/farm", "checker/engine", "checker/proofs", "checker/drivers",
                   "checker/persist", "traces"};
    return a;
  }();
  return allowed;
}

// "checker/engine/replay.h" -> "checker/engine"; "model/trace.h" -> "model".
std::string LayerOf(const std::string& path) {
  size_t slash = path.find('/');
  if (slash == std::string::npos) return "";
  std::string top = path.substr(0, slash);
  if (top != "checker") return top;
  size_t second = path.find('/', slash + 1);
  return second == std::string::npos ? top : path.substr(0, second);
}

}  // namespace

TEST_CASE("source layers: no file includes from a layer above its own") {
  const fs::path root = DTRCHECK_SOURCE_DIR;
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+/[a-z_/]+\.h)")re");
  int files = 0;
  std::vector<std::string> wrong;
  for (const auto& [layer, allowed] : Allowed()) {
    for (const auto& entry : fs::directory_iterator(root / layer)) {
      const std::string ext = entry.path().extension();
      if (ext != ".h" && ext != ".cc") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        std::string to = LayerOf(m[1]);
        if (!Allowed().count(to) && to != "cli" && to != "python") continue;  // generated headers
        if (!allowed.count(to))
          wrong.push_back(fs::relative(entry.path(), root).string() + " includes " + m[1].str());
      }
    }
  }
  CHECK(files > 150);
  for (const std::string& w : wrong) FAIL_CHECK(w);
}
