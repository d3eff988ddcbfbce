// Node-link JSON graphs (Checkmate's and Moccasin's keys) read as traces:
// the exact trace of a small graph in each dialect, every refusal's message,
// and random layered graphs replayed (traces/node_link.h).
#include "traces/node_link.h"

#include <doctest/doctest.h>

#include <string>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/memory_bound.h"
#include "model/error.h"
#include "model/trace_parser.h"

namespace dtr::testing {
namespace {

std::string Convert(const std::string& json) { return NodeLinkGraphToTrace(json, "g.json"); }

// The message of the InputError converting `json` throws ("" if none).
std::string Refusal(const std::string& json) {
  try {
    Convert(json);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("node-link graph: Checkmate keys, forward and backward") {
  // conv -> relu -> relu_backward, which also reads conv's output.
  const char* graph = R"({"directed": true, "multigraph": false, "graph": {"name": "tiny"},
    "nodes": [{"id": 0, "name": "conv", "backward": false, "cost_cpu": 5, "cost_ram": 100},
              {"id": 1, "name": "relu", "backward": false, "cost_cpu": 1, "cost_ram": 100},
              {"id": 2, "name": "relu_backward", "backward": true, "cost_cpu": 2, "cost_ram": 60}],
    "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}, {"source": 0, "target": 2}]})";
  CHECK(Convert(graph) == R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"conv","RESULT":["x0"],"TIME":"5"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x0"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x0"}
{"ARGS":["x0"],"INSTRUCTION":"CALL","NAME":"relu","RESULT":["x1"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x1"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x1"}
{"ANNOTATION":"BACKWARD","INSTRUCTION":"ANNOTATE"}
{"ARGS":["x1","x0"],"INSTRUCTION":"CALL","NAME":"relu_backward","RESULT":["x2"],"TIME":"2"}
{"INSTRUCTION":"MEMORY","MEMORY":"60","NAME":"x2"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x2"}
{"INSTRUCTION":"RELEASE","NAME":"x1"}
{"INSTRUCTION":"RELEASE","NAME":"x0"}
)");
  // The sink's output stays referenced: the replay pins it; all three are
  // live at relu_backward.
  Trace t = ParseTraceString(Convert(graph), "g.log");
  CHECK(ComputeBaseline(t).memory == 260);
  CHECK(ComputeBaseline(t).compute == 8);
}

TEST_CASE("node-link graph: Moccasin keys, links \"0\"/\"1\" and the graph's order") {
  // Nodes without "id" are numbered by position, as networkx reads them; the
  // graph's "order" puts 3 before 2, which the order by position would not.
  const char* graph = R"({"directed": true, "multigraph": false,
    "graph": {"name": "diamond", "node_output_cost_tag": "out_cost", "node_duration_tag": "duration",
              "order": [0, 3, 2, 1]},
    "nodes": [{"out_cost": 10, "param_cost": 0, "duration": 0, "name": 0},
              {"out_cost": 40, "param_cost": 0, "duration": 0, "name": 1},
              {"out_cost": 20, "param_cost": 0, "duration": 7, "name": 2},
              {"out_cost": 30, "param_cost": 0, "duration": 9, "name": 3}],
    "links": [{"0": 0, "1": 2}, {"0": 0, "1": 3}, {"0": 2, "1": 1}, {"0": 3, "1": 1},
              {"0": 0, "1": 2}]})";
  CHECK(Convert(graph) == R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"node0","RESULT":["x0"],"TIME":"0"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"x0"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x0"}
{"ARGS":["x0"],"INSTRUCTION":"CALL","NAME":"node3","RESULT":["x1"],"TIME":"9"}
{"INSTRUCTION":"MEMORY","MEMORY":"30","NAME":"x1"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x1"}
{"ARGS":["x0"],"INSTRUCTION":"CALL","NAME":"node2","RESULT":["x2"],"TIME":"7"}
{"INSTRUCTION":"MEMORY","MEMORY":"20","NAME":"x2"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x2"}
{"INSTRUCTION":"RELEASE","NAME":"x0"}
{"ARGS":["x2","x1"],"INSTRUCTION":"CALL","NAME":"node1","RESULT":["x3"],"TIME":"0"}
{"INSTRUCTION":"MEMORY","MEMORY":"40","NAME":"x3"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x3"}
{"INSTRUCTION":"RELEASE","NAME":"x2"}
{"INSTRUCTION":"RELEASE","NAME":"x1"}
)");
  // Without the order: node 2 before node 3, and the keys found on the nodes.
  const char* unordered = R"({"nodes": [{"out_cost": 10, "duration": 0}, {"out_cost": 40, "duration": 0},
      {"out_cost": 20, "duration": 7}, {"out_cost": 30, "duration": 9}],
    "edges": [{"source": 0, "target": 3}, {"source": 0, "target": 2}, {"source": 3, "target": 1},
              {"source": 2, "target": 1}]})";
  std::string trace = Convert(unordered);
  CHECK(trace.find(R"("NAME":"node2","RESULT":["x1"])") != std::string::npos);
  CHECK(trace.find(R"({"ARGS":["x2","x1"],"INSTRUCTION":"CALL","NAME":"node1")") !=
        std::string::npos);
}

TEST_CASE("node-link graph: string ids, and costs that are not whole numbers are scaled") {
  const char* graph = R"({"nodes": [{"id": "in", "cost_cpu": 0.5, "cost_ram": 8.0},
      {"id": "out", "name": "out \"quoted\"/x", "cost_cpu": 2, "cost_ram": 4}],
    "links": [{"source": "in", "target": "out"}]})";
  std::string trace = Convert(graph);
  CHECK(trace.find(R"("NAME":"in","RESULT":["x0"],"TIME":"500000"})") != std::string::npos);
  CHECK(trace.find(R"("NAME":"out__quoted__x","RESULT":["x1"],"TIME":"2000000"})") !=
        std::string::npos);
  CHECK(trace.find(R"("MEMORY":"8","NAME":"x0")") != std::string::npos);
  ParseTraceString(trace, "g.log");  // a name from the file cannot break a line
}

