// The attribution keys of captured traces (docs/trace_format.md,
// "Attribution keys"): read by both line readers, stored per operator,
// tensor and storage, checked when malformed, absent from traces without
// them; the floor broken down by ROLE, memory by module; operators named
// with their module and source line wherever an answer names them.
//
// The fixture tests/e2e/data/attributed.log is a capture of
// tests/e2e/data/attributed_model.py (a Sequential of one block: a
// convolution, a batch norm without affine parameters; one SGD step with
// momentum).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/memory_bound.h"
#include "diagnose/decision_log.h"
#include "diagnose/module_memory.h"
#include "diagnose/pinned_floor.h"
#include "diagnose/remat_frontier.h"
#include "model/attribution.h"
#include "model/error.h"
#include "model/trace_line.h"
#include "model/trace_parser.h"
#include "reports/proof_report.h"
#include "reports/run_report.h"
#include "test_paths.h"
#include "test_runs.h"
#include "tests/parse_error.h"

namespace dtr {
namespace {

const std::string kFixture = std::string(DTRCHECK_SOURCE_DIR) + "/tests/e2e/data/attributed.log";
const std::string kSource = "tests/e2e/data/attributed_model.py";

const std::string kStart = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
                           "\n";

using testing::ParseErrorOf;

std::vector<std::string> FixtureLines() {
  std::ifstream in(kFixture);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("attribution: both line readers keep MODULE, PHASE, SOURCE and ROLE") {
  std::vector<std::string> lines = FixtureLines();
  REQUIRE(lines.size() > 100);
  int modules = 0, roles = 0;
  for (const std::string& line : lines) {
    TraceLine fast, sax;
    INFO(line);
    REQUIRE(fast.Parse(line));
    REQUIRE(sax.ParseWithSax(line));
    CHECK(fast.took_fast_path());
    CHECK(fast.SameFieldsAs(sax));
    modules += fast[TraceLine::kModule].type == JsonValue::Type::kString;
    roles += fast[TraceLine::kRole].type == JsonValue::Type::kString;
  }
  CHECK(modules > 10);
  CHECK(roles == 10);  // 6 constants, 2 gradients, 2 momentum buffers

  // The keys on a line the fast path hands over (an escape) read the same.
  const std::string escaped =
      R"({"ARGS":[],"INSTRUCTION":"CALL","MODULE":"a\"b","NAME":"f","PHASE":"forward","RESULT":["x"],"SOURCE":"m.py:1","TIME":"1"})";
  TraceLine fast, sax;
  REQUIRE(fast.Parse(escaped));
  REQUIRE(sax.ParseWithSax(escaped));
  CHECK_FALSE(fast.took_fast_path());
  CHECK(fast.SameFieldsAs(sax));
  CHECK(fast[TraceLine::kModule].text == "a\"b");
}

TEST_CASE("attribution: operators keep their module, phase and source; storages their role") {
  Trace t = LoadTrace(kFixture);
  REQUIRE(t.attribution);
  const Attribution& a = *t.attribution;
  REQUIRE(a.op_module.size() == t.ops.size());
  REQUIRE(a.op_source.size() == t.ops.size());
  REQUIRE(a.op_phase.size() == t.ops.size());
  REQUIRE(a.tensor_role.size() == t.tensors.size());
  REQUIRE(a.storage_role.size() == t.storages.size());
  auto op_of = [&](const char* tensor) { return t.tensor_named(tensor).op; };
  auto storage_of = [&](const char* tensor) { return t.tensor_named(tensor).storage; };

  const OpId conv = op_of("x7");
  CHECK(t.ops[conv].name == "convolution/7");
  CHECK(a.op_phase[conv] == Phase::kForward);
  CHECK(OperatorOrigin(t, conv) == "module 0.conv, " + kSource + ":18");
  CHECK(OperatorLabel(t, conv) == "convolution/7 (module 0.conv, " + kSource + ":18)");
  CHECK(OperatorLabel(t, conv, "x7") == "convolution/7 (x7; module 0.conv, " + kSource + ":18)");
  CHECK(OperatorLabel(t, std::string("convolution/7")) == OperatorLabel(t, conv));
  CHECK(OperatorLabel(t, std::string("convolution/8")) == "convolution/8");  // not an operator
  CHECK(OperatorOrigin(t, op_of("x13")) == "module 0, " + kSource + ":18");    // relu: the block
  CHECK(OperatorOrigin(t, op_of("x15")) == kSource + ":29");                  // the loss: no module
  CHECK(OperatorOrigin(t, op_of("x26")) == "backward of module 0.conv, " + kSource + ":18");
  CHECK(OperatorOrigin(t, op_of("x17")) == "backward, " + kSource + ":30");  // the seed gradient
  CHECK(OperatorOrigin(t, op_of("x36")) == "optimizer, " + kSource + ":31");
  CHECK(OperatorOrigin(t, 0) == "");  // a constant

  // A ROLE is the name's: the bytes are those of the storage it holds at the end.
  CHECK(StorageOrigin(t, storage_of("x0")) == "parameter 0.conv.weight");
  CHECK(storage_of("x36") == storage_of("x0"));  // the update in place aliases the weight
  CHECK(StorageOrigin(t, storage_of("x26")) == "gradient 0.conv.weight");  // x29 = detach(detach(x26))
  CHECK(StorageOrigin(t, storage_of("x33")) == "optimizer momentum_buffer 0.conv.weight");
  CHECK(StorageOrigin(t, storage_of("x4")) == "buffer 0.bn.num_batches_tracked");
  CHECK(StorageOrigin(t, storage_of("x6")) == "input");
  CHECK(StorageLabel(t, storage_of("x6")) == "x6 (input)");
  // Without a role, a storage is named by the operator that made it.
  CHECK(StorageLabel(t, storage_of("x10")) ==
        "x10 (module 0.bn, " + kSource + ":18)");
}

TEST_CASE("attribution: a trace without the keys has none and its names do not change") {
  Trace t = ParseTraceString(kStart + R"({"INSTRUCTION":"CONSTANT","NAME":"w"})" "\n"
                                      R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"w"})" "\n"
                                      R"({"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["y"],"TIME":"1"})" "\n"
                                      R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"y"})" "\n"
                                      R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"y"})" "\n",
                             "t.log");
  CHECK_FALSE(t.attribution);
  CHECK(OperatorLabel(t, 1) == "f/1");
  CHECK(OperatorLabel(t, 1, "y") == "f/1 (y)");
  CHECK(StorageLabel(t, 1) == "y");
  CHECK_FALSE(ExplainPinnedFloor(t));
  nlohmann::ordered_json j;
  AddOriginJson(j, t, 1);
  CHECK(j.is_null());
  std::ostringstream script;  // --emit-script: no comment after the entry
  WriteEvictionScript(script, t, EvictionScript{{{1, 1}}});
  CHECK(script.str() == "1 y\n");
}

