// Subcommand definitions: each adds its flags to the CLI11 app and, when
// chosen, sets `action` to a function that calls the library and prints.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace dtr::cli {

void RegisterCommands(CLI::App& app, std::vector<std::function<int()>>& actions);

}  // namespace dtr::cli
