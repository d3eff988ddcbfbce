// dtrcheck's command line: the subcommands come from one table
// (cli/command_table.cc); CLI11 fills the chosen command's options struct, the
// command's function calls the library and prints. An error is printed as one
// line and ends the program with the exit status of its kind (docs/cli.md).
// Under an MPI launcher every rank runs the command and rank 0 alone prints
// (docs/mpi.md).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "checker/farm/mpi_farm.h"
#include "cli/command_table.h"
#include "cli/exit_status.h"
#include "cli/version.h"
#include "model/error.h"
#include "model/output_file.h"
#include "model/process_heap.h"

namespace {

// The command line as one process runs it; `error` gets the line printed for
// an error.
int RunCommandLine(int argc, char** argv, std::string* error) {
  using namespace dtr::cli;
  const std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App app{"dtrcheck: replay, check and diagnose Dynamic Tensor Rematerialization traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return VersionText(); });  // MPI's version: loads dtrcheck-ext.so
  app.footer(HelpFooter(TopLevelExamples()));
  CommandLine commands(app, Commands(), args);
  try {
    CommandLine::RequireKnownNames(Commands(), args);
    app.parse(argc, argv);
    return commands.Run();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    *error = ErrorLine(e.what(), args) + " (see --help)";
    std::cerr << "dtrcheck: " << *error << "\n";
    return kExitUsage;
  } catch (const dtr::Error& e) {
    std::fflush(stdout);
    *error = ErrorLine(e.what(), args);
    std::cerr << "dtrcheck: " << *error << "\n";
    return ExitStatusOf(e.kind());
  } catch (const std::bad_alloc&) {
    // Nothing is half-written: output files are committed only when complete
    // (model/output_file.h), and results are printed after the work is done.
    std::fflush(stdout);
    std::string command;
    for (const std::string& arg : args) command += (command.empty() ? "" : " ") + arg;
    *error = ErrorLine("out of memory: the process could not allocate more while running '" + command +
                           "'; raise its memory limit or give a smaller trace",
                       args);
    std::cerr << "dtrcheck: " << *error << "\n";
    return kExitEnvironment;
  } catch (const std::system_error& e) {
    // The system refused a resource the run cannot do without (a thread of
    // an MPI job, a file lock): the environment's limit, not a bug.
    std::fflush(stdout);
    *error = ErrorLine(fmt::format("the system refused a resource the run needs: {}", e.what()), args);
    std::cerr << "dtrcheck: " << *error << "\n";
    return kExitEnvironment;
  }
}

}  // namespace

int main(int argc, char** argv) {
  dtr::TuneHeapForReplay();
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which the
  // writers report as one line, instead of the signal ending the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // Under mpirun or srun every rank runs the command (checker/farm/mpi_farm.h);
  // rank 0 prints and writes, the others print nothing and publish no file.
  dtr::MpiSession mpi(&argc, &argv);
  if (!dtr::FarmCollectsHere()) {
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) return 1;
    dtr::DiscardOutputFiles();
  }
  std::string error;
  int status = RunCommandLine(argc, argv, &error);
  // Output that did not reach its file (a full disk, a file size limit, a
  // closed pipe) is an incomplete answer: say so and fail, as for a file.
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    error = dtr::SystemErrorMessage("standard output", "write error, the output is incomplete");
    std::cerr << "dtrcheck: " << error << "\n";
    if (status == dtr::cli::kExitSuccess || status == dtr::cli::kExitNegative) status = dtr::cli::kExitInput;
  }
  return mpi.Finish(status, error);
}
