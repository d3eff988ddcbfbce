#include "cli/command_table.h"

#include <fmt/core.h>

#include "cli/atlas_commands.h"
#include "cli/gen_commands.h"
#include "cli/instability_commands.h"
#include "cli/plan_commands.h"
#include "cli/proof_commands.h"
#include "cli/replay_commands.h"
#include "cli/report_commands.h"
#include "model/echo.h"
#include "model/error.h"

namespace dtr::cli {

namespace {

// Whether `word` is c's name or one of its aliases.
bool Names(const Command& c, const std::string& word) {
  if (c.name == word) return true;
  for (const std::string& alias : c.aliases)
    if (alias == word) return true;
  return false;
}

std::vector<Command> GenCommands() {
  return {
      MakeCommand("chain", "the DTR paper's uniform linear network",
                  {"dtrcheck gen chain --layers 32 -o chain.log"}, AddGenChainFlags, RunGenChain),
      MakeCommand("resnet", "a residual network in stages",
                  {"dtrcheck gen resnet --blocks 8 --stages 2 -o resnet.log"}, AddGenResNetFlags,
                  RunGenResNet),
      MakeCommand("rnn", "an unrolled recurrent network",
                  {"dtrcheck gen rnn --steps 32 -o rnn.log"}, AddGenRnnFlags, RunGenRnn),
      MakeCommand("layered", "a random layered DAG (a trace, or with --json its node-link graph)",
                  {"dtrcheck gen layered --nodes 100 --seed 7 -o layered.log"},
                  AddGenLayeredFlags, RunGenLayered),
      MakeCommand("graph", "a Checkmate or Moccasin node-link JSON graph as a trace",
                  {"dtrcheck gen layered --nodes 20 --json -o layered.json",
                   "dtrcheck gen graph layered.json -o layered.log"},
                  AddGenGraphFlags, RunGenGraph),
      MakeCommand("demo", "the embedded demo trace (see docs/demo.md)",
                  {"dtrcheck gen demo -o demo.log"}, AddGenDemoFlags, RunGenDemo),
      MakeCommand("list", "list the generators and the known public trace names",
                  {"dtrcheck gen list"}, AddGenListFlags, RunGenList),
  };
}

Command Group(std::string name, std::string summary, std::vector<std::string> examples,
              std::vector<Command> subcommands) {
  Command c;
  c.name = std::move(name);
  c.summary = std::move(summary);
  c.examples = std::move(examples);
  c.subcommands = std::move(subcommands);
  return c;
}

Command WithAlias(Command c, std::string alias) {
  c.aliases.push_back(std::move(alias));
  return c;
}

}  // namespace

// The rows. Examples run on demo.log (`dtrcheck gen demo -o demo.log`), so
// that each can be tried as printed, and is, by tests/cli_examples_test.cc.
const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
      MakeCommand("info", "parse a trace and print its size and simrd baseline",
                  {"dtrcheck info demo.log"}, AddInfoFlags, RunInfo),
      MakeCommand("replay", "replay a trace under one budget, exactly as simrd does",
                  {"dtrcheck replay demo.log --ratio 0.5",
                   "dtrcheck replay demo.log --ratio 0.6 --json --fail-on-oom"},
                  AddReplayCommandFlags, RunReplay),
      MakeCommand("sweep", "replay a trace at many budgets (and heuristics), in parallel",
                  {"dtrcheck sweep demo.log --ratios 0.3:1.0:0.05 --heuristic DTR,LRU"},
                  AddSweepFlags, RunSweep),
      MakeCommand("frontier",
                  "the pending rematerializations, their locks and pinned + locked + request at "
                  "an OOM or decision",
                  {"dtrcheck frontier demo.log --ratio 0.5"}, AddFrontierFlags, RunFrontier),
      MakeCommand("check",
                  "replay an eviction script under a budget: pass, or where it fails (exit "
                  "status 1 if it fails)",
                  {"dtrcheck replay demo.log --ratio 0.6 --emit-script demo.script",
                   "dtrcheck check demo.log --ratio 0.6 --script demo.script"},
                  AddCheckFlags, RunCheck),
      MakeCommand("explain",
                  "why a heuristic run ran out of memory: its frontier, and whether the OOM is "
                  "policy-induced or inherent, with a certificate",
                  {"dtrcheck explain demo.log --ratio 0.5",
                   "dtrcheck explain demo.log --ratio 0.5 --no-z3 --expect policy-induced"},
                  AddExplainFlags, RunExplain),
      MakeCommand("prove",
                  "whether any eviction order fits a budget: feasible (verified script), "
                  "inherent (proof) or undetermined",
                  {"dtrcheck prove demo.log --ratio 0.5 --save-script fits.script",
                   "dtrcheck prove demo.log --ratio 0.2 --expect inherent"},
                  AddProveFlags, RunProve),
      MakeCommand("bounds",
                  "per heuristic the smallest feasible ratio, the best verified schedule and the "
                  "proven lower bound",
                  {"dtrcheck bounds demo.log --heuristic DTR,LRU --walk-searches 0"},
                  AddBoundsFlags, RunBounds),
      MakeCommand("plan",
                  "which modules of a captured PyTorch step (python -m dtrcheck.capture) to wrap "
                  "in torch.utils.checkpoint to fit a budget, with the predicted peak and overhead",
                  {"dtrcheck plan captured.log --ratio 0.95"}, AddPlanFlags, RunPlan),
      Group("gen", "write a synthetic trace (deterministic) in the DTR log format",
            {"dtrcheck gen demo -o demo.log", "dtrcheck gen chain --layers 32 -o chain.log"},
            GenCommands()),
      // `dtrcheck demo [TRACE] --out DIR`: the same command, named for the demo.
      WithAlias(
          MakeCommand("report",
                      "replay a ratio grid and write report.json, report.md and a "
                      "self-contained report.html",
                      {"dtrcheck report demo.log --out out/demo",
                       "dtrcheck report demo.log --ratios 0.4:0.7:0.01 --no-proofs --out out/zoom"},
                      AddReportFlags, RunReport),
          "demo"),
      MakeCommand("atlas",
                  "list every budget interval on which the replay is identical, over a whole "
                  "range (no sampling)",
                  {"dtrcheck atlas demo.log --ratios 0.3:1.0",
                   "dtrcheck atlas demo.log --budgets 5000000:6000000 --csv"},
                  AddAtlasFlags, RunAtlas),
      MakeCommand("scan", "sweep budgets and report regimes, cliffs and feasibility inversions",
                  {"dtrcheck scan demo.log --ratios 0.3:1.0:0.01 --refine"}, AddScanFlags, RunScan),
      MakeCommand("diff", "compare two budgets: first divergent decision, re-eviction statistics",
                  {"dtrcheck diff demo.log --ratios 0.5,0.55", "dtrcheck diff demo.log --budgets 5767167,5767168"}, AddDiffFlags, RunDiff),
      MakeCommand("blame",
                  "find the fewest overridden decisions that make a run pass (or leave a slow "
                  "regime)",
                  {"dtrcheck blame demo.log --ratio 0.5"}, AddBlameFlags, RunBlame),
      MakeCommand("ablate",
                  "rerun the scan with the 16 ablation heuristics: which score term carries the "
                  "instability",
                  {"dtrcheck ablate demo.log --ratios 0.3:1.0:0.05"}, AddAblateFlags, RunAblate),
  };
  return table;
}

