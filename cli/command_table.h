// dtrcheck's subcommands as one table (cli/command_table.cc), in the manner of
// ninja's tool table: a row names a subcommand, says what it does, gives the
// examples its --help ends with, and points at two named functions: one adds
// the command's flags to a plain options struct, the other runs the command
// with the filled struct and returns its exit status (docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dtr::cli {

// Runs a command with the options the command line filled in.
using CommandRun = std::function<int()>;

struct Command {
  std::string name;
  std::string summary;   // one line, shown in the parent's --help
  std::string examples;  // the end of the command's --help (docs/cli.md: each has one or two)
  std::vector<std::string> aliases;
  // Adds the command's flags to `cmd`, bound to a fresh options struct, and
  // returns the function that runs the command with that struct. Empty for a
  // group of commands (gen), which has `subcommands` instead.
  std::function<CommandRun(CLI::App* cmd)> define;
  std::vector<Command> subcommands;
};

// A row for a command whose flags fill `Options` (`add`) and which `run` runs.
template <typename Options>
Command MakeCommand(std::string name, std::string summary, std::string examples,
                    void (*add)(CLI::App*, Options&), int (*run)(const Options&)) {
  Command c;
  c.name = std::move(name);
  c.summary = std::move(summary);
  c.examples = std::move(examples);
  c.define = [add, run](CLI::App* cmd) -> CommandRun {
    auto options = std::make_shared<Options>();
    add(cmd, *options);
    return [options, run] { return run(*options); };
  };
  return c;
}

// Every subcommand, in the order `dtrcheck --help` lists them.
const std::vector<Command>& Commands();

// The table's commands added to a CLI11 app.
class CommandLine {
 public:
  // Adds every command of `commands` (and their subcommands) to `app`.
  CommandLine(CLI::App& app, const std::vector<Command>& commands);

  // After app.parse(): runs the command the command line chose and returns
  // its exit status. Throws what the command throws (dtr::Error).
  int Run() const;

 private:
  struct Added {
    CLI::App* app = nullptr;
    CommandRun run;
    std::vector<Added> subcommands;
  };
  static std::vector<Added> Add(CLI::App& parent, const std::vector<Command>& commands);
  static int RunParsed(const std::vector<Added>& added);

  std::vector<Added> added_;
};

}  // namespace dtr::cli
