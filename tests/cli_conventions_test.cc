// docs/cli.md's conventions, checked for every subcommand the binary lists:
// each class of failure exits with its documented status and one line on
// stderr; each --help ends with examples that run as printed, says FILE or DIR
// for paths, gives every number its range and lists enumerations with their
// defaults.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "diagnose/decision_log.h"
#include "model/trace_parser.h"
#include "tests/shell_run.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

using Output = ShellOutput;

// A folder holding demo.log, a malformed trace, a script that passes at
// ratio 0.6 and a malformed script; commands run inside it. And captured.log,
// a trace captured from PyTorch (tests/e2e/data/attributed.log), which no
// dtrcheck command makes: plan's example needs one.
class Workspace {
 public:
  // One folder per process: ctest runs the cases of this file in parallel.
  Workspace()
      : dir_(TempPath("dtrcheck_cli_conventions")) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    REQUIRE(Run("gen demo -o demo.log").status == 0);
    REQUIRE(Run("replay demo.log --ratio 0.6 --emit-script pass.script").status == 0);
    std::ofstream(dir_ / "bad.log")
        << "{\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"START\"}\n{oops\n";
    std::ofstream(dir_ / "bad.script") << "12 x1 extra\n";
    fs::copy_file(fs::path(DTRCHECK_SOURCE_DIR) / "tests" / "e2e" / "data" / "attributed.log",
                  dir_ / "captured.log");
  }
  ~Workspace() { fs::remove_all(dir_); }

  fs::path Path(const std::string& name) const { return dir_ / name; }

  // `dtrcheck ARGS` run in the folder (ARGS as a shell would split them),
  // with the environment variables ENV (`NAME=value ...`) set.
  Output Run(const std::string& args, const std::string& env = "") const {
    return RunShell("cd " + dir_.string() + " && " + env + " " + DTRCHECK_BINARY + " " + args,
                    dir_ / ".stderr");
  }

 private:
  fs::path dir_;
};

// The subcommands a --help lists under "Subcommands:" (aliases dropped).
std::vector<std::string> ListedSubcommands(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "Subcommands:") {
      in_list = true;
    } else if (in_list) {
      if (line.rfind("  ", 0) != 0) break;
      std::string name = line.substr(2, line.find_first_of(", ", 2) - 2);
      out.push_back(name);
    }
  }
  return out;
}

// Every leaf command: "info", ..., "gen chain", "gen list", ...
std::vector<std::string> AllCommands(const Workspace& w) {
  std::vector<std::string> out;
  for (const std::string& c : ListedSubcommands(w.Run("--help").out)) {
    std::vector<std::string> subs = ListedSubcommands(w.Run(c + " --help").out);
    if (subs.empty()) out.push_back(c);
    for (const std::string& s : subs) out.push_back(c + " " + s);
  }
  return out;
}

// The command lines after "Examples:" in a --help.
std::vector<std::string> Examples(const std::string& help) {
  std::vector<std::string> out;
  size_t at = help.find("\nExamples:\n");
  if (at == std::string::npos) return out;
  std::istringstream in(help.substr(at + 11));
  std::string line;
  while (std::getline(in, line) && line.rfind("  dtrcheck ", 0) == 0) out.push_back(line.substr(2));
  return out;
}

struct Case {
  std::string args;
  int status;
};

