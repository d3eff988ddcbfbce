// libFuzzer target: any bytes either parse into a trace whose invariants hold
// and which replays (baseline and a half budget), or raise dtr::Error. Anything else (a
// crash, a sanitizer report, another exception) is a bug. Each line is also
// read by TraceLine's fast path and by nlohmann's parser alone: both must
// accept it or not, with the same fields.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "model/error.h"
#include "model/trace_line.h"
#include "model/trace_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  dtr::TraceLine fast, sax;
  for (size_t begin = 0; begin <= text.size();) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string line(text.substr(begin, end - begin));
    bool a = fast.Parse(line), b = sax.ParseWithSax(line);
    if (a != b || (a && !fast.SameFieldsAs(sax))) __builtin_trap();
    begin = end + 1;
  }
  try {
    dtr::Trace t = dtr::ParseTraceString(text, "fuzz.log");
    for (const dtr::Tensor& tensor : t.tensors) {
      if (tensor.storage < 0 || tensor.storage >= static_cast<int>(t.storages.size())) __builtin_trap();
      if (tensor.op < 0 || tensor.op >= static_cast<int>(t.ops.size())) __builtin_trap();
    }
    for (const dtr::Step& s : t.program) {
      int limit = static_cast<int>(s.kind == dtr::StepKind::kCompute ? t.ops.size() : t.tensors.size());
      if (s.target < 0 || s.target >= limit) __builtin_trap();
    }
    // The replays must not crash either: the baseline, then DTR at half of it.
    dtr::Baseline b = dtr::ComputeBaseline(t);
    dtr::ReplayConfig c;
    c.heuristic = &dtr::FindHeuristic("DTR");
    c.budget = b.memory / 2;
    dtr::Replay(t, c);
  } catch (const dtr::Error&) {
  }
  return 0;
}
