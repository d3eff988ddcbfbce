#include "tests/tiny_traces.h"

#include <fmt/core.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "model/trace_parser.h"

namespace dtr::testing {

std::string RandomTinyTraceText(uint64_t seed, int storages) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string out = "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n";
  std::vector<std::string> live;                 // names holding a reference
  std::map<std::string, std::string> tensor_of;  // name -> the tensor it is bound to
  std::set<std::string> tensors;                 // every tensor name made so far
  int next_name = 0, made = 0;
  auto fresh = [&] { return fmt::format("x{}", next_name++); };
  int constants = uniform(0, 2);
  for (int i = 0; i < constants; ++i, ++made) {
    std::string n = fresh();
    out += fmt::format("{{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"{}\"}}\n", n);
    out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                       uniform(1, 3), n);
    live.push_back(n);
    tensor_of[n] = n;
  }
  if (live.empty()) {  // a first operator without arguments
    std::string n = fresh();
    out += fmt::format(
        "{{\"ARGS\":[],\"INSTRUCTION\":\"CALL\",\"NAME\":\"input\",\"RESULT\":[\"{}\"],\"TIME\":\"{"
        "}\"}}\n",
        n, uniform(1, 9));
    out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                       uniform(1, 8), n);
    out += fmt::format("{{\"ALIAS\":\"-1\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"{}\"}}\n", n);
    live.push_back(n);
    tensor_of[n] = n;
    ++made;
  }
  while (made < storages) {
    int nargs = std::min<int>(uniform(1, 3), static_cast<int>(live.size()));
    std::vector<std::string> args;
    for (int i = 0; i < nargs; ++i)
      args.push_back(live[uniform(0, static_cast<int>(live.size()) - 1)]);
    std::string arg_list;
    for (const std::string& a : args) arg_list += (arg_list.empty() ? "\"" : ",\"") + a + "\"";
    // MUTATE names its new tensor after the old one plus '$'; skip it when that
    // name exists (a COPY still bound to an already mutated tensor).
    if (uniform(0, 9) == 0 && live.size() > 1 && !tensors.count(tensor_of[args[0]] + "$")) {
      // MUTATE the first argument: a new storage of its size replaces it.
      std::string made_name = tensor_of[args[0]] + "$";
      tensors.insert(made_name);
      tensor_of[args[0]] = made_name;
      out += fmt::format(
          "{{\"ARGS\":[{}],\"INSTRUCTION\":\"MUTATE\",\"MUTATE\":[0],\"NAME\":\"mut\",\"TIME\":\"{}"
          "\"}}\n",
          arg_list, uniform(1, 9));
      ++made;
    } else {
      int nres = uniform(1, 4) == 1 ? 2 : 1;
      std::vector<std::string> results;
      for (int i = 0; i < nres; ++i) results.push_back(fresh());
      std::string res_list;
      for (const std::string& r : results) res_list += (res_list.empty() ? "\"" : ",\"") + r + "\"";
      out += fmt::format(
          "{{\"ARGS\":[{}],\"INSTRUCTION\":\"CALL\",\"NAME\":\"op\",\"RESULT\":[{}],\"TIME\":\"{}"
          "\"}}\n",
          arg_list, res_list, uniform(1, 9));
      for (const std::string& r : results) {
        bool alias = uniform(0, 7) == 0;
        out += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                           uniform(1, 8), r);
        out += fmt::format("{{\"ALIAS\":\"{}\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"{}\"}}\n",
                           alias ? 0 : -1, r);
        made += !alias;
        live.push_back(r);
        tensor_of[r] = r;
      }
    }
    if (uniform(0, 5) == 0) {
      std::string n = fresh();
      std::string src = live[uniform(0, static_cast<int>(live.size()) - 1)];
      out += fmt::format("{{\"DST\":\"{}\",\"INSTRUCTION\":\"COPY\",\"SRC\":\"{}\"}}\n", n, src);
      live.push_back(n);
      tensor_of[n] = tensor_of[src];
    }
    // Release some names, keeping the newest.
    for (size_t i = 0; i + 1 < live.size();) {
      if (uniform(0, 2) == 0) {
        out += fmt::format("{{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"{}\"}}\n", live[i]);
        live.erase(live.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
  return out;
}

Trace RandomTinyTrace(uint64_t seed, int storages) {
  return ParseTraceString(RandomTinyTraceText(seed, storages), fmt::format("tiny-{}", seed));
}

}  // namespace dtr::testing