TEST_CASE("attribution: a malformed key is rejected at its line, an absent one is not") {
  const std::string constant = R"({"INSTRUCTION":"CONSTANT","NAME":"w"})" "\n";
  auto memory = [](const std::string& role) {
    return R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"w")" + role + "}\n";
  };
  auto call = [](const std::string& keys) {
    return R"({"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["y"],"TIME":"1")" + keys +
           "}\n" R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"y"})" "\n"
           R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"y"})" "\n";
  };
  const std::string w = kStart + constant + memory("");
  CHECK(ParseErrorOf(w + call(R"(,"PHASE":"sideways")")) ==
        "t.log:4: \"PHASE\" must be forward, backward or optimizer, got \"sideways\"");
  CHECK(ParseErrorOf(w + call(R"(,"PHASE":1)")) == "t.log:4: \"PHASE\" must be a string");
  CHECK(ParseErrorOf(w + call(R"(,"MODULE":3)")) == "t.log:4: \"MODULE\" must be a string");
  CHECK(ParseErrorOf(w + call(R"(,"MODULE":null)")) == "t.log:4: \"MODULE\" must be a string");
  CHECK(ParseErrorOf(w + call(R"(,"SOURCE":["m.py",1])")) == "t.log:4: \"SOURCE\" must be a string");
  const std::string role_error =
      "t.log:3: \"ROLE\" must be \"parameter NAME\", \"buffer NAME\", \"gradient NAME\", "
      "\"optimizer KEY NAME\" or \"input\", got ";
  CHECK(ParseErrorOf(kStart + constant + memory(R"(,"ROLE":"weights w")")) == role_error + "\"weights w\"");
  CHECK(ParseErrorOf(kStart + constant + memory(R"(,"ROLE":"optimizer")")) == role_error + "\"optimizer\"");
  CHECK(ParseErrorOf(kStart + constant + memory(R"(,"ROLE":"input x")")) == role_error + "\"input x\"");
  CHECK(ParseErrorOf(kStart + constant + memory(R"(,"ROLE":"")")) == role_error + "\"\"");
  CHECK(ParseErrorOf(kStart + constant + memory(R"(,"ROLE":7)")) == "t.log:3: \"ROLE\" must be a string");

  // Every documented form is taken; a parameter outside the model has no NAME.
  for (const char* role : {"parameter a.b", "parameter", "buffer m.running_mean", "gradient a.b",
                           "optimizer exp_avg a.b", "optimizer step", "input"}) {
    INFO(role);
    CHECK(ParseErrorOf(kStart + constant + memory(std::string(R"(,"ROLE":")") + role + "\"")) ==
          "(no error)");
  }
  // Keys on one operator only: the others have none.
  Trace t = ParseTraceString(
      w + call(R"(,"MODULE":"","PHASE":"backward")") +
          R"({"ARGS":["y"],"INSTRUCTION":"CALL","NAME":"g","RESULT":["z"],"TIME":"1"})" "\n"
          R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"z"})" "\n"
          R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"z"})" "\n",
      "t.log");
  REQUIRE(t.attribution);
  CHECK(OperatorLabel(t, 1) == "f/1 (backward of the model)");
  CHECK(OperatorLabel(t, 2) == "g/2");
  CHECK_FALSE(t.attribution->has_roles());
  CHECK_FALSE(ExplainPinnedFloor(t));
}

