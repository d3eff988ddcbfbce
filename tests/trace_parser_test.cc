// The trace parser: structure built from small inline traces, and one clear
// "FILE:LINE: message" error for each kind of bad input.
#include <doctest/doctest.h>

#include <string>

#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/parse_error.h"

namespace dtr {
namespace {

const std::string kStart = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
                           "\n";

std::string Constant(const std::string& name, int64_t size) {
  return R"({"INSTRUCTION":"CONSTANT","NAME":")" + name + "\"}\n" + R"({"INSTRUCTION":"MEMORY","MEMORY":")" +
         std::to_string(size) + R"(","NAME":")" + name + "\"}\n";
}

// A CALL with one non-aliasing result.
std::string Call(const std::string& op, const std::string& args, const std::string& result, int64_t size,
                 int64_t time, int alias = -1) {
  return R"({"ARGS":[)" + args + R"(],"INSTRUCTION":"CALL","NAME":")" + op + R"(","RESULT":[")" + result +
         R"("],"TIME":")" + std::to_string(time) + "\"}\n" + R"({"INSTRUCTION":"MEMORY","MEMORY":")" +
         std::to_string(size) + R"(","NAME":")" + result + "\"}\n" + R"({"ALIAS":")" + std::to_string(alias) +
         R"(","INSTRUCTION":"ALIAS","NAME":")" + result + "\"}\n";
}

std::string Release(const std::string& name) { return R"({"INSTRUCTION":"RELEASE","NAME":")" + name + "\"}\n"; }

using testing::ParseErrorOf;

TEST_CASE("parser builds operators, storages and the program like simrd") {
  std::string text = Constant("pre", 4) + kStart + Constant("w", 8) + Call("mul", R"("w","w")", "x", 16, 5) +
                     Call("view", R"("x")", "v", 16, 1, 0) + Release("x") + Release("never-defined");
  Trace t = ParseTraceString(text, "t.log");
  REQUIRE(t.ops.size() == 3);  // the CONSTANT before START is not replayed
  CHECK(t.ops[0].name == "constant/0");
  CHECK(t.ops[1].name == "mul/1");
  CHECK(t.ops[2].name == "view/2");
  CHECK(t.ops[1].args == std::vector<TensorId>{0, 0});  // duplicates kept
  CHECK(t.tensors[0].children == std::vector<TensorId>{1, 1});
  CHECK(t.tensors[2].is_alias);
  CHECK(t.tensors[2].size == 0);  // an alias allocates nothing
  CHECK(t.tensors[2].storage == t.tensors[1].storage);
  CHECK(t.storages.size() == 2);
  CHECK(t.storages[1].size == 16);
  CHECK(t.tensors[2].storage_compute_after == 6);  // mul + view
  // compute, pin(w), compute, compute, release(x), then end pins: w, v (x is released).
  REQUIRE(t.program.size() == 7);
  CHECK(t.program[1].kind == StepKind::kPin);
  CHECK(t.program[4].kind == StepKind::kRelease);
  CHECK(t.program[5].kind == StepKind::kPin);
  CHECK(t.program[5].target == 0);
  CHECK(t.program[6].target == 2);
}

TEST_CASE("MUTATE makes a new storage of the argument's storage size and releases the old tensor") {
  std::string text = kStart + Constant("a", 8) + Call("f", R"("a")", "x", 32, 3) + Call("v", R"("x")", "y", 0, 1, 0) +
                     R"({"ARGS":["y","a"],"INSTRUCTION":"MUTATE","MUTATE":[0],"NAME":"add_","TIME":"4"})"
                     "\n";
  Trace t = ParseTraceString(text, "t.log");
  const Tensor& m = t.tensor_named("y$");
  CHECK(t.ops[m.op].name == "add_/3");
  CHECK(t.storages[m.storage].size == 32);
  CHECK(!m.is_alias);
  CHECK(t.program[5].kind == StepKind::kRelease);
  CHECK(t.tensors[t.program[5].target].name == "y");
}

