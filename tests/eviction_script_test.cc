// Eviction scripts and the schedule checker: the text format, the script of a
// run, and what must hold when a run's own script is checked at other budgets.
#include "checker/proofs/eviction_script.h"

#include <doctest/doctest.h>

#include <sstream>

#include "checker/drivers/sweep.h"
#include "checker/proofs/schedule_checker.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/test_runs.h"

namespace dtr::testing {
namespace {

// a -> b -> c, c needs a and b; each 10 bytes.
const char* kChain = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"in","RESULT":["a"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"a"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"a"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["b"],"TIME":"2"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"b"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"b"}
{"ARGS":["b"],"INSTRUCTION":"CALL","NAME":"g","RESULT":["c"],"TIME":"4"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"c"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"c"}
{"ARGS":["a","c"],"INSTRUCTION":"CALL","NAME":"h","RESULT":["d"],"TIME":"8"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"d"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"d"}
{"INSTRUCTION":"RELEASE","NAME":"b"}
{"INSTRUCTION":"RELEASE","NAME":"c"}
)";

TEST_CASE("eviction script: text round trip, comments, any tensor names its storage") {
  Trace t = ParseTraceString(kChain, "chain.log");
  EvictionScript s =
      ParseEvictionScriptString("# a comment\n\n2 a   # evict a before g\n3 b\n", "s.txt", t);
  REQUIRE(s.entries.size() == 2);
  CHECK(s.entries[0].event == 2);
  CHECK(s.entries[0].storage == t.tensor_named("a").storage);
  CHECK(s.entries[1].storage == t.tensor_named("b").storage);
  std::ostringstream out;
  WriteEvictionScript(out, t, s, {"hello"});
  CHECK(out.str() == "# hello\n2 a\n3 b\n");
  EvictionScript back = ParseEvictionScriptString(out.str(), "back", t);
  CHECK(back.entries.size() == 2);
}

TEST_CASE("eviction script: errors give file, line and what was expected") {
  Trace t = ParseTraceString(kChain, "chain.log");
  auto error_of = [&](const char* text) {
    try {
      ParseEvictionScriptString(text, "s.txt", t);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("1 a\n2\n") == "s.txt:2: expected 'EVENT STORAGE', got '2'");
  CHECK(error_of("1 a b\n") == "s.txt:1: expected 'EVENT STORAGE', got '1 a b'");
  CHECK(error_of("-1 a\n") == "s.txt:1: EVENT must be a non-negative integer, got '-1'");
  CHECK(error_of("1 zz\n") == "s.txt:1: 'zz' is not a tensor of chain.log");
  // Regression: the largest 64-bit event was refused as "must be a non-negative integer".
  CHECK(ParseEvictionScriptString("9223372036854775807 a\n", "s.txt", t).entries[0].event ==
        INT64_MAX);
  CHECK(error_of("9223372036854775808 a\n") ==
        "s.txt:1: EVENT 9223372036854775808 is too large (at most 9223372036854775807)");
  CHECK(error_of("1x a\n") == "s.txt:1: EVENT must be a non-negative integer, got '1x'");
  CHECK(error_of("3 a\n# x\n2 b\n") ==
        "s.txt:3: event 2 comes after event 3 (line 1); entries must be sorted by event");
}

TEST_CASE("schedule checker: pass, oom with its event, invalid entries") {
  Trace t = ParseTraceString(kChain, "chain.log");
  // Without evictions: a, b, c live when d is computed: 30 + 10.
  CHECK(CheckSchedule(t, 40, EvictionScript{}).passed());
  ScheduleCheck tight = CheckSchedule(t, 39, EvictionScript{});
  CHECK(tight.outcome == Outcome::kOom);
  REQUIRE(tight.run.script_failure);
  CHECK(tight.run.script_failure->event == 3);
  // Evict b before computing h (event 3): a and c stay, 20 + 10 fits 30.
  EvictionScript evict_b = ParseEvictionScriptString("3 b\n", "s", t);
  ScheduleCheck ok = CheckSchedule(t, 30, evict_b);
  CHECK(ok.passed());
  CHECK(ok.run.max_memory == 30);
  // a is locked (an argument of h) at event 3.
  ScheduleCheck locked = CheckSchedule(t, 30, ParseEvictionScriptString("3 a\n", "s", t));
  CHECK(locked.outcome == Outcome::kInvalidScript);
  CHECK(locked.run.script_failure->entry == 0);
  CHECK(locked.run.script_failure->reason == "storage a is locked by a pending computation");
  // Evicting a at event 2 (before g) forces its rematerialization for h:
  // events are in, f, g, in (remat), h.
  ScheduleCheck remat = CheckSchedule(t, 40, ParseEvictionScriptString("2 a\n", "s", t));
  CHECK(remat.passed());
  CHECK(remat.run.events == 5);
  CHECK(remat.run.remat_compute == 1);
  ScheduleCheck late = CheckSchedule(t, 40, ParseEvictionScriptString("9 a\n", "s", t));
  CHECK(late.outcome == Outcome::kInvalidScript);
  CHECK(late.run.script_failure->reason == "the run ended before this event");
}

// What must hold for a run's own script: at every budget of at least the
// run's peak the script replays to the very same run (a feasible run's
// script is valid at any larger budget); one byte below the peak it fails,
// at the computation where the peak was first reached.
void CheckOwnScript(const LoadedTrace& loaded, const char* heuristic, const char* ratio) {
  const Trace& trace = loaded.trace;
  INFO(trace.source, " ", heuristic, " ", ratio);
  ReplayConfig config = loaded.ConfigAt(ratio, heuristic);
  ScriptedRun sr = ScriptOfRun(trace, config);
  REQUIRE(sr.run.outcome == Outcome::kPass);
  CHECK(static_cast<int64_t>(sr.script.entries.size()) == sr.run.heuristic_evictions);
  CHECK(sr.run.budget_lo == sr.run.max_memory);
  for (int64_t budget : {config.budget, sr.run.max_memory, config.budget * 3}) {
    ScheduleCheck c = CheckSchedule(trace, budget, sr.script);
    CHECK(c.passed());
    CHECK(c.run.clock == sr.run.clock);
    CHECK(c.run.events == sr.run.events);
    CHECK(c.run.max_memory == sr.run.max_memory);
    CHECK(c.run.evictions() == sr.run.evictions());
    CHECK(c.run.evict_count == sr.run.evict_count);
  }
  ScheduleCheck below = CheckSchedule(trace, sr.run.max_memory - 1, sr.script);
  CHECK(below.outcome == Outcome::kOom);
  REQUIRE(below.run.oom);
  CHECK(below.run.oom->memory_usage + below.run.oom->request == sr.run.max_memory);
}

TEST_CASE(
    "schedule checker: a feasible run's script passes at its peak and above, fails one byte "
    "below") {
  const LoadedTrace resnet = LoadWithBaseline("resnet32");
  CheckOwnScript(resnet, "DTR", "0.101");
  CheckOwnScript(resnet, "LRU", "0.2");
  CheckOwnScript(resnet, "DTREqClass", "0.107");
  CheckOwnScript(LoadWithBaseline("unet"), "DTR", "0.45");
}

TEST_CASE("schedule checker: the script of an OOM run fails where the run failed") {
  const LoadedTrace resnet = LoadWithBaseline("resnet32");
  const ReplayConfig config = resnet.ConfigAt("0.102");  // DTR OOMs there
  ScriptedRun sr = ScriptOfRun(resnet.trace, config);
  REQUIRE(sr.run.outcome == Outcome::kOom);
  ScheduleCheck c = CheckSchedule(resnet.trace, config.budget, sr.script);
  CHECK(c.outcome == Outcome::kOom);
  REQUIRE(c.run.oom);
  CHECK(c.run.oom->event == sr.run.oom->event);
  CHECK(c.run.oom->remat_depth == 117);
  CHECK(c.run.oom->memory_usage == sr.run.oom->memory_usage);
}

// A script and a heuristic together: the scripted evictions happen first and
// the heuristic frees the rest. Fed its own first decisions as a script, a
// run is unchanged, and the recorded script (scripted and heuristic entries
// merged) is the run's own.
TEST_CASE("replay: a scripted start with a heuristic rest") {
  const LoadedTrace resnet = LoadWithBaseline("resnet32");
  const ReplayConfig config = resnet.ConfigAt("0.102");  // DTR OOMs there
  ScriptedRun plain = ScriptOfRun(resnet.trace, config);
  REQUIRE(plain.script.entries.size() > 100);
  std::vector<ScriptedEviction> prefix(plain.script.entries.begin(),
                                       plain.script.entries.begin() + 100);
  ReplayConfig hybrid = config;
  hybrid.script = &prefix;
  ScriptedRun mixed = ScriptOfRun(resnet.trace, hybrid);
  CHECK(mixed.run.outcome == plain.run.outcome);
  CHECK(mixed.run.clock == plain.run.clock);
  CHECK(mixed.run.heuristic_evictions == plain.run.heuristic_evictions);
  REQUIRE(mixed.script.entries.size() == plain.script.entries.size());
  for (size_t i = 0; i < plain.script.entries.size(); ++i) {
    CHECK(mixed.script.entries[i].event == plain.script.entries[i].event);
    CHECK(mixed.script.entries[i].storage == plain.script.entries[i].storage);
  }
}

}  // namespace
}  // namespace dtr::testing