// The pinned floor by ROLE, computed here from the trace's lines alone: a
// name's storage follows ALIAS and COPY_FROM, a ROLE counts the storage its
// name holds at the end, the floor is every constant's storage and every
// storage a live name holds at the end.
struct ExpectedFloor {
  std::map<std::string, int64_t> by_kind;  // first word of the ROLE, or "other"
  int64_t total = 0;
};

ExpectedFloor FloorFromLines(const std::vector<std::string>& lines) {
  std::map<std::string, int> storage_of;  // name -> storage
  std::vector<int64_t> size;
  std::set<int> constants;
  std::set<std::string> live;
  std::map<std::string, std::string> role_of;  // name -> ROLE
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(lines[i]);
    const std::string instr = j["INSTRUCTION"];
    auto memory_line = [&](const std::string& name) {
      nlohmann::json m = nlohmann::json::parse(lines[++i]);
      REQUIRE(m["NAME"] == name);
      if (m.contains("ROLE")) role_of[name] = m["ROLE"];
      return std::stoll(m["MEMORY"].get<std::string>());
    };
    if (instr == "CONSTANT") {
      const std::string name = j["NAME"];
      size.push_back(memory_line(name));
      storage_of[name] = static_cast<int>(size.size() - 1);
      constants.insert(storage_of[name]);
      live.insert(name);
    } else if (instr == "CALL") {
      for (const std::string name : j["RESULT"]) {
        const int64_t bytes = memory_line(name);
        const int alias = std::stoi(nlohmann::json::parse(lines[++i])["ALIAS"].get<std::string>());
        if (alias < 0) {
          size.push_back(bytes);
          storage_of[name] = static_cast<int>(size.size() - 1);
        } else {
          storage_of[name] = storage_of.at(j["ARGS"][alias]);
        }
        live.insert(name);
      }
    } else if (instr == "COPY_FROM" || instr == "COPY") {
      storage_of[j["DST"]] = storage_of.at(j["SRC"]);
      live.insert(j["DST"].get<std::string>());
    } else if (instr == "RELEASE") {
      live.erase(j["NAME"].get<std::string>());
    } else {
      REQUIRE(instr == "ANNOTATE");  // the fixture has no MUTATE
    }
  }
  std::set<int> pinned = constants;
  for (const std::string& name : live) pinned.insert(storage_of.at(name));
  ExpectedFloor f;
  std::set<int> with_role;
  for (const auto& [name, role] : role_of) {
    const int s = storage_of.at(name);
    REQUIRE(pinned.count(s));
    if (!with_role.insert(s).second) continue;
    f.by_kind[role.substr(0, role.find(' '))] += size[s];
  }
  for (int s : pinned) {
    f.total += size[s];
    if (!with_role.count(s)) f.by_kind["other"] += size[s];
  }
  return f;
}

