// dtrcheck's command line: CLI11 fills an options struct per subcommand, one
// library call does the work, and the result is printed. Errors from the
// library (dtr::Error) are printed as one line and exit with status 1.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "model/error.h"

int main(int argc, char** argv) {
  CLI::App app{"dtrcheck: replay, check and diagnose Dynamic Tensor Rematerialization traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dtrcheck 0.1");
  std::vector<std::function<int()>> actions;
  dtr::cli::RegisterCommands(app, actions);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "dtrcheck: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    for (auto& action : actions)
      if (action) return action();
  } catch (const dtr::Error& e) {
    std::fflush(stdout);
    std::cerr << "dtrcheck: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