// Per command: a success, then failures of each class that applies. Usage
// errors come from a value out of range or a missing requirement, bad input
// from a missing or malformed file, or an output that cannot be written.
const std::map<std::string, std::vector<Case>>& Cases() {
  static const std::map<std::string, std::vector<Case>> cases = {
      {"info",
       {{"info demo.log", 0},
        {"info demo.log --json-typo", 2},
        {"info missing.log", 3},
        {"info bad.log", 3},
        {"info .", 3}}},
      {"replay",
       {{"replay demo.log --ratio 0.5", 0},
        {"replay demo.log --ratio 0.6 --fail-on-oom", 0},
        {"replay demo.log --ratio 0.5 --fail-on-oom", 1},
        {"replay demo.log", 2},
        {"replay demo.log --budget -1", 2},
        {"replay demo.log --ratio 0.5 --seed -1", 2},
        {"replay missing.log --ratio 0.5", 3},
        {"replay bad.log --ratio 0.5", 3},
        {"replay demo.log --ratio 0.6 --emit-script .", 3}}},
      {"sweep",
       {{"sweep demo.log --ratios 0.5,0.6", 0},
        {"sweep demo.log --ratios 0.5,0.6 -j 0", 2},
        {"sweep missing.log --ratios 0.5", 3},
        {"sweep bad.log --ratios 0.5", 3}}},
      {"frontier",
       {{"frontier demo.log --ratio 0.5", 0},
        {"frontier demo.log --ratio 0.5 --at -1", 2},
        {"frontier demo.log --ratio 0.5 --runtime RuntimeV1", 2},
        {"frontier missing.log --ratio 0.5", 3}}},
      {"check",
       {{"check demo.log --ratio 0.6 --script pass.script", 0},
        {"check demo.log --ratio 0.5 --script pass.script", 1},
        {"check demo.log --ratio 0.6", 2},
        {"check demo.log --ratio 0.6 --script missing.script", 3},
        {"check demo.log --ratio 0.6 --script bad.script", 3},
        {"check bad.log --ratio 0.6 --script pass.script", 3}}},
      {"explain",
       {{"explain demo.log --ratio 0.5 --no-z3", 0},
        {"explain demo.log --ratio 0.5 --no-z3 --expect policy-induced", 0},
        {"explain demo.log --ratio 0.5 --no-z3 --expect inherent", 1},
        {"explain demo.log --ratio 0.6 --no-z3", 2},
        {"explain demo.log --ratio 0.5 --timeout -1", 2},
        {"explain missing.log --ratio 0.5", 3}}},
      {"prove",
       {{"prove demo.log --ratio 0.2", 0},
        {"prove demo.log --ratio 0.2 --expect inherent", 0},
        {"prove demo.log --ratio 0.2 --expect feasible", 1},
        {"prove demo.log --ratio 0.2 --expect maybe", 2},
        {"prove demo.log --ratio 0.2 --windows -1", 2},
        {"prove bad.log --ratio 0.2", 3}}},
      {"bounds",
       {{"bounds demo.log --ratios 0.4:0.7:0.1 --fine-step '' --search-seconds 0 --windows 0", 0},
        {"bounds demo.log --search-seconds -1", 2},
        {"bounds demo.log --walk-searches -1", 2},
        {"bounds demo.log --runtime RuntimeV1", 2},
        {"bounds missing.log", 3}}},
      {"plan",
       {{"plan captured.log --ratio 0.95", 0},
        {"plan captured.log --budget 1 --json", 0},
        {"plan demo.log --ratio 0.5", 2},
        {"plan captured.log", 2},
        {"plan missing.log --ratio 0.5", 3},
        {"plan bad.log --ratio 0.5", 3}}},
      {"gen chain",
       {{"gen chain --layers 2 -o chain.log", 0},
        {"gen chain --layers 0", 2},
        {"gen chain --layers 2 -o .", 3}}},
      {"gen resnet",
       {{"gen resnet --blocks 2 -o resnet.log", 0},
        {"gen resnet --blocks 2 --stages 3", 2},
        {"gen resnet -o .", 3}}},
      {"gen rnn",
       {{"gen rnn --steps 2 -o rnn.log", 0}, {"gen rnn --steps -2", 2}, {"gen rnn -o .", 3}}},
      {"gen layered",
       {{"gen layered --nodes 20 --json -o layered.json", 0},
        {"gen layered --nodes 2", 2},
        {"gen layered --dialect dot", 2},
        {"gen layered -o .", 3}}},
      {"gen graph",
       {{"gen graph " DTRCHECK_SOURCE_DIR "/tests/graphs/tiny_checkmate.json", 0},
        {"gen graph", 2},
        {"gen graph missing.json", 3},
        {"gen graph demo.log", 3}}},
      {"gen demo", {{"gen demo -o demo2.log", 0}, {"gen demo --bogus", 2}, {"gen demo -o .", 3}}},
      {"gen list", {{"gen list", 0}, {"gen list extra", 2}}},
      {"report",
       {{"report demo.log --ratios 0.5,0.6 --out out", 0},
        {"report demo.log --ratios 0.5,0.6 --atlas-max-runs 0 --out out", 2},
        {"report demo.log --ratios 0.5,0.6 --timeout 5 --out out", 2},
        {"report missing.log --out out", 3},
        {"report demo.log --ratios 0.5,0.6 --out demo.log", 3}}},
      {"atlas",
       {{"atlas demo.log --ratios 0.5:0.6", 0},
        {"atlas demo.log --ratios 0.5:0.6 -j 100000", 2},
        {"atlas demo.log", 2},
        {"atlas bad.log --ratios 0.5:0.6", 3},
        {"atlas demo.log --ratios 0.5:0.6 --checkpoint bad.script", 3}}},
      {"scan",
       {{"scan demo.log --ratios 0.4:0.7:0.1", 0},
        {"scan demo.log --ratios 0.4:0.7:0.1 --max-walk -1", 2},
        {"scan missing.log --ratios 0.5", 3}}},
      {"diff",
       {{"diff demo.log --ratios 0.5,0.55", 0},
        {"diff demo.log --ratios 0.5", 2},
        {"diff bad.log --ratios 0.5,0.55", 3}}},
      {"blame",
       {{"blame demo.log --ratio 0.5", 0},
        {"blame demo.log --ratio 0.5 --max-replays 0", 2},
        {"blame missing.log --ratio 0.5", 3}}},
      {"ablate",
       {{"ablate demo.log --ratios 0.5,0.6", 0},
        {"ablate demo.log --ratios 0.5,0.6 --cliff-factor 1", 2},
        {"ablate missing.log --ratios 0.5", 3}}},
  };
  return cases;
}

