// Reading: the whole document is parsed with nlohmann::json, then nodes,
// edges and the order are checked in that sequence, so the first problem in
// the file's structure is the one reported. Nodes are kept in file order and
// named by their position there ("index") everywhere after reading; ids only
// appear in messages.
#include "traces/node_link.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/echo.h"
#include "model/error.h"
#include "model/trace.h"
#include "traces/trace_writer.h"

namespace dtr {

namespace {

using nlohmann::json;

constexpr const char* kAcceptedKeys =
    "\"cost_cpu\" and \"cost_ram\" (Checkmate) or \"duration\" and \"out_cost\" (Moccasin)";

// The keys a graph's nodes carry their numbers under.
struct NodeKeys {
  std::string dialect;  // "Checkmate" or "Moccasin", for messages
  std::string compute;
  std::string size;
};

// A compute cost as read: whole numbers stay exact.
struct Cost {
  bool whole = true;
  int64_t integer = 0;
  double value = 0;
};

struct Node {
  std::string id;     // as shown in messages: 5 or "conv1"
  std::string label;  // the CALL's operator name
  int64_t size = 0;
  Cost cost;
  bool backward = false;
  std::vector<int> preds;  // indices, in edge order, each once
  std::vector<int> succs;
};

class GraphReader {
 public:
  explicit GraphReader(const std::string& source) : source_(source) {}

  std::string Convert(std::string_view text) {
    json doc = Parse(text);
    const json* graph = doc.contains("graph") && doc["graph"].is_object() ? &doc["graph"] : nullptr;
    ReadNodes(doc, graph);
    ReadEdges(doc);
    std::vector<int> order = TopologicalOrder();
    if (graph && graph->contains("order")) order = GivenOrder((*graph)["order"]);
    return Write(order);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(fmt::format("{}: {}", source_, what));
  }

  json Parse(std::string_view text) const {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      Fail(fmt::format("not JSON (a syntax error at byte {})", e.byte));
    }
    if (!doc.is_object())
      Fail("not a node-link graph: expected a JSON object with \"nodes\" and \"links\"");
    return doc;
  }

  // The id of a node or an edge's end as a lookup key and as shown.
  static std::optional<std::pair<std::string, std::string>> IdOf(const json& v) {
    if (v.is_number_integer()) {
      std::string text = v.dump();
      return std::make_pair("n" + text, text);
    }
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      return std::make_pair("s" + s, "\"" + Echo(s) + "\"");
    }
    return std::nullopt;
  }

  NodeKeys ChooseKeys(const json& first, const json* graph) const {
    if (graph && graph->contains("node_duration_tag") && graph->contains("node_output_cost_tag") &&
        (*graph)["node_duration_tag"].is_string() && (*graph)["node_output_cost_tag"].is_string())
      return {"Moccasin", (*graph)["node_duration_tag"].get<std::string>(),
              (*graph)["node_output_cost_tag"].get<std::string>()};
    if (first.contains("cost_cpu") || first.contains("cost_ram"))
      return {"Checkmate", "cost_cpu", "cost_ram"};
    if (first.contains("duration") || first.contains("out_cost"))
      return {"Moccasin", "duration", "out_cost"};
    return {};
  }

