#include "tests/random_trace.h"

#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "model/trace_parser.h"

namespace dtr::testing {

RandomTraceOptions VariedOptions(uint64_t seed) {
  RandomTraceOptions o;
  o.operators = 6 + static_cast<int>(seed % 15);
  o.max_outputs = 1 + static_cast<int>(seed % 3);
  return o;
}

std::string RandomTraceText(uint64_t seed, const RandomTraceOptions& o) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // Few distinct sizes and times, so that scores tie often.
  const int sizes[] = {0, 8, 16, 16, 32, 64};
  const int times[] = {0, 1, 2, 3, 5, 8};
  std::string out = "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n";
  std::vector<std::string> live;                 // names holding a reference
  std::map<std::string, std::string> tensor_of;  // name -> the tensor it is bound to
  std::set<std::string> tensors;                 // every tensor name made so far
  int next = 0, storages = 0;
  auto fresh = [&] { return fmt::format("x{}", next++); };
  auto bind = [&](const std::string& name, const std::string& tensor) {
    tensor_of[name] = tensor;
    tensors.insert(tensor);
  };
  auto args_json = [](const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += fmt::format("{}\"{}\"", s.empty() ? "" : ",", n);
    return s;
  };
  for (int i = 0; i < o.constants; ++i, ++storages) {
    std::string n = fresh();
    out += fmt::format("{{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"{}\"}}\n", n);
    out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                       sizes[pick(1, 5)], n);
    live.push_back(n);
    bind(n, n);
  }
  if (live.empty()) {  // a first operator without arguments
    std::string n = fresh();
    out += fmt::format(
        "{{\"ARGS\":[],\"INSTRUCTION\":\"CALL\",\"NAME\":\"input\",\"RESULT\":[\"{}\"],\"TIME\":\"{"
        "}\"}}\n",
        n, times[pick(1, 5)]);
    out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                       sizes[pick(1, 5)], n);
    out += fmt::format("{{\"ALIAS\":\"-1\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"{}\"}}\n", n);
    live.push_back(n);
    bind(n, n);
    ++storages;
  }
  for (int i = 0; o.storages > 0 ? storages < o.storages : i < o.operators; ++i) {
    if (live.empty()) break;
    int nargs = pick(1, std::min<int>(o.max_args, static_cast<int>(live.size())));
    std::vector<std::string> args;
    for (int a = 0; a < nargs; ++a)
      args.push_back(live[pick(0, static_cast<int>(live.size()) - 1)]);
    // MUTATE names its new tensor after the old one plus '$'; a name still
    // bound to an already mutated tensor (through a COPY) cannot be mutated
    // again, so that trace would not parse: make a CALL instead.
    if (o.mutations && pick(0, 9) == 0 && !tensors.count(tensor_of[args[0]] + "$")) {
      out += fmt::format(
          "{{\"ARGS\":[{}],\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":[0],\"NAME\":\"m{}\",\"TIME\":\"{}"
          "\"}}\n",
          args_json(args), i, times[pick(0, 5)]);
      // The parser rebinds args[0] to the new tensor; the name stays live.
      bind(args[0], tensor_of[args[0]] + "$");
      ++storages;
    } else {
      int nres = pick(1, o.max_outputs);
      std::vector<std::string> res;
      for (int r = 0; r < nres; ++r) res.push_back(fresh());
      out += fmt::format(
          "{{\"ARGS\":[{}],\"INSTRUCTION\":\"CALL\",\"NAME\":\"op{}\",\"RESULT\":[{}],\"TIME\":\"{}"
          "\"}}\n",
          args_json(args), i, args_json(res), times[pick(0, 5)]);
      for (const auto& r : res) {
        int alias = (o.aliases && pick(0, 5) == 0) ? pick(0, nargs - 1) : -1;
        out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                           alias >= 0 ? 0 : sizes[pick(0, 5)], r);
        out += fmt::format("{{\"ALIAS\":\"{}\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"{}\"}}\n",
                           alias, r);
        live.push_back(r);
        bind(r, r);
        storages += alias < 0;
      }
    }
    if (o.copies && pick(0, 6) == 0) {
      std::string n = fresh();
      std::string src = live[pick(0, static_cast<int>(live.size()) - 1)];
      out += fmt::format("{{\"DST\":\"{}\",\"INSTRUCTION\":\"COPY\",\"SRC\":\"{}\"}}\n", n, src);
      live.push_back(n);
      tensor_of[n] = tensor_of[src];
    }
    if (o.copies && live.size() >= 2 && pick(0, 12) == 0) {
      size_t d = pick(0, static_cast<int>(live.size()) - 1),
             s = pick(0, static_cast<int>(live.size()) - 1);
      if (d != s) {
        out += fmt::format("{{\"DST\":\"{}\",\"INSTRUCTION\":\"COPY_FROM\",\"SRC\":\"{}\"}}\n",
                           live[d], live[s]);
        tensor_of[live[d]] = tensor_of[live[s]];
      }
    }
    // Release a few names (each name holds one reference; never release twice).
    while (live.size() > 3 && pick(0, 3) != 0) {
      size_t k = pick(0, static_cast<int>(live.size()) - 1);
      out += fmt::format("{{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"{}\"}}\n", live[k]);
      live.erase(live.begin() + k);
    }
  }
  return out;
}