TEST_CASE("bad traces are rejected with file, line and problem") {
  CHECK(ParseErrorOf("") == "t.log: empty trace");
  CHECK(ParseErrorOf(Constant("w", 8)) == "t.log:2: no START annotation in the trace");
  CHECK(ParseErrorOf(kStart + "{\"INSTRUCTION\":\"CALL\",\n") == "t.log:2: malformed JSON");
  CHECK(ParseErrorOf(kStart + "\n" + Constant("w", 8)) == "t.log:2: empty line where an instruction was expected");
  CHECK(ParseErrorOf(kStart + "[1,2]\n") == "t.log:2: expected a JSON object");
  CHECK(ParseErrorOf(kStart + R"({"INSTRUCTION":"JUMP"})" "\n") == "t.log:2: unknown instruction \"JUMP\"");
  CHECK(ParseErrorOf(kStart + R"({"INSTRUCTION":"RELEASE"})" "\n") == "t.log:2: missing key \"NAME\"");
  CHECK(ParseErrorOf(kStart + R"({"INSTRUCTION":"CONSTANT","NAME":"w"})" "\n") ==
        "t.log:2: CONSTANT result w has no MEMORY line (the trace ends)");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + Call("f", R"("q")", "x", 4, 1)) ==
        "t.log:4: argument 'q' is not defined");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + Call("f", R"("w")", "w", 4, 1)) ==
        "t.log:4: CALL result 'w' is already defined");
  std::string no_alias = kStart + Constant("w", 8) + R"({"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["x"],"TIME":"1"})"
                         "\n" R"({"INSTRUCTION":"MEMORY","MEMORY":"4","NAME":"x"})" "\n";
  CHECK(ParseErrorOf(no_alias) == "t.log:4: CALL result x has no ALIAS line (the trace ends)");
  CHECK(ParseErrorOf(no_alias + Release("w")) == "t.log:6: expected the ALIAS line of CALL result x, got RELEASE");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + Call("f", R"("w")", "x", 4, 1, 3)) ==
        "t.log:6: ALIAS of x is 3, but f has 1 arguments");
  CHECK(ParseErrorOf(kStart + Constant("w", -8)) == "t.log:3: MEMORY of w is negative");
  CHECK(ParseErrorOf(kStart + R"({"ARGS":[],"INSTRUCTION":"CALL","NAME":"f","RESULT":["x"],"TIME":"1.5"})" "\n") ==
        "t.log:2: \"TIME\" must be an integer, got \"1.5\"");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + Release("w") + Release("w")) ==
        "t.log:5: RELEASE releases 'w', which holds no reference any more");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + Release("w") + R"({"DST":"c","INSTRUCTION":"COPY","SRC":"w"})" "\n") ==
        "t.log:5: COPY refers to 'w' after its last reference was released");
  CHECK(ParseErrorOf(kStart + R"({"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"z"})" "\n") ==
        "t.log:2: MEMORY line for 'z' does not follow a CONSTANT or CALL");
  CHECK(ParseErrorOf(kStart + Constant("w", 8) + R"({"ARGS":["w"],"INSTRUCTION":"MUTATE","MUTATE":[1],"NAME":"m","TIME":"1"})" "\n") ==
        "t.log:4: MUTATE index 1 is out of range for 1 arguments");
}

// Regression: a JSON integer MEMORY of 2^63 was read as a negative number
// ("MEMORY of x is negative"), and decimal strings near 2^63 were refused as
// too large although they fit.
TEST_CASE("trace parser: integers outside 64 bits are too large, not negative") {
  auto memory = [](const std::string& value) {
    return kStart + R"({"INSTRUCTION":"CONSTANT","NAME":"w"})" "\n" +
           R"({"INSTRUCTION":"MEMORY","MEMORY":)" + value + R"(,"NAME":"w"})" "\n";
  };
  CHECK(ParseErrorOf(memory("9223372036854775808")) ==
        "t.log:3: \"MEMORY\" is too large: 9223372036854775808 (at most 9223372036854775807)");
  CHECK(ParseErrorOf(memory("\"9223372036854775808\"")) ==
        "t.log:3: \"MEMORY\" is too large: 9223372036854775808 (at most 9223372036854775807)");
  CHECK(ParseErrorOf(memory("\"-9223372036854775809\"")) ==
        "t.log:3: \"MEMORY\" is too small: -9223372036854775809 (at least -9223372036854775808)");
  // 2^63 - 1 is read as an integer; as a size it passes the 2^62 bound on all sizes together.
  CHECK(ParseErrorOf(memory("9223372036854775807")).find("sizes sum to more than 2^62") != std::string::npos);
  CHECK(ParseErrorOf(memory("\"9223372036854775807\"")).find("sizes sum to more than 2^62") != std::string::npos);
  CHECK(ParseTraceString(memory("4611686018427387904"), "t.log").storages[0].size == int64_t{1} << 62);
  CHECK(ParseTraceString(memory("\"4611686018427387904\""), "t.log").storages[0].size == int64_t{1} << 62);
  CHECK(ParseTraceString(memory("\"+12\""), "t.log").storages[0].size == 12);
  CHECK(ParseErrorOf(memory("\"12a\"")) == "t.log:3: \"MEMORY\" must be an integer, got \"12a\"");
  CHECK(ParseErrorOf(memory("\"+-1\"")) == "t.log:3: \"MEMORY\" must be an integer, got \"+-1\"");
  CHECK(ParseErrorOf(memory("\"\"")) == "t.log:3: \"MEMORY\" must be an integer, got \"\"");
}

TEST_CASE("trace parser: bad input is an InputError, tokens are echoed escaped and cut") {
  try {
    ParseTraceString(kStart + "{oops\n", "t.log");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInput);
  }
  std::string name(1000, 'n');
  CHECK(ParseErrorOf(kStart + R"({"INSTRUCTION":")" + name + "\"}\n") ==
        "t.log:2: unknown instruction \"" + std::string(64, 'n') + "... (1000 bytes)\"");
  CHECK(ParseErrorOf(kStart + "{\"INSTRUCTION\":\"J\\u0000\\u001bK\"}\n") ==
        "t.log:2: unknown instruction \"J\\x00\\x1bK\"");
}

}  // namespace
}  // namespace dtr