const std::vector<std::string>& TopLevelExamples() {
  static const std::vector<std::string> examples = {"dtrcheck gen demo -o demo.log",
                                                    "dtrcheck report demo.log --out out/demo"};
  return examples;
}

std::string HelpFooter(const std::vector<std::string>& examples) {
  std::string text = "Examples:\n";
  bool uses_demo = false, writes_demo = false;
  for (const std::string& e : examples) {
    text += "  " + e + "\n";
    uses_demo |= e.find("demo.log") != std::string::npos;
    writes_demo |= e.find("-o demo.log") != std::string::npos;
  }
  if (uses_demo && !writes_demo)
    text += "(demo.log is the demo trace: dtrcheck gen demo -o demo.log)\n";
  text += "\nExit status: 0 done, 1 a negative answer, 2 a usage error, 3 bad input, 4 the run could not "
          "finish (memory, an MPI job) (docs/cli.md)";
  return text;
}

CommandLine::CommandLine(CLI::App& app, const std::vector<Command>& commands,
                         const std::vector<std::string>& args)
    : added_(Add(app, commands, args)) {}

std::vector<CommandLine::Added> CommandLine::Add(CLI::App& parent,
                                                 const std::vector<Command>& commands,
                                                 std::span<const std::string> chosen) {
  // The subcommand's name is the first argument, as RequireKnownNames reads
  // it (an option first: none is chosen, e.g. --help).
  const bool named = !chosen.empty() && !chosen.front().empty() && chosen.front()[0] != '-';
  std::vector<Added> added;
  for (const Command& c : commands) {
    Added a;
    a.app = parent.add_subcommand(c.name, c.summary);
    for (const std::string& alias : c.aliases) a.app->alias(alias);
    const bool this_one = named && Names(c, chosen.front());
    if (this_one) {
      if (!c.examples.empty()) a.app->footer(HelpFooter(c.examples));
      if (c.define) a.run = c.define(a.app);
    }
    if (!c.subcommands.empty()) {
      a.app->require_subcommand(1);
      a.subcommands =
          Add(*a.app, c.subcommands, this_one ? chosen.subspan(1) : std::span<const std::string>());
    }
    added.push_back(std::move(a));
  }
  return added;
}

void CommandLine::RequireKnownNames(const std::vector<Command>& commands,
                                    const std::vector<std::string>& args) {
  const std::vector<Command>* level = &commands;
  std::string parent;
  for (const std::string& arg : args) {
    if (!arg.empty() && arg[0] == '-') return;  // an option: --help, --version, or CLI11's error
    const Command* found = nullptr;
    for (const Command& c : *level)
      if (Names(c, arg)) found = &c;
    if (!found) {
      std::string known;
      for (const Command& c : *level) known += (known.empty() ? "" : ", ") + c.name;
      throw Error(fmt::format("{}unknown subcommand '{}' (known: {})", parent, Echo(arg), known));
    }
    if (found->subcommands.empty()) return;  // the rest are the command's own arguments
    level = &found->subcommands;
    parent += found->name + ": ";
  }
}

int CommandLine::RunParsed(const std::vector<Added>& added) {
  for (const Added& a : added) {
    if (!a.app->parsed()) continue;
    if (!a.subcommands.empty()) return RunParsed(a.subcommands);
    if (!a.run) throw Error("internal: the command line chose '" + a.app->get_name() +
                            "', which was not defined for these arguments");
    return a.run();
  }
  return 0;
}

int CommandLine::Run() const { return RunParsed(added_); }

}  // namespace dtr::cli
