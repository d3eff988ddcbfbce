#include "diagnose/memory_stack.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "model/error.h"

namespace dtr {

namespace {

// The column of a program step: `columns` ranges of equal width.
int32_t ColumnOf(int32_t step, int32_t steps, int32_t columns) {
  return static_cast<int32_t>(static_cast<int64_t>(step) * columns / steps);
}

// First pass: in each column, the first computation with the most memory in use.
class ColumnPeaks : public ReplayObserver {
 public:
  ColumnPeaks(int32_t steps, int32_t columns) : best(columns), steps_(steps), columns_(columns) {}
  bool WantsScores() const override { return false; }
  Flow OnComputation(const Computation& c) override {
    Best& b = best[ColumnOf(c.program_step, steps_, columns_)];
    if (b.event < 0 || c.memory_usage > b.memory) b = {c.event, c.program_step, c.memory_usage};
    return Flow::kContinue;
  }

  struct Best {
    int64_t event = -1;
    int32_t program_step = 0;
    int64_t memory = 0;
  };
  std::vector<Best> best;  // by column; event -1: no computation in it

 private:
  int32_t steps_, columns_;
};

// Second pass: the resident storages at the chosen computations, read off
// the engine. At OnComputation the operator's outputs are counted in the
// engine's memory but not yet material: they are added here by tensor size.
class ResidentAtEvents : public ReplayObserver {
 public:
  ResidentAtEvents(const Trace& trace, const Engine& engine, std::vector<int64_t> events)
      : trace_(trace), engine_(engine), events_(std::move(events)) {}
  bool WantsScores() const override { return false; }
  Flow OnComputation(const Computation& c) override {
    if (next_ >= events_.size() || c.event != events_[next_]) return Flow::kContinue;
    ++next_;
    std::vector<std::pair<StorageId, int64_t>> held;
    const uint8_t* material = engine_.material_flags();
    const auto n = static_cast<StorageId>(trace_.storages.size());
    for (StorageId s = 0; s < n; ++s)
      if (material[s] && trace_.storages[s].size > 0) held.push_back({s, trace_.storages[s].size});
    const Operator& op = trace_.op_of(c.tensor);
    for (int32_t i = 0; i < op.num_outputs; ++i) {
      const Tensor& u = trace_.tensors[op.first_output + i];
      if (u.size > 0) held.push_back({u.storage, u.size});
    }
    snapshots.push_back(std::move(held));
    return Flow::kContinue;
  }

  // One per event asked for, in order: (storage, bytes), a storage possibly twice.
  std::vector<std::vector<std::pair<StorageId, int64_t>>> snapshots;

 private:
  const Trace& trace_;
  const Engine& engine_;
  std::vector<int64_t> events_;
  size_t next_ = 0;
};

// Stacks the snapshots by `group` (a dense group per storage, -1 for none),
// keeping the `keep` groups of most byte-steps as bands in the order
// `before` gives and summing the rest into "other".
template <typename GroupOf, typename BandOf, typename Before>
StackedMemory Stack(const std::vector<StackColumn>& frame,
                    const std::vector<std::vector<std::pair<StorageId, int64_t>>>& snapshots,
                    int32_t groups, GroupOf group_of, BandOf band_of, Before before, size_t keep) {
  std::vector<int64_t> byte_steps(groups, 0), peak(groups, 0), column_bytes(groups, 0);
  for (size_t c = 0; c < frame.size(); ++c) {
    const int64_t width = frame[c].last_step - frame[c].first_step + 1;
    std::vector<int32_t> touched;
    for (const auto& [s, bytes] : snapshots[c]) {
      const int32_t g = group_of(s);
      if (g < 0) continue;
      if (column_bytes[g] == 0) touched.push_back(g);
      column_bytes[g] += bytes;
    }
    for (int32_t g : touched) {
      byte_steps[g] += column_bytes[g] * width;
      peak[g] = std::max(peak[g], column_bytes[g]);
      column_bytes[g] = 0;
    }
  }
  std::vector<int32_t> order;
  for (int32_t g = 0; g < groups; ++g)
    if (byte_steps[g] > 0) order.push_back(g);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return byte_steps[a] > byte_steps[b]; });
  // keep - 1 groups at most, and "other" (empty when every group has a band).
  if (order.size() >= keep) order.resize(keep - 1);
  std::stable_sort(order.begin(), order.end(), before);
  std::vector<int32_t> band_of_group(groups, -1);
  StackedMemory out;
  for (int32_t g : order) {
    band_of_group[g] = static_cast<int32_t>(out.bands.size());
    StackBand b = band_of(g);
    b.peak_bytes = peak[g];
    b.byte_steps = byte_steps[g];
    out.bands.push_back(std::move(b));
  }
  const size_t other = out.bands.size();
  out.bands.push_back(StackBand{});
  for (size_t c = 0; c < frame.size(); ++c) {
    StackColumn col = frame[c];
    col.bytes.assign(out.bands.size(), 0);
    for (const auto& [s, bytes] : snapshots[c]) {
      const int32_t g = group_of(s);
      col.bytes[g >= 0 && band_of_group[g] >= 0 ? band_of_group[g] : other] += bytes;
    }
    out.columns.push_back(std::move(col));
  }
  StackBand& o = out.bands[other];
  for (const StackColumn& col : out.columns) {
    const int64_t width = col.last_step - col.first_step + 1;
    o.byte_steps += col.bytes[other] * width;
    o.peak_bytes = std::max(o.peak_bytes, col.bytes[other]);
  }
  return out;
}

