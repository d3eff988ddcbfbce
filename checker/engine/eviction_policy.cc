#include "checker/engine/eviction_policy.h"

#include <fmt/core.h>

#include "model/error.h"

namespace dtr {

bool ScriptPolicy::Prepare(Engine& engine) {
  const Trace& trace = engine.trace();
  const int64_t event = engine.event();
  if (next_ < entries_.size() && entries_[next_].event < event) {
    failure_ = ScriptFailure{static_cast<int64_t>(next_), entries_[next_].event, "entries must be sorted by event"};
    return false;
  }
  for (; next_ < entries_.size() && entries_[next_].event == event; ++next_) {
    StorageId s = entries_[next_].storage;
    std::string why;
    if (s < 0 || s >= static_cast<StorageId>(trace.storages.size()))
      why = "no such storage";
    else if (!engine.material(s))
      why = fmt::format("storage {} is not material", trace.tensors[trace.storages[s].root].name);
    else if (engine.pinned(s))
      why = fmt::format("storage {} is pinned", trace.tensors[trace.storages[s].root].name);
    else if (engine.locks(s) > 0)
      why = fmt::format("storage {} is locked by a pending computation", trace.tensors[trace.storages[s].root].name);
    if (!why.empty()) {
      failure_ = ScriptFailure{static_cast<int64_t>(next_), event, why};
      return false;
    }
    engine.Evict(s);
  }
  return true;
}

bool ScriptPolicy::Finish(const Engine&) {
  if (next_ >= entries_.size()) return true;
  failure_ = ScriptFailure{static_cast<int64_t>(next_), entries_[next_].event, "the run ended before this event"};
  return false;
}

StorageId OverridePolicy::Choose(Engine& engine, DecisionPoint* detail) {
  const int64_t index = engine.decisions();
  if (next_ >= overrides_.size() || overrides_[next_].first != index) return inner_.Choose(engine, detail);
  inner_.Choose(engine, detail);
  const StorageId s = overrides_[next_++].second;
  const Trace& trace = engine.trace();
  if (s < 0 || s >= static_cast<StorageId>(trace.storages.size()) || !engine.Evictable(s))
    throw Error(fmt::format("override at decision {}: storage {} is not in the eviction pool then", index,
                            s >= 0 && s < static_cast<StorageId>(trace.storages.size())
                                ? trace.tensors[trace.storages[s].root].name
                                : std::to_string(s)));
  if (detail) {
    detail->chosen = s;
    detail->overridden = true;
    if (auto explained = inner_.Explain(engine, s)) {
      detail->score = explained->first;
      detail->terms = explained->second;
    }
  }
  return s;
}

}  // namespace dtr