TEST_CASE("cli conventions: every subcommand exits 0, 1, 2 or 3 as docs/cli.md says") {
  Workspace w;
  std::vector<std::string> commands = AllCommands(w);
  REQUIRE(commands.size() >= 19);
  for (const std::string& command : commands) {
    INFO("command: ", command);
    REQUIRE_MESSAGE(Cases().count(command), "a subcommand without exit status cases");
    std::set<int> classes;
    for (const Case& c : Cases().at(command)) {
      INFO("dtrcheck ", c.args);
      Output o = w.Run(c.args);
      INFO("stderr: ", o.err);  // a sanitizer's report, when there is one
      CHECK(o.status == c.status);
      classes.insert(c.status);
      if (c.status >= 2) {  // one line on stderr, nothing on stdout
        CHECK(o.out.empty());
        CHECK(o.err.rfind("dtrcheck: ", 0) == 0);
        CHECK(o.err.find('\n') == o.err.size() - 1);
      } else {
        CHECK(o.err.empty());
      }
    }
    CHECK(classes.count(0));
    CHECK(classes.count(2));
    if (command != "gen list") CHECK(classes.count(3));  // it reads and writes nothing
  }
  for (const std::string name : {"replay", "check", "explain", "prove"}) {
    std::set<int> classes;
    for (const Case& c : Cases().at(name)) classes.insert(c.status);
    CHECK_MESSAGE(classes.count(1), name, " has a negative answer (exit status 1)");
  }
  // The program itself.
  CHECK(w.Run("").status == 2);
  CHECK(w.Run("replya demo.log").status == 2);
  CHECK(w.Run("replya demo.log")
            .err.rfind("dtrcheck: unknown subcommand 'replya' (known: info, ", 0) == 0);
  CHECK(w.Run("gen chian")
            .err.rfind("dtrcheck: gen: unknown subcommand 'chian' (known: chain, ", 0) == 0);
  CHECK(w.Run("--help").status == 0);
  CHECK(w.Run("--version").status == 0);
}

