#include "cli/commands.h"

namespace dtr::cli {

void RegisterCommands(CLI::App& app, Actions& actions) {
  RegisterReplayCommands(app, actions);
  RegisterProofCommands(app, actions);
  RegisterGenCommands(app, actions);
  RegisterReportCommands(app, actions);
  RegisterAtlasCommands(app, actions);
  RegisterInstabilityCommands(app, actions);
}

}  // namespace dtr::cli
