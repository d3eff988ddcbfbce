// dtrcheck's subcommands as one table (cli/command_table.cc), in the manner of
// ninja's tool table: a row names a subcommand, says what it does, gives the
// examples its --help ends with, and points at two named functions: one adds
// the command's flags to a plain options struct, the other runs the command
// with the filled struct and returns its exit status (docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dtr::cli {

// Runs a command with the options the command line filled in.
using CommandRun = std::function<int()>;

struct Command {
  std::string name;
  std::string summary;  // one line, shown in the parent's --help
  // Command lines the command's --help ends with (docs/cli.md): one or two,
  // each run by tests/cli_examples_test.cc in a folder holding demo.log.
  std::vector<std::string> examples;
  std::vector<std::string> aliases;
  // Adds the command's flags to `cmd`, bound to a fresh options struct, and
  // returns the function that runs the command with that struct. Empty for a
  // group of commands (gen), which has `subcommands` instead.
  std::function<CommandRun(CLI::App* cmd)> define;
  std::vector<Command> subcommands;
};

// A row for a command whose flags fill `Options` (`add`) and which `run` runs.
template <typename Options>
Command MakeCommand(std::string name, std::string summary, std::vector<std::string> examples,
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

// The examples `dtrcheck --help` ends with.
const std::vector<std::string>& TopLevelExamples();

// The end of a --help: "Examples:" and the command lines, then what demo.log is
// if they use it, then where the exit statuses are documented.
std::string HelpFooter(const std::vector<std::string>& examples);

// The table's commands added to a CLI11 app.
class CommandLine {
 public:
  // Adds every command of `commands` (and their subcommands) to `app`, with
  // name, summary and aliases; flags, examples and the function that runs it
  // only for the command `args` (the arguments after the program's name)
  // names, the one this process can run. Defining all of them cost 3 M
  // instructions, half of a small trace's replay.
  CommandLine(CLI::App& app, const std::vector<Command>& commands,
              const std::vector<std::string>& args);

  // Before app.parse(): throws Error "unknown subcommand 'X' (known: ...)"
  // when a word of `args` (the arguments after the program's name) where a
  // subcommand is expected names none. CLI11 would say "A subcommand is
  // required" instead.
  static void RequireKnownNames(const std::vector<Command>& commands,
                                const std::vector<std::string>& args);

  // After app.parse(): runs the command the command line chose and returns
  // its exit status. Throws what the command throws (dtr::Error).
  int Run() const;

 private:
  struct Added {
    CLI::App* app = nullptr;
    CommandRun run;
    std::vector<Added> subcommands;
  };
  // `chosen`: the arguments from where a subcommand of `parent` may be named
  // (empty below a command the arguments did not name).
  static std::vector<Added> Add(CLI::App& parent, const std::vector<Command>& commands,
                                std::span<const std::string> chosen);
  static int RunParsed(const std::vector<Added>& added);

  std::vector<Added> added_;
};

}  // namespace dtr::cli