// docs/cli.md's exit-status table lists the statuses cli/exit_status.h
// defines, and every command whose answer goes to standard output fails
// with status 3 when it cannot be written there (issue 51, item 3).
TEST_CASE("cli conventions: the exit-status table is main's, and lost output is status 3") {
  std::set<int> documented;
  std::istringstream doc(Slurp(fs::path(DTRCHECK_SOURCE_DIR) / "docs" / "cli.md"));
  for (std::string line; std::getline(doc, line);) {
    int status = -1;
    if (std::sscanf(line.c_str(), "| %d |", &status) == 1) documented.insert(status);
  }
  CHECK(documented == std::set<int>{0, 1, 2, 3, 4});
  Workspace w;
  for (const std::string& command : AllCommands(w)) {
    const Case& success = Cases().at(command).front();
    REQUIRE(success.status == 0);
    Output o = w.Run(success.args);
    if (o.out.empty()) continue;  // it writes files only
    INFO("dtrcheck ", success.args, " > /dev/full");
    Output full = w.Run(success.args + " > /dev/full");
    CHECK(full.status == 3);
    CHECK(full.err.rfind("dtrcheck: standard output: write error, the output is incomplete", 0) == 0);
  }
}

TEST_CASE("cli conventions: every --help ends with examples that run as printed") {
  Workspace w;
  std::vector<std::string> helps = {""};
  for (const std::string& c : AllCommands(w)) helps.push_back(c);
  helps.push_back("gen");
  for (const std::string& command : helps) {
    INFO("dtrcheck ", command, " --help");
    Output help = w.Run(command + " --help");
    REQUIRE(help.status == 0);
    std::vector<std::string> examples = Examples(help.out);
    CHECK(examples.size() >= 1);
    CHECK(examples.size() <= 2);
    CHECK(help.out.find("Exit status: 0 done, 1 a negative answer, 2 a usage error, 3 bad input") !=
          std::string::npos);
    for (const std::string& example : examples) {
      INFO("example: ", example);
      Output o = w.Run(example.substr(std::string("dtrcheck ").size()));
      INFO("stderr: ", o.err);  // a sanitizer's report, when there is one
      CHECK(o.status == 0);
      CHECK(o.err.empty());
    }
  }
}

// The type column of each option line: "--ratio RATIO", "-j,--jobs INT:1..1024".
std::vector<std::pair<std::string, std::string>> OptionTypes(const std::string& help) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  -", 0) != 0 && line.rfind("  trace ", 0) != 0) continue;
    std::istringstream words(line);
    std::string name, type;
    words >> name >> type;
    out.emplace_back(name, type);
  }
  return out;
}

TEST_CASE("cli conventions: --help says FILE or DIR, ranges and enumerations with defaults") {
  Workspace w;
  for (const std::string& command : AllCommands(w)) {
    INFO("dtrcheck ", command, " --help");
    std::string help = w.Run(command + " --help").out;
    for (const auto& [name, type] : OptionTypes(help)) {
      INFO("option ", name, " ", type);
      CHECK(type.rfind("TEXT", 0) != 0);  // paths are FILE or DIR, other text says what it is
      // Numbers carry their range: "INT:1..1024", "FLOAT:(0, 86400]".
      if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0 || type.rfind("FLOAT", 0) == 0)
        CHECK(type.find(':') != std::string::npos);
    }
    if (help.find("  trace ") != std::string::npos)
      CHECK(help.find("  trace FILE") != std::string::npos);
    if (help.find("--heuristic NAME ") != std::string::npos ||
        help.find("--heuristic NAME,... ") != std::string::npos) {
      // The 24 names are listed once, in the docs (and in an unknown name's
      // error), not in every --help: the help says the default and where.
      CHECK(help.find("(default DTR; the names: docs/concepts.md#heuristics-and-runtimes)") != std::string::npos);
      CHECK(help.find("AbESizeStale") == std::string::npos);
    }
    if (help.find("--runtime NAME") != std::string::npos) {
      CHECK(help.find("(default RuntimeV2EagerOptimized): ") != std::string::npos);
      CHECK(help.find("RuntimeV2Optimized") != std::string::npos);
    }
    // Regression: report's Z3 flags read "--timeout FLOAT Needs: --z3 with --z3: seconds".
    CHECK(help.find("with --z3:") == std::string::npos);
  }
  std::string bounds = w.Run("bounds --help").out;
  CHECK(bounds.find("--walk WALK:{step,gallop,bisect}") != std::string::npos);
  CHECK(bounds.find("gallop (a stride below the best peak, doubled after each find; default)") !=
        std::string::npos);
  CHECK(w.Run("replay --help").out.find("RuntimeV1") != std::string::npos);
  CHECK(w.Run("prove --help").out.find("RuntimeV1") == std::string::npos);  // V2 only
}

