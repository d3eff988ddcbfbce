// Subcommand definitions: each adds its flags to the CLI11 app and, when
// chosen, sets `action` to a function that calls the library and prints.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace dtr::cli {

using Actions = std::vector<std::function<int()>>;

// Adds every subcommand. Each Register* below lives in its own cli/*.cc file.
void RegisterCommands(CLI::App& app, Actions& actions);

void RegisterReplayCommands(CLI::App& app, Actions& actions);       // info, replay, sweep
void RegisterGenCommands(CLI::App& app, Actions& actions);          // gen chain|resnet|rnn|demo|list
void RegisterReportCommands(CLI::App& app, Actions& actions);       // report
void RegisterAtlasCommands(CLI::App& app, Actions& actions);        // atlas
void RegisterInstabilityCommands(CLI::App& app, Actions& actions);  // scan, diff, blame, ablate
void RegisterProofCommands(CLI::App& app, Actions& actions);        // frontier, check, explain, prove, bounds

}  // namespace dtr::cli
