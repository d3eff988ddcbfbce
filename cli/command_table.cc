#include "cli/command_table.h"

#include "cli/atlas_commands.h"
#include "cli/gen_commands.h"
#include "cli/instability_commands.h"
#include "cli/proof_commands.h"
#include "cli/replay_commands.h"
#include "cli/report_commands.h"

namespace dtr::cli {

namespace {

std::vector<Command> GenCommands() {
  return {
      MakeCommand("chain", "the DTR paper's uniform linear network", "", AddGenChainFlags,
                  RunGenChain),
      MakeCommand("resnet", "a residual network in stages", "", AddGenResNetFlags, RunGenResNet),
      MakeCommand("rnn", "an unrolled recurrent network", "", AddGenRnnFlags, RunGenRnn),
      MakeCommand("demo", "the embedded demo trace (see docs/readme/reports.md)", "",
                  AddGenDemoFlags, RunGenDemo),
      MakeCommand("list", "list the generators and the known public trace names", "",
                  AddGenListFlags, RunGenList),
  };
}

Command Group(std::string name, std::string summary, std::string examples,
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

const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
      MakeCommand("info", "parse a trace and print its size and simrd baseline", "", AddInfoFlags,
                  RunInfo),
      MakeCommand("replay", "replay a trace under one budget, exactly as simrd does", "",
                  AddReplayCommandFlags, RunReplay),
      MakeCommand("sweep", "replay a trace at many budgets (and heuristics), in parallel", "",
                  AddSweepFlags, RunSweep),
      MakeCommand("frontier",
                  "the pending rematerializations, their locks and pinned + locked + request at "
                  "an OOM or decision",
                  "", AddFrontierFlags, RunFrontier),
      MakeCommand("check",
                  "replay an eviction script under a budget: pass, or where it fails (exit "
                  "status 2 if it fails)",
                  "", AddCheckFlags, RunCheck),
      MakeCommand("explain",
                  "why a heuristic run ran out of memory: its frontier, and whether the OOM is "
                  "policy-induced or inherent, with a certificate",
                  "", AddExplainFlags, RunExplain),
      MakeCommand("prove",
                  "whether any eviction order fits a budget: feasible (verified script), "
                  "inherent (proof) or undetermined",
                  "", AddProveFlags, RunProve),
      MakeCommand("bounds",
                  "per heuristic the smallest feasible ratio, the best verified schedule and the "
                  "proven lower bound",
                  "", AddBoundsFlags, RunBounds),
      Group("gen", "write a synthetic trace (deterministic) in the DTR log format", "",
            GenCommands()),
      // `dtrcheck demo [TRACE] --out DIR`: the same command, named for the demo.
      WithAlias(MakeCommand("report",
                            "replay a ratio grid and write report.json, report.md and a "
                            "self-contained report.html",
                            "", AddReportFlags, RunReport),
                "demo"),
      MakeCommand("atlas",
                  "list every budget interval on which the replay is identical, over a whole "
                  "range (no sampling)",
                  "", AddAtlasFlags, RunAtlas),
      MakeCommand("scan", "sweep budgets and report regimes, cliffs and feasibility inversions", "",
                  AddScanFlags, RunScan),
      MakeCommand("diff", "compare two budgets: first divergent decision, re-eviction statistics",
                  "", AddDiffFlags, RunDiff),
      MakeCommand("blame",
                  "find the fewest overridden decisions that make a run pass (or leave a slow "
                  "regime)",
                  "", AddBlameFlags, RunBlame),
      MakeCommand("ablate",
                  "rerun the scan with the 16 ablation heuristics: which score term carries the "
                  "instability",
                  "", AddAblateFlags, RunAblate),
  };
  return table;
}

CommandLine::CommandLine(CLI::App& app, const std::vector<Command>& commands)
    : added_(Add(app, commands)) {}

std::vector<CommandLine::Added> CommandLine::Add(CLI::App& parent,
                                                 const std::vector<Command>& commands) {
  std::vector<Added> added;
  for (const Command& c : commands) {
    Added a;
    a.app = parent.add_subcommand(c.name, c.summary);
    for (const std::string& alias : c.aliases) a.app->alias(alias);
    if (!c.examples.empty()) a.app->footer(c.examples);
    if (c.define) a.run = c.define(a.app);
    if (!c.subcommands.empty()) {
      a.app->require_subcommand(1);
      a.subcommands = Add(*a.app, c.subcommands);
    }
    added.push_back(std::move(a));
  }
  return added;
}

int CommandLine::RunParsed(const std::vector<Added>& added) {
  for (const Added& a : added) {
    if (!a.app->parsed()) continue;
    if (!a.subcommands.empty()) return RunParsed(a.subcommands);
    return a.run();
  }
  return 0;
}

int CommandLine::Run() const { return RunParsed(added_); }

}  // namespace dtr::cli