TEST_CASE("cli conventions: --version names the source, the compiler and the build type") {
  Workspace w;
  Output o = w.Run("--version");
  CHECK(o.status == 0);
  CHECK(o.out.rfind("dtrcheck 0.1 (git ", 0) == 0);
  CHECK(o.out.find("\nbuilt with ") != std::string::npos);
  CHECK(o.out.find(", build type ") != std::string::npos);
}

TEST_CASE("cli conventions: progress in a pipe is plain lines, none before the interval") {
  Workspace w;
  const std::string sweep = "sweep demo.log --ratios 0.3:0.6:0.01";
  const Output quiet = w.Run(sweep);
  REQUIRE(quiet.status == 0);
  CHECK(quiet.err.empty());  // 10 s by default: a quick command prints no progress
  // Every update a line of its own: no carriage return, no terminal escape.
  const Output each = w.Run(sweep, "DTRCHECK_PROGRESS_SECONDS=0");
  CHECK(each.status == 0);
  CHECK(each.out == quiet.out);
  CHECK(each.err.find('\r') == std::string::npos);
  CHECK(each.err.find('\033') == std::string::npos);
  std::istringstream lines(each.err);
  std::string line;
  // The total before the first run ends, then each run as it ends, with the
  // run the other worker has under way, if any (the demo's runs are too
  // short for a line of their own while under way).
  int n = 0;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(line.rfind("sweep ", 0) == 0);
    const std::string runs = "% " + std::to_string(n) + "/31 runs";
    const size_t at = line.find(runs);
    REQUIRE(at != std::string::npos);
    const std::string rest = line.substr(at + runs.size());
    CHECK((rest.rfind("  ", 0) == 0 || rest.rfind("; under way: ratio 0.", 0) == 0));
    CHECK(line.find("s elapsed, ~") != std::string::npos);
    ++n;
  }
  CHECK(n == 32);
  const Output bad = w.Run(sweep, "DTRCHECK_PROGRESS_SECONDS=soon");
  CHECK(bad.status == 0);
  CHECK(bad.out == quiet.out);
  CHECK(bad.err ==
        "dtrcheck: DTRCHECK_PROGRESS_SECONDS='soon' is not a whole number of seconds; "
        "progress lines every 10 s\n");
}

// The lines of `err` that a replay's progress printed: each "LABEL P% step
// N/STEPS, overhead X so far ...", N never going back. Returns them.
std::vector<std::string> ReplayProgressLines(const std::string& err, size_t steps,
                                             const std::string& label = "replay") {
  std::vector<std::string> lines;
  std::istringstream in(err);
  std::string line;
  int64_t last_step = 0;
  while (std::getline(in, line)) {
    INFO(line);
    REQUIRE(line.rfind(label + " ", 0) == 0);
    const size_t at = line.find("% step ");
    REQUIRE(at != std::string::npos);
    const int64_t step = std::stoll(line.substr(at + 7));
    CHECK(step >= last_step);
    last_step = step;
    std::string of_steps = "/";
    of_steps += std::to_string(steps);
    CHECK(line.find(of_steps + ", overhead ") != std::string::npos);
    CHECK(line.find(" so far") != std::string::npos);
    lines.push_back(line);
  }
  return lines;
}

// Runs `args` quietly (a plain interval longer than the run: these runs can
// pass the default 10 s on a loaded machine), then with a progress line at
// every look: both pass, the quiet run prints nothing on stderr, both print
// the same on stdout. Returns the second run's stderr.
std::string ProgressOf(const Workspace& w, const std::string& args) {
  INFO(args);
  const Output quiet = w.Run(args, "DTRCHECK_PROGRESS_SECONDS=86400");
  REQUIRE(quiet.status == 0);
  CHECK(quiet.err.empty());
  const Output each = w.Run(args, "DTRCHECK_PROGRESS_SECONDS=0");
  CHECK(each.status == 0);
  CHECK(each.out == quiet.out);
  return each.err;
}