bool IsConstant(const Trace& trace, StorageId s) {
  return trace.op_of(trace.storages[s].root).is_constant;
}

}  // namespace

std::string ModulePrefix(const std::string& module, int depth) {
  size_t dot = 0;
  for (int d = 0; d < depth; ++d) {
    dot = module.find('.', d == 0 ? 0 : dot + 1);
    if (dot == std::string::npos) return module;
  }
  return module.substr(0, dot);
}

int ModuleGroupDepth(const std::vector<std::string>& modules, size_t max_groups) {
  size_t deepest = 0;
  for (const std::string& m : modules)
    deepest = std::max<size_t>(deepest, std::count(m.begin(), m.end(), '.') + 1);
  int chosen = 0;
  for (int depth = 1; depth <= static_cast<int>(deepest); ++depth) {
    std::set<std::string> prefixes;
    for (const std::string& m : modules)
      if (!m.empty()) prefixes.insert(ModulePrefix(m, depth));
    if (chosen == 0 && prefixes.size() >= 2) chosen = depth;
    else if (chosen > 0 && prefixes.size() <= max_groups) chosen = depth;
    else if (chosen > 0) break;
  }
  return std::max(chosen, 1);
}

MemoryStack RecordMemoryStack(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              int max_columns, int max_bands) {
  MemoryStack out;
  out.program_steps = static_cast<int32_t>(trace.program.size());
  const int32_t steps = std::max<int32_t>(1, out.program_steps);
  const int32_t columns = std::clamp<int32_t>(max_columns, 1, steps);
  const size_t keep = static_cast<size_t>(std::max(2, max_bands));
  ReplayConfig config = ConfigFor(spec, baseline);

  ColumnPeaks peaks(steps, columns);
  config.observer = &peaks;
  const RunResult first = Replay(trace, config);
  out.budget = first.budget;
  out.outcome = first.outcome;

  std::vector<StackColumn> frame;
  std::vector<int64_t> events;
  for (int32_t c = 0; c < columns; ++c) {
    const ColumnPeaks::Best& b = peaks.best[c];
    if (b.event < 0) continue;
    StackColumn col;
    // The steps whose column is c.
    col.first_step = static_cast<int32_t>((static_cast<int64_t>(c) * steps + columns - 1) / columns);
    col.last_step =
        static_cast<int32_t>((static_cast<int64_t>(c + 1) * steps + columns - 1) / columns) - 1;
    col.event = b.event;
    col.program_step = b.program_step;
    col.memory = b.memory;
    frame.push_back(col);
    events.push_back(b.event);
  }
  // The columns' events increase with the column, as program steps do.
  config.observer = nullptr;
  Engine engine(trace, EngineOptionsFor(config));
  ConfiguredPolicy policy(config);
  ResidentAtEvents resident(trace, engine, events);
  engine.set_observer(&resident);
  const RunResult second = Drive(engine, policy, &resident);
  engine.set_observer(nullptr);
  if (second.events != first.events || second.clock != first.clock ||
      resident.snapshots.size() != frame.size())
    throw Error("the stacked memory's second replay differs from its first");

  // By storage: the storages of most byte-steps, apart from constants.
  const auto n = static_cast<int32_t>(trace.storages.size());
  const int32_t constants = n;  // the group of every constant
  out.by_storage = Stack(
      frame, resident.snapshots, n + 1,
      [&](StorageId s) { return IsConstant(trace, s) ? constants : s; },
      [&](int32_t g) {
        StackBand b;
        if (g == constants) {
          b.kind = StackBand::Kind::kConstants;
        } else {
          b.kind = StackBand::Kind::kStorage;
          b.storage = g;
        }
        return b;
      },
      // Constants at the bottom, then storages in creation order.
      [&](int32_t a, int32_t b) { return (a == constants ? -1 : a) < (b == constants ? -1 : b); },
      keep);

  // By module: roles first, then constants, then the module (at the group
  // depth) of the operator that allocated the storage.
  const Attribution* attribution = trace.attribution.get();
  if (attribution && !attribution->modules.empty()) {
    std::vector<std::string> tops;
    std::map<std::string, int32_t> top_index;
    std::vector<int32_t> module_top(attribution->modules.size());
    // Only modules some operator names make groups (a parent such as a
    // Sequential that ENTER lists but that runs no operator of its own does not).
    std::vector<bool> named(attribution->modules.size(), false);
    for (int32_t m : attribution->op_module)
      if (m >= 0) named[m] = true;
    std::vector<std::string> grouped;
    for (size_t m = 0; m < named.size(); ++m)
      if (named[m]) grouped.push_back(attribution->modules[m]);
    const int depth = ModuleGroupDepth(grouped, keep - 1);
    for (size_t m = 0; m < attribution->modules.size(); ++m) {
      const std::string top = ModulePrefix(attribution->modules[m], depth);
      auto [it, added] = top_index.emplace(top, static_cast<int32_t>(tops.size()));
      if (added) tops.push_back(top);
      module_top[m] = it->second;
    }
    // Groups: roles [0, kRoleKinds), constants, no module, then the modules.
    const int32_t g_constants = kRoleKinds, g_none = kRoleKinds + 1, g_module0 = kRoleKinds + 2;
    std::vector<int32_t> group(trace.storages.size());
    std::vector<int32_t> first_storage(g_module0 + tops.size(), n);
    for (StorageId s = 0; s < n; ++s) {
      const int32_t role = s < static_cast<StorageId>(attribution->storage_role.size())
                               ? attribution->storage_role[s]
                               : -1;
      const OpId op = trace.tensors[trace.storages[s].root].op;
      int32_t g;
      if (role >= 0) {
        g = static_cast<int32_t>(attribution->role_kinds[role]);
      } else if (trace.ops[op].is_constant) {
        g = g_constants;
      } else if (attribution->op_module[op] >= 0) {
        g = g_module0 + module_top[attribution->op_module[op]];
      } else {
        g = g_none;
      }
      group[s] = g;
      first_storage[g] = std::min(first_storage[g], s);
    }
    out.by_module = Stack(
        frame, resident.snapshots, g_module0 + static_cast<int32_t>(tops.size()),
        [&](StorageId s) { return group[s]; },
        [&](int32_t g) {
          StackBand b;
          if (g < kRoleKinds) {
            b.kind = StackBand::Kind::kRole;
            b.role = static_cast<RoleKind>(g);
          } else if (g == g_constants) {
            b.kind = StackBand::Kind::kConstants;
          } else if (g == g_none) {
            b.kind = StackBand::Kind::kNoModule;
          } else {
            b.kind = StackBand::Kind::kModule;
            b.module = tops[g - g_module0];
          }
          return b;
        },
        // Roles and constants at the bottom, then by first storage allocated.
        [&](int32_t a, int32_t b) {
          const bool fa = a <= g_constants, fb = b <= g_constants;
          if (fa != fb) return fa;
          if (fa) return a < b;
          return first_storage[a] < first_storage[b];
        },
        keep);
  }
  return out;
}

}  // namespace dtr
