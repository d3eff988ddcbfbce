// Computation graphs in the node-link JSON that networkx writes
// (`json.dumps(nx.node_link_data(G))`), as the Checkmate and Moccasin authors
// publish them, turned into traces (docs/commands/gen.md, "gen graph").
//
// A graph is a DAG whose nodes are operators, each with a compute cost and the
// bytes of its one output; an edge u -> v says v reads u's output. Two
// dialects name a node's numbers:
//   Checkmate: "cost_cpu" (compute) and "cost_ram" (output bytes), with
//              "backward": true on the nodes of the backward pass;
//   Moccasin:  "duration" (compute) and "out_cost" (output bytes), or the keys
//              the graph's "node_duration_tag" and "node_output_cost_tag" name.
// Edges are the list "links" (or "edges", newer networkx), each with
// "source" and "target" (or "0" and "1", as Moccasin's random layered graphs
// write them). A node's id is its "id", else its position in "nodes", as
// networkx's node_link_graph reads it.
//
// The trace: one CALL per node, in the graph's "order" if it has one (it must
// then be a topological order of every node), else in the topological order
// that always takes, of the nodes ready, the one listed first in "nodes". A
// CALL is named by the node's "name" if that is text, else by its id ("node5"
// for the integer 5), in the characters [A-Za-z0-9_.:-] only. Its arguments are the node's predecessors in the order of their edges
// (a repeated edge counts once), its one result has the node's output bytes,
// its TIME the node's compute (see kFloatTimeScale). Each output is released
// right after its last consumer; outputs without consumers (the graph's
// sinks) are never released, so the replay pins them at the end, as simrd
// pins whatever a trace leaves referenced. A BACKWARD annotation precedes the
// first node marked backward.
//
// Every problem throws InputError "SOURCE: what is wrong", naming the node or
// edge and, for a missing key, the keys accepted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dtr {

// When some compute cost in a graph is not a whole number (seconds or
// milliseconds, as profilers give them), every cost is multiplied by this and
// rounded to the nearest integer, so that costs down to a microsecond (if in
// seconds) stay distinct; a graph whose costs are all whole numbers keeps them.
inline constexpr int64_t kFloatTimeScale = 1000000;

// The trace text of the node-link graph `json`; `source` names it in errors.
std::string NodeLinkGraphToTrace(std::string_view json, const std::string& source);
// The same for the file at `path` (an InputError if it cannot be read).
std::string LoadNodeLinkGraphAsTrace(const std::string& path);

enum class GraphDialect { kCheckmate, kMoccasin };

// A random layered DAG (deterministic for a seed): a source, layers of 1 to
// about sqrt(nodes) nodes each reading 1 to 3 nodes of the layer before and,
// now and then, one of an earlier layer, and a sink reading every node that
// nothing else reads. Output bytes 100..10000, compute 1..1000, drawn from a
// splitmix64 stream. Written as node-link JSON in `dialect`; both dialects of
// one seed are the same graph and convert to the same trace.
struct LayeredGraphOptions {
  int nodes = 100;  // at least 3
  uint64_t seed = 1;
  GraphDialect dialect = GraphDialect::kMoccasin;
};
std::string GenerateLayeredGraph(const LayeredGraphOptions& options);

}  // namespace dtr