  // The operator name: the node's "name" if it is text, else its id if that
  // is text, else "node" and its id; only [A-Za-z0-9_.:-] kept (others
  // become '_'), at most 64 bytes.
  static std::string Label(const json& entry, const std::string& key) {
    std::string name = entry.contains("name") && entry["name"].is_string()
                           ? entry["name"].get<std::string>()
                           : key[0] == 's' ? key.substr(1) : "node" + key.substr(1);
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ':' &&
          c != '-')
        c = '_';
    if (name.size() > 64) name.resize(64);
    return name.empty() ? "node" : name;
  }

  const json& Number(const json& entry, const Node& node, const NodeKeys& keys,
                     const std::string& key) const {
    if (!entry.contains(key))
      Fail(fmt::format("node {} has no \"{}\" (read as a {} graph: \"{}\" and \"{}\")", node.id,
                       key, keys.dialect, keys.compute, keys.size));
    const json& v = entry[key];
    if (!v.is_number())
      Fail(fmt::format("node {}: \"{}\" must be a number, got {}", node.id, key, Echo(v.dump())));
    if (v.is_number_float() && !std::isfinite(v.get<double>()))
      Fail(fmt::format("node {}: \"{}\" must be finite", node.id, key));
    if ((v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0) ||
        (v.is_number_float() && v.get<double>() < 0))
      Fail(fmt::format("node {}: \"{}\" is negative ({})", node.id, key, v.dump()));
    return v;
  }

  // A number of at most kMaxTraceSum as an integer, if it is a whole one.
  static std::optional<int64_t> Whole(const json& v) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(kMaxTraceSum)) return std::nullopt;
      return static_cast<int64_t>(u);
    }
    if (v.is_number_integer()) {
      int64_t i = v.get<int64_t>();
      return i <= kMaxTraceSum ? std::optional<int64_t>(i) : std::nullopt;
    }
    double d = v.get<double>();
    if (d != std::floor(d) || d > static_cast<double>(kMaxTraceSum)) return std::nullopt;
    return static_cast<int64_t>(d);
  }

  void ReadNodes(const json& doc, const json* graph) {
    if (!doc.contains("nodes") || !doc["nodes"].is_array() || doc["nodes"].empty())
      Fail("no nodes (\"nodes\" is missing, empty or not a list)");
    const json& entries = doc["nodes"];
    for (size_t i = 0; i < entries.size(); ++i)
      if (!entries[i].is_object()) Fail(fmt::format("nodes[{}] is not an object", i));
    NodeKeys keys = ChooseKeys(entries[0], graph);
    for (size_t i = 0; i < entries.size(); ++i) {
      const json& entry = entries[i];
      Node node;
      std::string key;
      if (entry.contains("id")) {
        auto id = IdOf(entry["id"]);
        if (!id) Fail(fmt::format("nodes[{}]: \"id\" must be an integer or a string", i));
        std::tie(key, node.id) = *id;
      } else {
        node.id = std::to_string(i);
        key = "n" + node.id;
      }
      if (!index_.emplace(key, static_cast<int>(i)).second)
        Fail(fmt::format("node {} appears twice in \"nodes\"", node.id));
      if (keys.dialect.empty())
        Fail(fmt::format("node {} has no compute cost and output bytes: expected {}", node.id,
                         kAcceptedKeys));
      node.label = Label(entry, key);
      const json& cost = Number(entry, node, keys, keys.compute);
      const json& size = Number(entry, node, keys, keys.size);
      std::optional<int64_t> bytes = Whole(size);
      if (!bytes) {
        if (size.is_number_float() && size.get<double>() != std::floor(size.get<double>()))
          Fail(fmt::format("node {}: \"{}\" must be a whole number of bytes, got {}", node.id,
                           keys.size, size.dump()));
        Fail(fmt::format("node {}: \"{}\" is {}, more than a trace may hold (2^62 bytes)", node.id,
                         keys.size, size.dump()));
      }
      node.size = *bytes;
      if (std::optional<int64_t> whole = Whole(cost)) {
        node.cost.integer = *whole;
      } else {
        node.cost.whole = false;
        node.cost.value = cost.get<double>();
      }
      node.backward = entry.contains("backward") && entry["backward"].is_boolean() &&
                      entry["backward"].get<bool>();
      nodes_.push_back(std::move(node));
    }
  }

  int EndOf(const json& link, size_t k, const char* key) const {
    auto id = IdOf(link[key]);
    if (!id) Fail(fmt::format("links[{}]: \"{}\" must be a node id (an integer or a string)", k, key));
    auto it = index_.find(id->first);
    if (it == index_.end())
      Fail(fmt::format("links[{}]: \"{}\" {} is not a node", k, key, id->second));
    return it->second;
  }

  void ReadEdges(const json& doc) {
    const char* list = doc.contains("links") ? "links" : "edges";
    if (!doc.contains(list) || !doc[list].is_array())
      Fail("no edge list (\"links\" or \"edges\" is missing or not a list)");
    const json& links = doc[list];
    for (size_t k = 0; k < links.size(); ++k) {
      const json& link = links[k];
      const char* from = "source";
      const char* to = "target";
      if (link.is_object() && !link.contains("source") && link.contains("0")) from = "0", to = "1";
      if (!link.is_object() || !link.contains(from) || !link.contains(to))
        Fail(fmt::format("{}[{}] has no \"source\" and \"target\" (nor \"0\" and \"1\")", list, k));
      int u = EndOf(link, k, from), v = EndOf(link, k, to);
      uint64_t edge = static_cast<uint64_t>(u) << 32 | static_cast<uint32_t>(v);
      if (!edges_.insert(edge).second) continue;  // a repeated edge counts once, as in nx.DiGraph
      nodes_[v].preds.push_back(u);
      nodes_[u].succs.push_back(v);
    }
  }

  // Kahn's algorithm, taking the ready node listed first in "nodes".
  std::vector<int> TopologicalOrder() const {
    const int n = static_cast<int>(nodes_.size());
    std::vector<int> waiting(n), order;
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int v = 0; v < n; ++v)
      if ((waiting[v] = static_cast<int>(nodes_[v].preds.size())) == 0) ready.push(v);
    while (!ready.empty()) {
      int v = ready.top();
      ready.pop();
      order.push_back(v);
      for (int s : nodes_[v].succs)
        if (--waiting[s] == 0) ready.push(s);
    }
    if (static_cast<int>(order.size()) < n) {
      // Walk back through unfinished predecessors until a node repeats: it
      // lies on a cycle.
      int v = 0;
      while (waiting[v] == 0) ++v;
      std::vector<bool> seen(n);
      while (!seen[v]) {
        seen[v] = true;
        for (int p : nodes_[v].preds)
          if (waiting[p] > 0) {
            v = p;
            break;
          }
      }
      Fail(fmt::format("the graph has a cycle through node {}", nodes_[v].id));
    }
    return order;
  }

  std::vector<int> GivenOrder(const json& given) const {
    const std::string what = "the graph's \"order\"";
    if (!given.is_array()) Fail(what + " is not a list");
    std::vector<int> order, position(nodes_.size(), -1);
    for (const json& v : given) {
      auto id = IdOf(v);
      auto it = id ? index_.find(id->first) : index_.end();
      if (it == index_.end()) Fail(fmt::format("{} names {}, not a node", what, Echo(v.dump())));
      if (position[it->second] >= 0)
        Fail(fmt::format("{} lists node {} twice", what, nodes_[it->second].id));
      position[it->second] = static_cast<int>(order.size());
      order.push_back(it->second);
    }
    if (order.size() != nodes_.size())
      Fail(fmt::format("{} lists {} of the {} nodes", what, order.size(), nodes_.size()));
    for (int v : order)
      for (int p : nodes_[v].preds)
        if (position[p] > position[v])
          Fail(fmt::format("{} is not a topological order: node {} comes before its predecessor {}",
                           what, nodes_[v].id, nodes_[p].id));
    return order;
  }

  // The TIME of every node, scaled if some cost is not whole.
  std::vector<int64_t> Times() const {
    bool all_whole = std::all_of(nodes_.begin(), nodes_.end(),
                                 [](const Node& n) { return n.cost.whole; });
    std::vector<int64_t> times;
    for (const Node& n : nodes_) {
      if (all_whole) {
        times.push_back(n.cost.integer);
        continue;
      }
      double scaled = (n.cost.whole ? static_cast<double>(n.cost.integer) : n.cost.value) *
                      static_cast<double>(kFloatTimeScale);
      if (scaled > static_cast<double>(kMaxTraceSum))
        Fail(fmt::format("node {}: its compute times {} is more than a trace may hold (2^62)", n.id,
                         kFloatTimeScale));
      times.push_back(std::llround(scaled));
    }
    return times;
  }

  std::string Write(const std::vector<int>& order) const {
    std::vector<int64_t> times = Times();
    int64_t size_sum = 0, time_sum = 0;
    for (size_t v = 0; v < nodes_.size(); ++v) {
      if (nodes_[v].size > kMaxTraceSum - size_sum)
        Fail("the output bytes sum to more than 2^62, more than a trace may hold (docs/limits.md)");
      if (times[v] > kMaxTraceSum - time_sum)
        Fail("the compute costs sum to more than 2^62, more than a trace may hold (docs/limits.md)");
      size_sum += nodes_[v].size;
      time_sum += times[v];
    }
    // The last consumer of each output, by position in the order.
    std::vector<int> position(nodes_.size()), last_use(nodes_.size(), -1);
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
    for (int v : order)
      for (int p : nodes_[v].preds) last_use[p] = std::max(last_use[p], position[v]);

    TraceWriter w;
    std::vector<std::string> name(nodes_.size());
    bool backward = false;
    for (int v : order) {
      const Node& node = nodes_[v];
      if (node.backward && !backward) {
        w.Annotate("BACKWARD");
        backward = true;
      }
      std::vector<std::string> args;
      for (int p : node.preds) args.push_back(name[p]);
      name[v] = w.Call1(node.label, args, node.size, times[v]);
      for (int p : node.preds)
        if (last_use[p] == position[v]) w.Release(name[p]);
    }
    return w.Take();
  }

  std::string source_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> index_;  // "n5" or "sconv1" -> position in "nodes"
  std::unordered_set<uint64_t> edges_;          // u << 32 | v
};