Trace RandomTrace(uint64_t seed, const RandomTraceOptions& options) {
  return ParseTraceString(RandomTraceText(seed, options), fmt::format("random-{}.log", seed));
}

Trace RandomTinyTrace(uint64_t seed, int storages) {
  RandomTraceOptions o;
  o.storages = storages;
  o.constants = static_cast<int>(seed % 3);
  return RandomTrace(seed, o);
}

std::string LockChainText(uint64_t seed, const LockChainOptions& o) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int n = pick(3, 9);
  int a = pick(1, 6), h = pick(1, 6), g = pick(1, 3);
  if (o.steps > 0) {
    n = o.steps;
    a = o.a;
    h = o.h;
    g = o.g;
  }
  std::string t = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
                  "\n"
                  R"({"INSTRUCTION":"CONSTANT","NAME":"w"})"
                  "\n"
                  R"({"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"w"})"
                  "\n";
  auto call = [&](const std::string& op, std::vector<std::string> args, const std::string& out,
                  int size) {
    if (args.size() == 2 && pick(0, 1) && o.swaps) std::swap(args[0], args[1]);
    nlohmann::json j = {
        {"INSTRUCTION", "CALL"}, {"NAME", op}, {"ARGS", args}, {"RESULT", {out}}, {"TIME", "1"}};
    t += j.dump() + "\n";
    t += nlohmann::json{{"INSTRUCTION", "MEMORY"}, {"NAME", out}, {"MEMORY", std::to_string(size)}}
             .dump() +
         "\n";
    t += nlohmann::json{{"INSTRUCTION", "ALIAS"}, {"NAME", out}, {"ALIAS", "-1"}}.dump() + "\n";
  };
  auto release = [&](const std::string& name) {
    t += nlohmann::json{{"INSTRUCTION", "RELEASE"}, {"NAME", name}}.dump() + "\n";
  };
  auto name = [](const char* base, int i) { return base + std::to_string(i); };
  call("init", {"w"}, "h0", h);
  for (int i = 1; i <= n; ++i) {
    call(name("mk", i), {"w"}, name("a", i), a);
    call(name("f", i), {name("a", i), name("h", i - 1)}, name("h", i), h);
    release(name("a", i));
  }
  call("loss", {name("h", n)}, name("g", n), g);
  for (int i = n; i >= 1; --i) {
    call(name("b", i), {name("h", i), name("g", i)}, name("g", i - 1), g);
    release(name("g", i));
    release(name("h", i));
  }
  release("h0");
  release("g0");
  return t;
}

}  // namespace dtr::testing
