// The attribution keys of captured traces (docs/trace_format.md,
// "Attribution keys"): read by both line readers, stored per operator,
// tensor and storage, checked when malformed, absent from traces without
// them.
//
// The fixture tests/e2e/data/attributed.log is a capture of
// tests/e2e/data/attributed_model.py (a Sequential of one block: a
// convolution, a batch norm without affine parameters; one SGD step with
// momentum).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/attribution.h"
#include "model/error.h"
#include "model/trace_line.h"
#include "model/trace_parser.h"
#include "test_paths.h"

namespace dtr {
namespace {

const std::string kFixture = std::string(DTRCHECK_SOURCE_DIR) + "/tests/e2e/data/attributed.log";
const std::string kSource = "tests/e2e/data/attributed_model.py";

const std::string kStart = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
                           "\n";

std::string ErrorOf(const std::string& text) {
  try {
    ParseTraceString(text, "t.log");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

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
  nlohmann::ordered_json j;
  AddOriginJson(j, t, 1);
  CHECK(j.is_null());
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
  CHECK(ErrorOf(w + call(R"(,"PHASE":"sideways")")) ==
        "t.log:4: \"PHASE\" must be forward, backward or optimizer, got \"sideways\"");
  CHECK(ErrorOf(w + call(R"(,"PHASE":1)")) == "t.log:4: \"PHASE\" must be a string");
  CHECK(ErrorOf(w + call(R"(,"MODULE":3)")) == "t.log:4: \"MODULE\" must be a string");
  CHECK(ErrorOf(w + call(R"(,"MODULE":null)")) == "t.log:4: \"MODULE\" must be a string");
  CHECK(ErrorOf(w + call(R"(,"SOURCE":["m.py",1])")) == "t.log:4: \"SOURCE\" must be a string");
  const std::string role_error =
      "t.log:3: \"ROLE\" must be \"parameter NAME\", \"buffer NAME\", \"gradient NAME\", "
      "\"optimizer KEY NAME\" or \"input\", got ";
  CHECK(ErrorOf(kStart + constant + memory(R"(,"ROLE":"weights w")")) == role_error + "\"weights w\"");
  CHECK(ErrorOf(kStart + constant + memory(R"(,"ROLE":"optimizer")")) == role_error + "\"optimizer\"");
  CHECK(ErrorOf(kStart + constant + memory(R"(,"ROLE":"input x")")) == role_error + "\"input x\"");
  CHECK(ErrorOf(kStart + constant + memory(R"(,"ROLE":"")")) == role_error + "\"\"");
  CHECK(ErrorOf(kStart + constant + memory(R"(,"ROLE":7)")) == "t.log:3: \"ROLE\" must be a string");

  // Every documented form is taken; a parameter outside the model has no NAME.
  for (const char* role : {"parameter a.b", "parameter", "buffer m.running_mean", "gradient a.b",
                           "optimizer exp_avg a.b", "optimizer step", "input"}) {
    INFO(role);
    CHECK(ErrorOf(kStart + constant + memory(std::string(R"(,"ROLE":")") + role + "\"")) ==
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
}

}  // namespace
}  // namespace dtr