// splitmix64 (Steele, Lea and Flood 2014): the same stream on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // lo..hi, both included (the slight modulo bias does not matter here).
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace

std::string NodeLinkGraphToTrace(std::string_view json_text, const std::string& source) {
  return GraphReader(source).Convert(json_text);
}

std::string LoadNodeLinkGraphAsTrace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a graph file", path));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SystemErrorMessage(path, "cannot open the graph file"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(SystemErrorMessage(path, "read error"));
  return NodeLinkGraphToTrace(text.str(), path);
}

std::string GenerateLayeredGraph(const LayeredGraphOptions& o) {
  if (o.nodes < 3) throw Error("gen layered: --nodes must be at least 3");
  SplitMix64 rng(o.seed);
  const int inner = o.nodes - 2;
  const int max_width = std::max(1, static_cast<int>(std::lround(std::sqrt(inner))));
  // Layers of inner nodes 1..nodes-2; node 0 is the source, nodes-1 the sink.
  std::vector<std::vector<int>> layers;
  for (int next = 1; next <= inner;) {
    int width = static_cast<int>(std::min<int64_t>(rng.Between(1, max_width), inner - next + 1));
    layers.emplace_back();
    for (int i = 0; i < width; ++i) layers.back().push_back(next++);
  }
  std::vector<std::pair<int, int>> edges;
  std::vector<std::vector<int>> preds(o.nodes);
  std::vector<bool> read(o.nodes);
  auto add = [&](int u, int v) {
    if (std::find(preds[v].begin(), preds[v].end(), u) != preds[v].end()) return;
    preds[v].push_back(u);
    edges.emplace_back(u, v);
    read[u] = true;
  };
  for (size_t l = 0; l < layers.size(); ++l) {
    for (int v : layers[l]) {
      if (l == 0) {
        add(0, v);
        continue;
      }
      const std::vector<int>& before = layers[l - 1];
      int64_t fan_in = rng.Between(1, std::min<int64_t>(3, before.size()));
      for (int64_t k = 0; k < fan_in; ++k)
        add(before[rng.Between(0, static_cast<int64_t>(before.size()) - 1)], v);
      if (l >= 2 && rng.Between(0, 7) == 0) {  // a skip edge from an earlier layer
        const std::vector<int>& earlier = layers[rng.Between(0, static_cast<int64_t>(l) - 2)];
        add(earlier[rng.Between(0, static_cast<int64_t>(earlier.size()) - 1)], v);
      }
    }
    if (l == 0) continue;
    for (int u : layers[l - 1])  // every node is read by the next layer
      if (!read[u]) add(u, layers[l][rng.Between(0, static_cast<int64_t>(layers[l].size()) - 1)]);
  }
  for (int u = 0; u < o.nodes - 1; ++u)
    if (!read[u]) add(u, o.nodes - 1);
  std::sort(edges.begin(), edges.end());

  const bool checkmate = o.dialect == GraphDialect::kCheckmate;
  json graph = {{"name", fmt::format("layered_n{}_seed{}", o.nodes, o.seed)}};
  if (!checkmate) {
    graph["node_duration_tag"] = "duration";
    graph["node_output_cost_tag"] = "out_cost";
  }
  json nodes = json::array(), links = json::array();
  for (int v = 0; v < o.nodes; ++v) {
    int64_t bytes = rng.Between(100, 10000), compute = rng.Between(1, 1000);
    if (checkmate)
      nodes.push_back({{"id", v},
                       {"name", fmt::format("node{}", v)},
                       {"backward", false},
                       {"cost_cpu", compute},
                       {"cost_ram", bytes}});
    else
      nodes.push_back({{"name", v}, {"duration", compute}, {"out_cost", bytes}, {"param_cost", 0}});
  }
  for (const auto& [u, v] : edges)
    links.push_back(checkmate ? json{{"source", u}, {"target", v}} : json{{"0", u}, {"1", v}});
  json doc = {{"directed", true},
              {"multigraph", false},
              {"graph", graph},
              {"nodes", nodes},
              {"links", links}};
  return doc.dump() + "\n";
}

}  // namespace dtr
