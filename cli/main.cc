// dtrcheck's command line: the subcommands come from one table
// (cli/command_table.cc); CLI11 fills the chosen command's options struct, the
// command's function calls the library and prints. Errors from the library
// (dtr::Error) are printed as one line and exit with status 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/command_table.h"
#include "model/error.h"

int main(int argc, char** argv) {
  CLI::App app{"dtrcheck: replay, check and diagnose Dynamic Tensor Rematerialization traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dtrcheck 0.1");
  dtr::cli::CommandLine commands(app, dtr::cli::Commands());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "dtrcheck: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return commands.Run();
  } catch (const dtr::Error& e) {
    std::fflush(stdout);
    std::cerr << "dtrcheck: " << e.what() << "\n";
    return 1;
  }
}