bool AnyHas(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

// The grid lines (starting with `label`) of a grid of two runs at ratios 0.5
// and 0.6 (`named`: heuristic `named` before each ratio) on a generated rnn
// of 10^4 operators: the runs done, and each run under way by its ratio with
// its step and overhead so far.
void CheckGridLines(const Workspace& w, const std::string& args, const std::string& label,
                    const std::string& named = "") {
  std::string of_steps = "/";
  of_steps += std::to_string(LoadTrace(w.Path("rnn.log").string()).program.size());
  of_steps += ", overhead ";
  const std::string err = ProgressOf(w, args);
  std::istringstream in(err);
  std::string line;
  size_t under_way = 0, finished = 0;
  bool seen[2] = {false, false};
  while (std::getline(in, line)) {
    INFO(line);
    if (line.rfind(label + " ", 0) != 0) continue;
    const size_t at = line.find("/2 runs; under way: ");
    if (at != std::string::npos) {
      CHECK(line.find(of_steps) != std::string::npos);
      CHECK(line.find(" so far") != std::string::npos);
      const std::string first = line.substr(at + 20);
      const std::string prefix = named.empty() ? "ratio " : named + " ";
      CHECK((first.rfind(prefix + "0.5: step ", 0) == 0 ||
             first.rfind(prefix + "0.6: step ", 0) == 0));
      seen[0] |= line.find(prefix + "0.5: step ") != std::string::npos;
      seen[1] |= line.find(prefix + "0.6: step ") != std::string::npos;
      ++under_way;
    }
    finished += line.find("100.0% 2/2 runs ") != std::string::npos;
  }
  CHECK(under_way >= 2);  // each run passes 4,096 computations
  CHECK(seen[0]);
  CHECK(seen[1]);
  CHECK(finished == 1);
}

TEST_CASE("cli conventions: report's and scan's grids show the runs under way") {
  Workspace w;
  REQUIRE(w.Run("gen rnn --steps 1666 -o rnn.log").status == 0);  // 10,001 operators
  CheckGridLines(w, "report rnn.log --ratios 0.5,0.6 --no-atlas --no-proofs --no-divergence -o out",
                 "report: grid");
  CheckGridLines(w, "scan rnn.log --ratios 0.5,0.6", "scan");
  CheckGridLines(w, "sweep rnn.log --ratios 0.5,0.6", "sweep");
  // ablate's runs differ in heuristic: each named, then its ratio.
  std::istringstream in(ProgressOf(w, "ablate rnn.log --ratios 0.5,0.6"));
  std::string line;
  size_t named = 0;
  while (std::getline(in, line)) {
    INFO(line);
    CHECK(line.rfind("ablate ", 0) == 0);
    const size_t at = line.find(" runs; under way: ");
    if (at == std::string::npos) continue;
    const std::string first = line.substr(at + 18);
    const size_t space = first.find(' ');
    REQUIRE(space != std::string::npos);
    CHECK(space > 0);  // the heuristic's name
    CHECK((first.compare(space, 11, " 0.5: step ") == 0 ||
           first.compare(space, 11, " 0.6: step ") == 0));
    ++named;
  }
  CHECK(named >= 1);
}

TEST_CASE("cli conventions: a long replay shows its step and overhead, and a thrashing hint") {
  Workspace w;
  const std::string lstm = TracePath("lstm");
  const size_t steps = LoadTrace(lstm).program.size();
  // LRU at 0.266 recomputes about 600 times the model's compute before its OOM.
  const std::vector<std::string> lines = ReplayProgressLines(
      ProgressOf(w, "replay " + lstm + " --ratio 0.266 --heuristic LRU"), steps);
  CHECK(lines.size() >= 10);
  CHECK(AnyHas(lines, "(thrashing? --overhead-limit ends such a run)"));
  // With a limit, no hint: the run ends by itself.
  const Output limited =
      w.Run("replay " + lstm + " --ratio 0.266 --heuristic LargestStorage --overhead-limit 20",
            "DTRCHECK_PROGRESS_SECONDS=0");
  CHECK(limited.status == 0);
  CHECK(limited.out.find("result      thrash") != std::string::npos);
  const std::vector<std::string> limited_lines = ReplayProgressLines(limited.err, steps);
  CHECK(limited_lines.size() >= 5);
  for (const std::string& l : limited_lines) CHECK(l.find("thrashing?") == std::string::npos);
}

// What a progress line says of the run: from " step " to the time.
std::string ProgressNote(const std::string& line) {
  const size_t from = line.find(" step "), to = line.find("  ", from);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  return line.substr(from, to - from);
}

TEST_CASE("cli conventions: frontier, diff and replay --record/--emit-script show progress") {
  Workspace w;
  const std::string lstm = TracePath("lstm");
  const size_t steps = LoadTrace(lstm).program.size();
  // LRU at 0.266 thrashes to an OOM; frontier has no overhead limit to offer.
  const std::vector<std::string> lines = ReplayProgressLines(
      ProgressOf(w, "frontier " + lstm + " --ratio 0.266 --heuristic LRU"), steps, "frontier");
  CHECK(lines.size() >= 10);
  CHECK(AnyHas(lines, "(thrashing? the run goes on to its end)"));
  CHECK(!AnyHas(lines, "--overhead-limit"));

  // diff: both runs side by side on one line.
  std::istringstream in(ProgressOf(w, "diff " + lstm + " --ratios 0.266,0.2661 --heuristic LRU"));
  std::string line;
  size_t diff_lines = 0;
  while (std::getline(in, line)) {
    INFO(line);
    REQUIRE(line.rfind("diff ", 0) == 0);
    CHECK(line.find(" A: step ") != std::string::npos);
    CHECK(line.find("; B: step ") != std::string::npos);
    ++diff_lines;
  }
  CHECK(diff_lines >= 10);

  // --emit-script and --record together replay the run once: the progress
  // lines, the script and the decision log are those of each flag alone.
  const std::string run = "replay " + lstm + " --ratio 0.2";
  const Output both = w.Run(run + " --record both.jsonl.gz --emit-script both.script",
                            "DTRCHECK_PROGRESS_SECONDS=0");
  const Output record = w.Run(run + " --record one.jsonl.gz", "DTRCHECK_PROGRESS_SECONDS=0");
  const Output script = w.Run(run + " --emit-script one.script", "DTRCHECK_PROGRESS_SECONDS=0");
  REQUIRE(both.status == 0);
  REQUIRE(record.status == 0);
  REQUIRE(script.status == 0);
  CHECK(both.out == record.out);
  CHECK(both.out == script.out);
  auto notes = [&](const std::string& err) {
    std::vector<std::string> out;
    for (const std::string& line : ReplayProgressLines(err, steps))
      out.push_back(ProgressNote(line));
    return out;
  };
  const std::vector<std::string> both_notes = notes(both.err);
  CHECK(both_notes.size() >= 2);
  CHECK(both_notes == notes(record.err));
  CHECK(both_notes == notes(script.err));
  CHECK(Slurp(w.Path("both.script")) == Slurp(w.Path("one.script")));
  const Trace trace = LoadTrace(lstm);
  const DecisionLogFile a = ReadDecisionLog(w.Path("both.jsonl.gz"), trace);
  const DecisionLogFile b = ReadDecisionLog(w.Path("one.jsonl.gz"), trace);
  CHECK(a.log.decisions.size() > 1000);
  CHECK(a.log.decisions == b.log.decisions);
  REQUIRE(a.log.eager.size() == b.log.eager.size());
  for (size_t i = 0; i < a.log.eager.size(); ++i) {
    CHECK(a.log.eager[i].decisions_before == b.log.eager[i].decisions_before);
    CHECK(a.log.eager[i].eviction.storage == b.log.eager[i].eviction.storage);
    CHECK(a.log.eager[i].eviction.event == b.log.eager[i].eviction.event);
  }
  REQUIRE(a.end);
  REQUIRE(b.end);
  CHECK(a.end->outcome == b.end->outcome);
  CHECK(a.end->clock == b.end->clock);
  CHECK(a.end->decisions == b.end->decisions);
}

}  // namespace
}  // namespace dtr::testing