TEST_CASE("node-link graph: refusals name the file and the problem") {
  CHECK(Refusal("{oops") == "g.json: not JSON (a syntax error at byte 2)");
  CHECK(Refusal("[1, 2]") ==
        R"(g.json: not a node-link graph: expected a JSON object with "nodes" and "links")");
  CHECK(Refusal(R"({"nodes": [], "links": []})") ==
        R"(g.json: no nodes ("nodes" is missing, empty or not a list))");
  CHECK(Refusal(R"({"nodes": [{"id": 0, "cpu": 1, "ram": 2}], "links": []})") ==
        R"(g.json: node 0 has no compute cost and output bytes: expected "cost_cpu" and "cost_ram" (Checkmate) or "duration" and "out_cost" (Moccasin))");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 2}, {"cost_cpu": 1}], "links": []})") ==
        R"(g.json: node 1 has no "cost_ram" (read as a Checkmate graph: "cost_cpu" and "cost_ram"))");
  CHECK(Refusal(R"({"nodes": [{"duration": -3, "out_cost": 2}], "links": []})") ==
        R"(g.json: node 0: "duration" is negative (-3))");
  CHECK(Refusal(R"({"nodes": [{"duration": 1, "out_cost": "2"}], "links": []})") ==
        R"(g.json: node 0: "out_cost" must be a number, got "2")");
  CHECK(Refusal(R"({"nodes": [{"duration": 1, "out_cost": 2.5}], "links": []})") ==
        R"(g.json: node 0: "out_cost" must be a whole number of bytes, got 2.5)");
  CHECK(Refusal(R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 2}, {"id": 0, "cost_cpu": 1, "cost_ram": 2}], "links": []})") ==
        "g.json: node 0 appears twice in \"nodes\"");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 2}]})") ==
        R"(g.json: no edge list ("links" or "edges" is missing or not a list))");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 2}], "links": [{"source": 0, "target": 7}]})") ==
        R"(g.json: links[0]: "target" 7 is not a node)");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 2}], "links": [{"from": 0, "to": 0}]})") ==
        R"(g.json: links[0] has no "source" and "target" (nor "0" and "1"))");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 2}, {"cost_cpu": 1, "cost_ram": 2},
      {"cost_cpu": 1, "cost_ram": 2}], "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2},
      {"source": 2, "target": 1}]})") == "g.json: the graph has a cycle through node 1");
  CHECK(Refusal(R"({"graph": {"order": [1, 0]}, "nodes": [{"cost_cpu": 1, "cost_ram": 2},
      {"cost_cpu": 1, "cost_ram": 2}], "links": [{"source": 0, "target": 1}]})") ==
        R"(g.json: the graph's "order" is not a topological order: node 1 comes before its predecessor 0)");
  CHECK(Refusal(R"({"graph": {"order": [0]}, "nodes": [{"cost_cpu": 1, "cost_ram": 2},
      {"cost_cpu": 1, "cost_ram": 2}], "links": []})") ==
        R"(g.json: the graph's "order" lists 1 of the 2 nodes)");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 4611686018427387904},
      {"cost_cpu": 1, "cost_ram": 1}], "links": []})") ==
        "g.json: the output bytes sum to more than 2^62, more than a trace may hold (docs/limits.md)");
  CHECK(Refusal(R"({"nodes": [{"cost_cpu": 1, "cost_ram": 4611686018427387905}], "links": []})") ==
        R"(g.json: node 0: "cost_ram" is 4611686018427387905, more than a trace may hold (2^62 bytes))");
  CHECK_THROWS_WITH_AS(LoadNodeLinkGraphAsTrace("/nonexistent/g.json"),
                       doctest::Contains("/nonexistent/g.json: cannot open the graph file"),
                       InputError);
}