TEST_CASE("attribution: the floor by parameters, gradients, optimizer state, buffers, inputs") {
  Trace t = LoadTrace(kFixture);
  std::optional<PinnedFloor> floor = ExplainPinnedFloor(t, 2);
  REQUIRE(floor);
  ExpectedFloor expected = FloorFromLines(FixtureLines());
  CHECK(floor->bytes == expected.total);
  CHECK(floor->bytes == ComputeMemoryBound(t).final_pinned);
  const char* kinds[] = {"parameter", "gradient", "optimizer", "buffer", "input", "other"};
  int64_t sum = 0;
  for (int part = 0; part <= kRoleKinds; ++part) {
    INFO(kinds[part]);
    CHECK(floor->parts[part].bytes == expected.by_kind[kinds[part]]);
    sum += floor->parts[part].bytes;
  }
  CHECK(sum == floor->bytes);
  // By hand: conv weight 72 + bias 8, each with its gradient and momentum
  // buffer; three buffers of 8; the input 2x1x4x4 floats.
  CHECK(floor->parts[static_cast<int>(RoleKind::kParameter)].bytes == 80);
  CHECK(floor->parts[static_cast<int>(RoleKind::kGradient)].bytes == 80);
  CHECK(floor->parts[static_cast<int>(RoleKind::kOptimizer)].bytes == 80);
  CHECK(floor->parts[static_cast<int>(RoleKind::kBuffer)].bytes == 24);
  CHECK(floor->parts[static_cast<int>(RoleKind::kInput)].bytes == 128);
  CHECK(floor->bytes == 392);
  const PinnedFloorPart& buffers = floor->parts[static_cast<int>(RoleKind::kBuffer)];
  CHECK(buffers.storages == 3);
  CHECK(buffers.largest.size() == 2);  // as asked
  const PinnedFloorPart& params = floor->parts[static_cast<int>(RoleKind::kParameter)];
  REQUIRE(params.largest.size() == 2);
  CHECK(t.storages[params.largest[0]].size == 72);

  std::ostringstream text;
  PrintTraceInfo(text, t, Summarize(kFixture, ComputeBaseline(t)));
  INFO(text.str());
  CHECK(text.str().find("    parameters                   80 bytes      2 storages  0.conv.weight 72 B, "
                        "0.conv.bias 8 B\n") != std::string::npos);
  CHECK(text.str().find("optimizer state              80 bytes      2 storages  momentum_buffer "
                        "0.conv.weight 72 B") != std::string::npos);
  nlohmann::ordered_json j = TraceInfoJson(t, Summarize(kFixture, ComputeBaseline(t)));
  CHECK(j["pinned_floor"]["bytes"] == 392);
  CHECK(j["pinned_floor"]["parts"][2]["part"] == "optimizer state");
  CHECK(j["pinned_floor"]["parts"][2]["largest"][0]["role"] == "optimizer momentum_buffer 0.conv.weight");
}

