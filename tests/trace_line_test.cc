// TraceLine's fast path against nlohmann's SAX parser: on every line of the
// public traces (which must all take the fast path), on hand-written lines
// at the edges of its grammar, and on seeded random mutations of trace
// lines, both readers accept the same lines and give the same fields.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "model/trace_line.h"
#include "test_paths.h"

namespace dtr {
namespace {

struct Outcome {
  bool fast = false;      // the fast path took the line
  bool accepted = false;  // both readers accepted it
};

// Parses `text` both ways; fails the test case if they disagree.
Outcome Compare(const std::string& text) {
  TraceLine fast, sax;
  bool a = fast.Parse(text);
  bool b = sax.ParseWithSax(text);
  INFO("line: " << text);
  REQUIRE(a == b);
  if (a) REQUIRE(fast.SameFieldsAs(sax));
  return {fast.took_fast_path(), a};
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("every line of the public traces takes the fast path and reads as nlohmann reads it") {
  for (const char* name : {"resnet32", "unet", "lstm", "treelstm", "transformer", "tv_densenet121",
                           "inceptionv4", "unroll_gan"}) {
    std::vector<std::string> lines = Lines(testing::TracePath(name));
    INFO(name);
    REQUIRE(lines.size() > 1000);
    size_t fast = 0;
    for (const std::string& line : lines) fast += Compare(line).fast;
    CHECK(fast == lines.size());
  }
}

TEST_CASE("lines at the edges of the fast path's grammar") {
  struct Case {
    const char* text;
    bool fast;      // expected to take the fast path
    bool accepted;  // expected to be one JSON value
  };
  const Case cases[] = {
      {R"({"INSTRUCTION":"CONSTANT","NAME":"x1"})", true, true},
      {" { \"INSTRUCTION\" : \"CONSTANT\" ,\t\"NAME\" : \"x1\" } ", true, true},
      {R"({})", true, true},
      {R"({"ARGS":[],"RESULT":[ "a" , "b" ]})", true, true},
      {R"({"MUTATE":[0,1,17],"TIME":123})", true, true},
      {R"({"NAME":"a","NAME":"b"})", true, true},               // the last of a repeated key
      {R"({"ARGS":["a"],"ARGS":"b"})", true, true},             // an array, then a string
      {R"({"OTHER":["x",1],"NAME":"n"})", true, true},          // an unknown key's array
      {R"({"TIME":999999999999999999})", true, true},           // 18 digits
      {R"({"TIME":9999999999999999999})", false, true},         // 19 digits: nlohmann's
      {R"({"TIME":18446744073709551616})", false, true},        // beyond uint64: a float
      {R"({"TIME":01})", false, false},                         // a leading zero
      {R"({"TIME":1.5})", false, true},
      {R"({"TIME":1e3})", false, true},
      {R"({"TIME":-1})", false, true},
      {R"({"NAME":"a\"b"})", false, true},                      // an escape
      {R"({"NAME":"a\u0041"})", false, true},
      {"{\"NAME\":\"\xc3\xa9\"}", false, true},                  // UTF-8
      {"{\"NAME\":\"\xc3\"}", false, false},                     // broken UTF-8
      {"{\"NAME\":\"a\x01\"}", false, false},                    // a control character
      {R"({"NAME":"x"} x)", false, false},                      // trailing bytes
      {R"({"NAME":"x"}{})", false, false},
      {R"({"NAME":"x",})", false, false},
      {R"({"NAME":["x",]})", false, false},
      {R"({"NAME":[["x"]]})", false, true},                     // nesting
      {R"({"NAME":{"a":1}})", false, true},
      {R"({"NAME":null,"TIME":true})", false, true},
      {R"(["NAME"])", false, true},
      {R"("x")", false, true},
      {"", false, false},
      {"\xef\xbb\xbf{\"NAME\":\"x\"}", false, true},             // a byte order mark
      {R"({"NAME":"x")", false, false},
      {R"({"NAME" "x"})", false, false},
  };
  for (const Case& c : cases) {
    Outcome o = Compare(c.text);
    INFO(c.text);
    CHECK(o.fast == c.fast);
    CHECK(o.accepted == c.accepted);
  }
}

TEST_CASE("random mutations of trace lines read the same both ways") {
  std::vector<std::string> lines;
  for (const char* name : {"lstm", "unroll_gan", "inceptionv4"}) {
    std::vector<std::string> all = Lines(testing::TracePath(name));
    for (size_t i = 0; i < all.size(); i += 301) lines.push_back(all[i]);
  }
  const std::string alphabet = " \t\"\\,:[]{}0123456789-+.eEnulltrfa\x01\x7f\x80\xc3\xa9\xff";
  unsigned seed = 20261201;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  int fast = 0, accepted = 0, rejected = 0, total = 0;
  for (int round = 0; round < 40; ++round) {
    for (const std::string& original : lines) {
      std::string s = original;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c); break;
          case 1: if (at < s.size()) s.erase(at, 1); break;
          default: if (at < s.size()) s[at] = c; break;
        }
      }
      Outcome o = Compare(s);
      fast += o.fast;
      (o.accepted ? accepted : rejected) += 1;
      ++total;
    }
  }
  // Both readers were exercised: lines the fast path took, lines it handed
  // over that nlohmann accepted, and lines rejected.
  CHECK(fast > total / 20);
  CHECK(accepted - fast > total / 100);
  CHECK(rejected > total / 5);
}

}  // namespace
}  // namespace dtr
