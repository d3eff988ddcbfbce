#include "cli/exit_status.h"

#include <fmt/core.h>

#include "model/echo.h"

namespace dtr::cli {

ExitStatus ExitStatusOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return kExitUsage;
    case ErrorKind::kInput:
      return kExitInput;
    case ErrorKind::kEnvironment:
      return kExitEnvironment;
  }
  return kExitUsage;
}

std::string ErrorLine(std::string_view message, const std::vector<std::string>& args) {
  std::string text(message);
  // Arguments are cut only when no one could read them whole: a file path
  // must stay whole, or FILE:LINE names nothing.
  constexpr size_t kLongArgumentBytes = 512;
  for (const std::string& arg : args) {
    if (arg.size() <= kLongArgumentBytes) continue;
    std::string echo = Echo(arg);
    for (size_t pos = 0; (pos = text.find(arg, pos)) != std::string::npos; pos += echo.size())
      text.replace(pos, arg.size(), echo);
  }
  text = EscapeNonPrintable(text);
  if (text.size() > kMaxMessageBytes) {
    size_t size = text.size(), cut = kMaxMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // UTF-8
    text.resize(cut);
    text += fmt::format("... ({} bytes)", size);
  }
  return text;
}

}  // namespace dtr::cli