TEST_CASE("attribution: a storage kept to the end without a ROLE is in the floor's other part") {
  Trace t = ParseTraceString(
      kStart + R"({"INSTRUCTION":"CONSTANT","NAME":"w"})" "\n"
               R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"w","ROLE":"parameter fc.weight"})" "\n"
               R"({"ARGS":["w"],"INSTRUCTION":"CALL","MODULE":"fc","NAME":"f","PHASE":"forward","RESULT":["y"],"TIME":"1"})" "\n"
               R"({"INSTRUCTION":"MEMORY","MEMORY":"16","NAME":"y"})" "\n"
               R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"y"})" "\n"
               R"({"ARGS":["y"],"INSTRUCTION":"CALL","NAME":"g","PHASE":"backward","RESULT":["gw"],"TIME":"1"})" "\n"
               R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"gw"})" "\n"
               R"({"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"gw"})" "\n"
               R"({"ARGS":["gw"],"INSTRUCTION":"CALL","NAME":"detach","PHASE":"backward","RESULT":["g"],"TIME":"1"})" "\n"
               R"({"INSTRUCTION":"MEMORY","MEMORY":"8","NAME":"g","ROLE":"gradient fc.weight"})" "\n"
               R"({"ALIAS":"0","INSTRUCTION":"ALIAS","NAME":"g"})" "\n",
      "t.log");
  std::optional<PinnedFloor> floor = ExplainPinnedFloor(t);
  REQUIRE(floor);
  CHECK(floor->parts[static_cast<int>(RoleKind::kParameter)].bytes == 8);
  CHECK(floor->parts[static_cast<int>(RoleKind::kGradient)].bytes == 8);  // gw's storage, by g
  CHECK(floor->parts[PinnedFloor::kOther].bytes == 16);                   // y, kept to the end
  CHECK(floor->parts[PinnedFloor::kOther].largest == std::vector<StorageId>{1});
  CHECK(floor->bytes == 32);
  CHECK(StorageLabel(t, 1) == "y (module fc)");
}

TEST_CASE("attribution: the OOM context, the frontier and check name the module and source line") {
  Trace t = LoadTrace(kFixture);
  Baseline baseline = ComputeBaseline(t);
  RunSpec spec = testing::SpecAtBudget(600);
  RunRecord run = RunOne(t, baseline, spec);
  REQUIRE(run.result.oom);
  const OomContext& oom = *run.result.oom;
  const OpId op = FindOperator(t, oom.op);
  REQUIRE(op >= 0);
  const std::string origin = OperatorOrigin(t, op);
  INFO(oom.op << " " << origin);
  CHECK(origin.find(kSource + ":") != std::string::npos);

  std::ostringstream text;
  PrintRunText(text, Summarize(kFixture, baseline), run, &t);
  CHECK(text.str().find("OOM while computing " + oom.op + " (" + origin + ")") != std::string::npos);
  std::ostringstream plain;
  PrintRunText(plain, Summarize(kFixture, baseline), run);
  CHECK(plain.str().find("OOM while computing " + oom.op + " (program operator") != std::string::npos);

  nlohmann::ordered_json j = RunJson(Summarize(kFixture, baseline), run, &t);
  CHECK(j["oom"]["source"].get<std::string>().rfind(kSource + ":", 0) == 0);
  CHECK(j["oom"].contains("program_op_source"));

  RematFrontier f = FrontierAtOom(t, ConfigFor(spec, baseline));
  ProofHeader header{"attributed.log", baseline, "DTR", spec.runtime, std::nullopt, 600};
  std::ostringstream frontier;
  PrintFrontierText(frontier, t, header, f);
  INFO(frontier.str());
  CHECK(frontier.str().find("innermost " + OperatorLabel(t, op, oom.tensor) + "\n") != std::string::npos);
  nlohmann::ordered_json fj = FrontierJson(t, header, f);
  CHECK(fj["source"] == j["oom"]["source"]);
  CHECK(fj["frames"].back()["source"] == j["oom"]["source"]);
}