TEST_CASE("node-link graph: a chain's baseline is its two largest neighbours") {
  // in -> a -> b -> c: the replay peaks where an operator's argument and
  // result are both live; the sink c stays pinned.
  const char* graph = R"({"nodes": [{"cost_cpu": 1, "cost_ram": 5}, {"cost_cpu": 2, "cost_ram": 30},
      {"cost_cpu": 3, "cost_ram": 20}, {"cost_cpu": 4, "cost_ram": 6}],
    "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}, {"source": 2, "target": 3}]})";
  Trace t = ParseTraceString(Convert(graph), "chain.log");
  Baseline b = ComputeBaseline(t);
  CHECK(b.memory == 50);  // a (30) + b (20)
  CHECK(b.compute == 10);
  CHECK(ComputeMemoryBound(t).bytes == 50);  // b needs a locked: nothing helps
  CHECK(SmallestFeasibleBudget(t) == 50);
}

TEST_CASE("node-link graph: random layered graphs, both dialects, replayed") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed ", seed);
    LayeredGraphOptions o;
    o.nodes = 3 + static_cast<int>(seed % 5);  // tiny: the exhaustive search is the ground truth
    o.seed = seed;
    o.dialect = GraphDialect::kCheckmate;
    std::string checkmate = Convert(GenerateLayeredGraph(o));
    o.dialect = GraphDialect::kMoccasin;
    std::string moccasin = Convert(GenerateLayeredGraph(o));
    CHECK(checkmate == moccasin);  // the same graph under either dialect's keys
    Trace t = ParseTraceString(moccasin, "layered.log");
    Baseline base = ComputeBaseline(t);
    int64_t bound = ComputeMemoryBound(t).bytes;
    int64_t least = SmallestFeasibleBudget(t);
    CHECK(bound <= least);
    CHECK(least <= base.memory);
    ReplayConfig config;
    config.heuristic = &FindHeuristic("DTR");
    config.budget = base.memory;
    CHECK(Replay(t, config).outcome == Outcome::kPass);
  }
  // Deterministic, and larger graphs convert and parse.
  LayeredGraphOptions big;
  big.nodes = 500;
  CHECK(GenerateLayeredGraph(big) == GenerateLayeredGraph(big));
  Trace t = ParseTraceString(Convert(GenerateLayeredGraph(big)), "layered500.log");
  CHECK(ComputeBaseline(t).memory > 0);
}

}  // namespace
}  // namespace dtr::testing