// Collects what --record writes for each decision.
class DecisionLines : public ReplayObserver {
 public:
  explicit DecisionLines(const Trace& t) : trace_(t) {}
  Flow OnDecision(const DecisionPoint& d) override {
    std::string line;
    AppendDecisionPointLine(line, trace_, d);
    CHECK(nlohmann::ordered_json::parse(line) == DecisionPointJson(trace_, d));
    lines.push_back(nlohmann::json::parse(line));
    return Flow::kContinue;
  }
  std::vector<nlohmann::json> lines;

 private:
  const Trace& trace_;
};

TEST_CASE("attribution: --record and --emit-script say where each evicted storage comes from") {
  Trace t = LoadTrace(kFixture);
  Baseline baseline = ComputeBaseline(t);
  // The largest budget under the peak at which DTR passes with evictions.
  std::optional<ScriptedRun> scripted;
  DecisionLines decisions(t);
  for (int64_t budget = baseline.memory - 1; budget > 0 && !scripted; --budget) {
    ReplayConfig config = ConfigFor(testing::SpecAtBudget(budget), baseline);
    ScriptedRun r = ScriptOfRun(t, config);
    if (!r.run.oom && !r.script.entries.empty()) {
      config.observer = &decisions;
      scripted = ScriptOfRun(t, config);
    }
  }
  REQUIRE(scripted);
  REQUIRE(!decisions.lines.empty());
  for (const nlohmann::json& d : decisions.lines) {
    const std::string chosen = d["chosen"];
    INFO(d.dump());
    StorageId s = -1;
    for (const Tensor& tensor : t.tensors)
      if (tensor.name == chosen) s = tensor.storage;
    REQUIRE(s >= 0);
    CHECK(d["chosen_origin"] == StorageOrigin(t, s));
    CHECK(!StorageOrigin(t, s).empty());
  }
  std::ostringstream script;
  WriteEvictionScript(script, t, scripted->script);
  std::istringstream lines(script.str());
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(line.find("  # ") != std::string::npos);  // EVENT NAME  # origin
  }
  // The comments are comments: the script reads back the same.
  CHECK(ParseEvictionScriptString(script.str(), "s.script", t).entries.size() ==
        scripted->script.entries.size());
}

TEST_CASE("attribution: memory by module sums what each module's operators allocate") {
  Trace t = LoadTrace(kFixture);
  std::optional<std::vector<ModuleMemory>> modules = MemoryByModule(t);
  REQUIRE(modules);
  // By hand from the fixture: 0.bn's forward is add_ (an alias), empty (0
  // bytes) and native_batch_norm (256 + 8 + 8); 0.conv's is the convolution
  // (256), its backward convolution_backward (72 + 8) and four detaches
  // (aliases); 0 (the block) runs relu (256) and a detach, and in the
  // backward a detach and threshold_backward (256).
  REQUIRE(modules->size() == 3);
  const ModuleMemory& bn = (*modules)[0];
  CHECK(bn.module == "0.bn");
  CHECK(bn.forward_ops == 3);
  CHECK(bn.forward_bytes == 272);
  CHECK(bn.backward_ops == 1);
  CHECK(bn.backward_bytes == 256);
  const ModuleMemory& conv = (*modules)[1];
  CHECK(conv.module == "0.conv");
  CHECK(conv.forward_bytes == 256);
  CHECK(conv.forward_compute == 1152);
  CHECK(conv.backward_ops == 5);
  CHECK(conv.backward_bytes == 80);
  const ModuleMemory& block = (*modules)[2];
  CHECK(block.module == "0");  // equal forward bytes: the module met first comes first
  CHECK(block.forward_bytes == 256);
  CHECK(block.backward_bytes == 256);
  // Every operator with a MODULE is counted once.
  int64_t ops = 0;
  for (const ModuleMemory& m : *modules) ops += m.forward_ops + m.backward_ops;
  int64_t with_module = 0;
  for (int32_t m : t.attribution->op_module) with_module += m >= 0;
  CHECK(ops == with_module);
}

}  // namespace
}  // namespace dtr
