#include "model/trace_parser.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "model/attribution.h"
#include "model/echo.h"
#include "model/error.h"
#include "model/trace_line.h"

namespace dtr {

const Tensor& Trace::tensor_named(const std::string& name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return t;
  throw Error(fmt::format("{}: no tensor named '{}'", source, Echo(name)));
}

void BuildStorageAdjacency(Trace& trace) {
  // One storage at a time: its raw edges into `raw`, then each neighbour once
  // with its smallest key, sorted by key.
  size_t ns = trace.storages.size();
  std::vector<TensorId> best(ns, -1);
  std::vector<StorageEdge> raw;
  auto pack = [&](StorageAdjacency& out, auto gather) {
    out.offset.assign(ns + 1, 0);
    out.edges.clear();
    for (size_t s = 0; s < ns; ++s) {
      out.offset[s] = static_cast<int32_t>(out.edges.size());
      raw.clear();
      for (TensorId t : trace.storages[s].tensors) gather(t, raw);
      for (const StorageEdge& e : raw)
        if (e.storage != static_cast<StorageId>(s) && (best[e.storage] < 0 || e.key < best[e.storage]))
          best[e.storage] = e.key;
      for (const StorageEdge& e : raw)
        if (best[e.storage] >= 0) {
          out.edges.push_back({best[e.storage], e.storage});
          best[e.storage] = -1;
        }
      std::sort(out.edges.begin() + out.offset[s], out.edges.end(),
                [](const StorageEdge& a, const StorageEdge& b) { return a.key < b.key; });
    }
    out.offset[ns] = static_cast<int32_t>(out.edges.size());
    out.edges.shrink_to_fit();
  };
  // Children of a storage: the storages of its tensors' children (key: the child).
  pack(trace.storage_children, [&](TensorId t, std::vector<StorageEdge>& raw) {
    for (TensorId c : trace.tensors[t].children) raw.push_back({c, trace.tensors[c].storage});
  });
  // Parents: the storages of its tensors' arguments (key: its own tensor).
  pack(trace.storage_parents, [&](TensorId t, std::vector<StorageEdge>& raw) {
    for (TensorId p : trace.op_of(t).args) raw.push_back({t, trace.tensors[p].storage});
  });
}

namespace {

// Every tensor's children in one buffer: for each operator in creation order,
// each argument occurrence gets the operator's outputs in order.
void BuildChildren(Trace& trace) {
  size_t nt = trace.tensors.size();
  std::vector<int64_t> start(nt + 1, 0);
  for (const Operator& op : trace.ops)
    for (TensorId a : op.args) start[a + 1] += op.num_outputs;
  for (size_t t = 0; t < nt; ++t) start[t + 1] += start[t];
  auto lists = std::make_shared<std::vector<TensorId>>(static_cast<size_t>(start[nt]));
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (const Operator& op : trace.ops)
    for (TensorId a : op.args)
      for (int32_t i = 0; i < op.num_outputs; ++i) (*lists)[next[a]++] = op.first_output + i;
  for (size_t t = 0; t < nt; ++t)
    trace.tensors[t].children =
        TensorList(lists->data() + start[t], static_cast<int32_t>(start[t + 1] - start[t]));
  trace.tensor_lists = std::move(lists);
}

enum class Kind { kConstant, kMemory, kCopy, kRelease, kCall, kMutate, kAnnotate, kCopyFrom, kAlias };

// One decoded line. Only the fields of its kind are set.
struct Instruction {
  Kind kind;
  int line;
  std::string name;  // NAME; DST for COPY / COPY_FROM; ANNOTATION for ANNOTATE
  std::string src;   // SRC for COPY / COPY_FROM
  std::vector<std::string> args, results;
  std::vector<int64_t> mutate;
  int64_t number = 0;  // MEMORY, TIME or ALIAS
  // The attribution keys (docs/trace_format.md): MODULE, SOURCE, PHASE and
  // ENTER of a CALL or MUTATE, ROLE of a MEMORY line; each where the line has it.
  bool has_module = false, has_source = false, has_role = false;
  std::string module, source, role;
  std::vector<std::string> enter;
  Phase phase = Phase::kUnknown;
  bool attributed() const {
    return has_module || has_source || has_role || phase != Phase::kUnknown || !enter.empty();
  }
};

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kConstant: return "CONSTANT";
    case Kind::kMemory: return "MEMORY";
    case Kind::kCopy: return "COPY";
    case Kind::kRelease: return "RELEASE";
    case Kind::kCall: return "CALL";
    case Kind::kMutate: return "MUTATE";
    case Kind::kAnnotate: return "ANNOTATE";
    case Kind::kCopyFrom: return "COPY_FROM";
    case Kind::kAlias: return "ALIAS";
  }
  return "?";
}

// Every name the trace has used, each stored once (its characters in blocks
// that never move): the tensor it is bound to (simrd's tensor_map), the
// order in which names were first bound, and whether a tensor was created
// with the name. One entry serves both questions, which keeps the parser's
// own memory small next to the trace it builds.
class NameTable {
 public:
  struct Entry {
    TensorId bound = -1;    // -1: never bound
    TensorId created = -1;  // the tensor created with this name; -1: none
  };

  // The tensor `name` is bound to, or -1.
  TensorId Bound(std::string_view name) const {
    const int32_t e = Find(name, Hash(name)).entry;
    return e < 0 ? -1 : entries_[e].bound;
  }
  // The entry of `name`, created if the name is new (valid until the next Add).
  Entry& Add(std::string_view name) { return entries_[Intern(name)]; }
  void Bind(std::string_view name, TensorId t) {
    const int32_t e = Intern(name);
    if (entries_[e].bound < 0) order_.push_back(e);
    entries_[e].bound = t;
  }
  // Calls f(tensor) for every bound name, in the order of first binding.
  template <class F>
  void ForEachBound(F f) const {
    for (int32_t e : order_) f(entries_[e].bound);
  }
  // Calls f(entry) for every bound name, in the same order.
  template <class F>
  void ForEachBoundEntry(F f) const {
    for (int32_t e : order_) f(entries_[e]);
  }

 private:
  // Open addressing with linear probing, each cell holding its name's hash
  // and entry: a lookup reads one cell and, on a hash match, the name. (A
  // node-based map took a chain of cache misses per name: 14% of reading a
  // 10^6-operator trace.) Half full at most.
  struct Cell {
    uint32_t hash = 0;
    int32_t entry = -1;  // -1: empty
  };
  static uint32_t Hash(std::string_view name) {
    return static_cast<uint32_t>(std::hash<std::string_view>()(name));
  }
  // The cell holding `name`, or the empty cell where it would go.
  const Cell& Find(std::string_view name, uint32_t hash) const {
    static const Cell kNone;
    if (cells_.empty()) return kNone;
    const size_t mask = cells_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Cell& cell = cells_[i];
      if (cell.entry < 0 || (cell.hash == hash && names_[cell.entry] == name)) return cell;
    }
  }
  // The entry of `name`, created if the name is new.
  int32_t Intern(std::string_view name) {
    const uint32_t hash = Hash(name);
    if (const Cell& found = Find(name, hash); found.entry >= 0) return found.entry;
    if (2 * (entries_.size() + 1) > cells_.size()) Grow();
    const int32_t e = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
    names_.push_back(Store(name));
    Place({hash, e});
    return e;
  }
  void Place(Cell s) {
    const size_t mask = cells_.size() - 1;
    size_t i = s.hash & mask;
    while (cells_[i].entry >= 0) i = (i + 1) & mask;
    cells_[i] = s;
  }
  void Grow() {
    std::vector<Cell> old = std::move(cells_);
    cells_.assign(std::max<size_t>(1024, 2 * old.size()), Cell{});
    for (const Cell& s : old)
      if (s.entry >= 0) Place(s);
  }
  std::string_view Store(std::string_view name) {
    constexpr size_t kBlock = 1 << 16;
    if (name.size() > left_) {  // a new block; a longer name gets one of its own size
      size_t size = std::max(kBlock, name.size());
      blocks_.push_back(std::make_unique<char[]>(size));
      next_ = blocks_.back().get();
      left_ = size;
    }
    char* at = next_;
    std::copy(name.begin(), name.end(), at);
    next_ += name.size();
    left_ -= name.size();
    return {at, name.size()};
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // the free characters of the last block
  size_t left_ = 0;
  std::vector<Cell> cells_;              // a power of two of them, or none
  std::vector<Entry> entries_;           // in the order names came
  std::vector<std::string_view> names_;  // of the entries, in blocks_
  std::vector<int32_t> order_;           // entries by first binding
};

class Parser {
 public:
  explicit Parser(std::string source) { trace_.source = std::move(source); }

  Trace Parse(std::istream& in);

 private:
  // A malformed line or a read error: it wins over any error of the replay
  // program, which simrd would only meet after decoding every line.
  struct LineError {
    InputError error;
  };

  bool ReadLine();                 // the next line into text_; false at the end; LineError on a read error
  bool Pull(Instruction& out);     // ReadLine() and Decode(); LineError for a malformed line

  [[noreturn]] void Fail(int line, const std::string& message) const {
    throw InputError(fmt::format("{}:{}: {}", trace_.source, line, message));
  }

  // Decodes `text` into `in`, reusing its strings' and lists' room.
  void Decode(const std::string& text, int line, Instruction& in);
  const JsonValue& Field(TraceLine::Key key, int line) const;
  const std::string& StringField(TraceLine::Key key, int line) const;
  int64_t IntegerField(TraceLine::Key key, int line) const;
  void StringList(TraceLine::Key key, int line, std::vector<std::string>& out) const;
  // An attribution key's string into `out`; false if the line has no such key.
  bool OptionalString(TraceLine::Key key, int line, std::string& out) const;
  void DecodeOrigin(int line, Instruction& in) const;  // MODULE, SOURCE, PHASE, ENTER
  void DecodeRole(int line, Instruction& in) const;    // ROLE

  void Build();
  TensorId Lookup(const std::string& name, int line, const char* role) const;
  // Adds a MEMORY size to the trace's total, failing at `line` (where the
  // size was read) past 2^62.
  void CountSize(int64_t size, int line);
  OpId MakeOp(const std::string& base, int64_t compute, const std::vector<TensorId>& args,
              const std::vector<int64_t>& sizes, const std::vector<int64_t>& aliases,
              const std::vector<std::string>& names, bool constant, int line);
  void Bind(const std::string& name, TensorId t);
  void Get(TensorId t, int line, const std::string& what);
  void Release(TensorId t, int line, const std::string& what);
  // The attribution of the trace, made at the first attribution key: a trace
  // without them gets none and pays nothing for it.
  Attribution& Attributed();
  void AttributeOp(OpId op, const Instruction& in);  // its MODULE, SOURCE, PHASE, ENTER
  int32_t InternRole(const std::string& role);
  void SetRole(TensorId t, int32_t role);
  // Sizes every table to the trace's and resolves the storages' roles
  // (Attribution::storage_role), before the name table goes.
  void FinishAttribution();

  std::istream* in_ = nullptr;
  TraceLine fields_;  // of the line being decoded
  std::string text_;  // the current line
  int line_ = 0;      // its number; after the end, the number of lines
  Trace trace_;
  NameTable names_;
  std::vector<int32_t> tensor_refs_;                 // parse-time '_ref' of each tensor
  std::vector<int32_t> storage_refs_;                // simrd's Storage.ref_ext, replayed statically
  int64_t size_sum_ = 0, compute_sum_ = 0;           // of every MEMORY and TIME so far (at most 2^62)
  // Scratch of Build(): an operator's arguments, output sizes, aliases and names.
  std::vector<TensorId> args_;
  std::vector<int64_t> sizes_, aliases_;
  std::vector<std::string> names_out_;
  std::vector<std::pair<int32_t, int32_t>> result_roles_;  // (result index, role) of a CALL
  std::shared_ptr<Attribution> attribution_;               // null until an attribution key
  std::unordered_map<std::string, int32_t> module_index_, source_index_, role_index_;
};

const JsonValue& Parser::Field(TraceLine::Key key, int line) const {
  const JsonValue& v = fields_[key];
  if (v.type == JsonValue::Type::kAbsent)
    Fail(line, fmt::format("missing key \"{}\"", TraceLine::kKeyNames[key]));
  return v;
}

const std::string& Parser::StringField(TraceLine::Key key, int line) const {
  const JsonValue& v = Field(key, line);
  if (v.type != JsonValue::Type::kString)
    Fail(line, fmt::format("\"{}\" must be a string", TraceLine::kKeyNames[key]));
  return v.text;
}

// simrd applies Python's int() to these fields; traces write them as strings
// of decimal digits ("733881", "-1"). JSON integers are accepted too.
int64_t Parser::IntegerField(TraceLine::Key k, int line) const {
  const JsonValue& v = Field(k, line);
  const char* key = TraceLine::kKeyNames[k];
  if (v.type == JsonValue::Type::kUnsigned && v.unsigned_integer > static_cast<uint64_t>(INT64_MAX))
    Fail(line,
         fmt::format("\"{}\" is too large: {} (at most {})", key, v.unsigned_integer, INT64_MAX));
  if (v.is_integer()) return v.as_int64();
  if (v.type == JsonValue::Type::kString) {
    const std::string& s = v.text;
    // Python's int() takes a leading '+'; from_chars does not.
    size_t skip = !s.empty() && s[0] == '+' ? 1 : 0;
    const char* begin = s.data() + skip;
    const char* end = s.data() + s.size();
    int64_t value = 0;
    auto [stop, ec] = std::from_chars(begin, end, value);
    bool digits = begin != end && (std::isdigit(static_cast<unsigned char>(*begin)) ||
                                   (*begin == '-' && skip == 0));
    if (!digits || stop != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
      Fail(line, fmt::format("\"{}\" must be an integer, got \"{}\"", key, Echo(s)));
    if (ec == std::errc::result_out_of_range)
      Fail(line, *begin == '-' ? fmt::format("\"{}\" is too small: {} (at least {})", key, Echo(s), INT64_MIN)
                               : fmt::format("\"{}\" is too large: {} (at most {})", key, Echo(s), INT64_MAX));
    return value;
  }
  Fail(line, fmt::format("\"{}\" must be an integer", key));
}

void Parser::StringList(TraceLine::Key key, int line, std::vector<std::string>& out) const {
  const JsonValue& v = Field(key, line);
  auto fail = [&] {
    Fail(line, fmt::format("\"{}\" must be a list of names", TraceLine::kKeyNames[key]));
  };
  if (v.type != JsonValue::Type::kArray) fail();
  out.resize(v.elements.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (v.elements[i].type != JsonValue::Type::kString) fail();
    out[i] = v.elements[i].text;
  }
}

bool Parser::OptionalString(TraceLine::Key key, int line, std::string& out) const {
  const JsonValue& v = fields_[key];
  if (v.type == JsonValue::Type::kAbsent) return false;
  if (v.type != JsonValue::Type::kString)
    Fail(line, fmt::format("\"{}\" must be a string", TraceLine::kKeyNames[key]));
  out = v.text;
  return true;
}

void Parser::DecodeOrigin(int line, Instruction& in) const {
  in.has_module = OptionalString(TraceLine::kModule, line, in.module);
  in.has_source = OptionalString(TraceLine::kSource, line, in.source);
  std::string phase;
  if (OptionalString(TraceLine::kPhase, line, phase)) {
    std::optional<Phase> p = ParsePhase(phase);
    if (!p)
      Fail(line, fmt::format("\"PHASE\" must be forward, backward or optimizer, got \"{}\"", Echo(phase)));
    in.phase = *p;
  }
  if (fields_[TraceLine::kEnter].type != JsonValue::Type::kAbsent)
    StringList(TraceLine::kEnter, line, in.enter);
}

void Parser::DecodeRole(int line, Instruction& in) const {
  in.has_role = OptionalString(TraceLine::kRole, line, in.role);
  if (in.has_role && !ParseRole(in.role))
    Fail(line, fmt::format("\"ROLE\" must be \"parameter NAME\", \"buffer NAME\", \"gradient NAME\", "
                           "\"optimizer KEY NAME\" or \"input\", got \"{}\"",
                           Echo(in.role)));
}

void Parser::Decode(const std::string& text, int line, Instruction& in) {
  if (!fields_.Parse(text)) {
    if (text.empty()) Fail(line, "empty line where an instruction was expected");
    Fail(line, "malformed JSON");
  }
  if (!fields_.root_is_object()) Fail(line, "expected a JSON object");
  const std::string& instr = StringField(TraceLine::kInstruction, line);
  in.line = line;
  in.src.clear();
  in.args.clear();
  in.results.clear();
  in.mutate.clear();
  in.number = 0;
  in.has_module = in.has_source = in.has_role = false;
  in.enter.clear();
  in.phase = Phase::kUnknown;
  if (instr == "CONSTANT") {
    in.kind = Kind::kConstant;
    in.name = StringField(TraceLine::kName, line);
  } else if (instr == "MEMORY") {
    in.kind = Kind::kMemory;
    in.name = StringField(TraceLine::kName, line);
    in.number = IntegerField(TraceLine::kMemory, line);
    if (in.number < 0) Fail(line, fmt::format("MEMORY of {} is negative", Echo(in.name)));
    DecodeRole(line, in);
  } else if (instr == "COPY" || instr == "COPY_FROM") {
    in.kind = instr == "COPY" ? Kind::kCopy : Kind::kCopyFrom;
    in.name = StringField(TraceLine::kDst, line);
    in.src = StringField(TraceLine::kSrc, line);
  } else if (instr == "RELEASE") {
    in.kind = Kind::kRelease;
    in.name = StringField(TraceLine::kName, line);
  } else if (instr == "CALL") {
    in.kind = Kind::kCall;
    StringList(TraceLine::kResult, line, in.results);
    in.name = StringField(TraceLine::kName, line);
    StringList(TraceLine::kArgs, line, in.args);
    in.number = IntegerField(TraceLine::kTime, line);
    if (in.number < 0) Fail(line, fmt::format("TIME of {} is negative", Echo(in.name)));
    DecodeOrigin(line, in);
  } else if (instr == "MUTATE") {
    in.kind = Kind::kMutate;
    in.name = StringField(TraceLine::kName, line);
    StringList(TraceLine::kArgs, line, in.args);
    const JsonValue& m = Field(TraceLine::kMutate, line);
    if (m.type != JsonValue::Type::kArray)
      Fail(line, "\"MUTATE\" must be a list of argument indices");
    for (const JsonValue& e : m.elements) {
      if (!e.is_integer()) Fail(line, "\"MUTATE\" must be a list of argument indices");
      if (e.type == JsonValue::Type::kUnsigned && e.unsigned_integer > static_cast<uint64_t>(INT64_MAX))
        Fail(line, fmt::format("MUTATE index {} is out of range for {} arguments", e.unsigned_integer,
                               in.args.size()));
      in.mutate.push_back(e.as_int64());
    }
    in.number = IntegerField(TraceLine::kTime, line);
    if (in.number < 0) Fail(line, fmt::format("TIME of {} is negative", Echo(in.name)));
    DecodeOrigin(line, in);
  } else if (instr == "ANNOTATE") {
    in.kind = Kind::kAnnotate;
    in.name = StringField(TraceLine::kAnnotation, line);
  } else if (instr == "ALIAS") {
    in.kind = Kind::kAlias;
    in.name = StringField(TraceLine::kName, line);
    in.number = IntegerField(TraceLine::kAlias, line);
  } else {
    Fail(line, fmt::format("unknown instruction \"{}\"", Echo(instr)));
  }
}

bool Parser::ReadLine() {
  if (!std::getline(*in_, text_)) {
    if (in_->bad()) throw LineError{InputError(SystemErrorMessage(trace_.source, "read error"))};
    return false;
  }
  ++line_;
  while (!text_.empty() && (text_.back() == '\r' || text_.back() == ' ' || text_.back() == '\t'))
    text_.pop_back();
  return true;
}

bool Parser::Pull(Instruction& out) {
  if (!ReadLine()) return false;
  try {
    Decode(text_, line_, out);
  } catch (InputError& e) {
    throw LineError{std::move(e)};
  }
  return true;
}

Trace Parser::Parse(std::istream& in) {
  // The trace is read one line at a time and never held whole. Like simrd,
  // every line is decoded before replay starts, so an error before START is
  // still an error, and a malformed line anywhere is reported rather than an
  // earlier problem of the replay program: after a program error the rest of
  // the lines are still decoded, and the program error is reported only if
  // they all decode.
  in_ = &in;
  try {
    Instruction ins{};
    bool started = false;
    while (!started && Pull(ins)) started = ins.kind == Kind::kAnnotate && ins.name == "START";
    if (line_ == 0) throw InputError(fmt::format("{}: empty trace", trace_.source));
    if (!started)
      throw InputError(fmt::format("{}:{}: no START annotation in the trace", trace_.source, line_));
    try {
      Build();
    } catch (const InputError&) {
      Instruction rest{};
      while (Pull(rest)) {
      }
      throw;
    }
    // Nothing to replay: no baseline, no budget ratio, no overhead.
    if (trace_.ops.empty())
      throw InputError(fmt::format("{}:{}: the trace has no CONSTANT, CALL or MUTATE after START: nothing to replay",
                                   trace_.source, line_));
  } catch (LineError& e) {
    throw std::move(e.error);
  }
  FinishAttribution();
  // The parser's own tables go before the trace takes its final size: the
  // vectors lose their spare capacity (one copy at a time), then the
  // adjacency is built.
  names_ = NameTable();
  tensor_refs_ = {};
  storage_refs_ = {};
  trace_.ops.shrink_to_fit();
  trace_.tensors.shrink_to_fit();
  trace_.storages.shrink_to_fit();
  trace_.program.shrink_to_fit();
  BuildChildren(trace_);
  BuildStorageAdjacency(trace_);
  return std::move(trace_);
}

TensorId Parser::Lookup(const std::string& name, int line, const char* role) const {
  TensorId t = names_.Bound(name);
  if (t < 0) Fail(line, fmt::format("{} '{}' is not defined", role, Echo(name)));
  return t;
}

void Parser::Bind(const std::string& name, TensorId t) { names_.Bind(name, t); }

// simrd's runtime asserts ref_ext > 0 on get and release; the counts do not
// depend on the budget, so such a trace is rejected here, with its line.
void Parser::Get(TensorId t, int line, const std::string& what) {
  if (storage_refs_[trace_.tensors[t].storage] <= 0)
    Fail(line, fmt::format("{} refers to '{}' after its last reference was released", what,
                           Echo(trace_.tensors[t].name)));
  ++storage_refs_[trace_.tensors[t].storage];
  ++tensor_refs_[t];
  trace_.program.push_back({StepKind::kGet, t, line});
}

void Parser::Release(TensorId t, int line, const std::string& what) {
  if (tensor_refs_[t] <= 0 || storage_refs_[trace_.tensors[t].storage] <= 0)
    Fail(line, fmt::format("{} releases '{}', which holds no reference any more", what,
                           Echo(trace_.tensors[t].name)));
  --storage_refs_[trace_.tensors[t].storage];
  --tensor_refs_[t];
  trace_.program.push_back({StepKind::kRelease, t, line});
}

OpId Parser::MakeOp(const std::string& base, int64_t compute, const std::vector<TensorId>& args,
                    const std::vector<int64_t>& sizes, const std::vector<int64_t>& aliases,
                    const std::vector<std::string>& names, bool constant, int line) {
  OpId id = static_cast<OpId>(trace_.ops.size());
  // Every sum the replay forms (memory in use, a budget comparison, region
  // compute) stays below 2^63 when all sizes, and all compute, sum to at
  // most 2^62: memory in use never exceeds all storages plus one operator's
  // copies. Clock and remat compute can still grow past that by
  // recomputation; the engine checks those additions.
  // (The sizes were counted by CountSize, at the lines they come from.)
  if (compute > kMaxTraceSum - compute_sum_)
    Fail(line, fmt::format("the trace's TIME values sum to more than 2^62 here; dtrcheck's clock arithmetic "
                           "would overflow"));
  compute_sum_ += compute;
  Operator op;
  op.name = fmt::format("{}/{}", base, id);
  op.compute = compute;
  op.args = args;
  op.first_output = static_cast<TensorId>(trace_.tensors.size());
  op.num_outputs = static_cast<int32_t>(names.size());
  op.is_constant = constant;
  op.line = line;
  for (size_t i = 0; i < names.size(); ++i) {
    NameTable::Entry& entry = names_.Add(names[i]);
    if (entry.created >= 0)
      Fail(line, fmt::format("tensor name '{}' is defined twice", Echo(names[i])));
    TensorId tid = static_cast<TensorId>(trace_.tensors.size());
    entry.created = tid;
    Tensor t;
    t.name = names[i];
    t.op = id;
    t.index = static_cast<int32_t>(i);
    t.size = sizes[i];
    op.total_size += sizes[i];
    if (aliases[i] >= 0) {
      t.is_alias = true;
      t.storage = trace_.tensors[args[aliases[i]]].storage;
    } else {
      t.storage = static_cast<StorageId>(trace_.storages.size());
      Storage s;
      s.size = sizes[i];
      s.root = tid;
      trace_.storages.push_back(s);
      storage_refs_.push_back(0);
    }
    Storage& s = trace_.storages[t.storage];
    // The tensors of this operator come last in s.tensors (they are added
    // here, in creation order), so the last one tells whether any is.
    bool op_seen = !s.tensors.empty() && trace_.tensors[s.tensors.back()].op == id;
    int64_t before = s.tensors.empty() ? 0 : trace_.tensors[s.tensors.back()].storage_compute_after;
    t.storage_compute_after = before + (op_seen ? 0 : compute);
    s.tensors.push_back(tid);
    ++storage_refs_[t.storage];
    tensor_refs_.push_back(1);
    trace_.tensors.push_back(std::move(t));
  }
  trace_.ops.push_back(std::move(op));
  trace_.program.push_back({StepKind::kCompute, id, line});
  return id;
}

Attribution& Parser::Attributed() {
  if (!attribution_) attribution_ = std::make_shared<Attribution>();
  return *attribution_;
}

namespace {

int32_t Intern(const std::string& value, std::vector<std::string>& table,
               std::unordered_map<std::string, int32_t>& index) {
  auto [at, added] = index.try_emplace(value, static_cast<int32_t>(table.size()));
  if (added) table.push_back(value);
  return at->second;
}

}  // namespace

void Parser::AttributeOp(OpId op, const Instruction& in) {
  if (!in.attributed()) return;
  Attribution& a = Attributed();
  a.op_module.resize(op + 1, -1);
  a.op_source.resize(op + 1, -1);
  a.op_phase.resize(op + 1, Phase::kUnknown);
  if (in.has_module) a.op_module[op] = Intern(in.module, a.modules, module_index_);
  if (in.has_source) a.op_source[op] = Intern(in.source, a.sources, source_index_);
  a.op_phase[op] = in.phase;
  for (const std::string& module : in.enter)
    a.module_calls.push_back({op, Intern(module, a.modules, module_index_)});
}

int32_t Parser::InternRole(const std::string& role) {
  Attribution& a = Attributed();
  const int32_t i = Intern(role, a.roles, role_index_);
  if (a.role_kinds.size() < a.roles.size()) a.role_kinds.push_back(*ParseRole(role));
  return i;
}

void Parser::SetRole(TensorId t, int32_t role) {
  Attribution& a = Attributed();
  a.tensor_role.resize(t + 1, -1);
  a.tensor_role[t] = role;
}

void Parser::FinishAttribution() {
  if (!attribution_) return;
  Attribution& a = *attribution_;
  a.op_module.resize(trace_.ops.size(), -1);
  a.op_source.resize(trace_.ops.size(), -1);
  a.op_phase.resize(trace_.ops.size(), Phase::kUnknown);
  a.tensor_role.resize(trace_.tensors.size(), -1);
  // A ROLE belongs to the name: its bytes are those of the storage the name
  // holds at the end (an alias made by detach, the result of the last
  // in-place update); a storage no such name holds takes the role of its own
  // tensor, if one has one.
  a.storage_role.assign(trace_.storages.size(), -1);
  names_.ForEachBoundEntry([&](const NameTable::Entry& e) {
    if (e.created < 0 || a.tensor_role[e.created] < 0) return;
    int32_t& role = a.storage_role[trace_.tensors[e.bound].storage];
    if (role < 0) role = a.tensor_role[e.created];
  });
  for (size_t t = 0; t < trace_.tensors.size(); ++t) {
    int32_t& role = a.storage_role[trace_.tensors[t].storage];
    if (role < 0) role = a.tensor_role[t];
  }
  module_index_ = {};
  source_index_ = {};
  role_index_ = {};
  trace_.attribution = std::move(attribution_);
}

void Parser::CountSize(int64_t size, int line) {
  if (size > kMaxTraceSum - size_sum_)
    Fail(line, fmt::format("the trace's MEMORY sizes sum to more than 2^62 bytes here; dtrcheck's memory "
                           "arithmetic would overflow"));
  size_sum_ += size;
}

void Parser::Build() {
  Instruction mem_line{}, alias_line{};  // the lines after a CONSTANT or a CALL result
  auto next = [&](Instruction& line, const Instruction& owner, Kind want,
                  const std::string& result) -> const Instruction& {
    if (!Pull(line))
      Fail(owner.line, fmt::format("{} result {} has no {} line (the trace ends)", KindName(owner.kind),
                                   Echo(result), KindName(want)));
    if (line.kind != want)
      Fail(line.line, fmt::format("expected the {} line of {} result {}, got {}", KindName(want),
                                KindName(owner.kind), Echo(result), KindName(line.kind)));
    if (line.name != result)
      Fail(line.line, fmt::format("{} line names '{}' where {} result '{}' was expected", KindName(want),
                                Echo(line.name), KindName(owner.kind), Echo(result)));
    return line;
  };

  Instruction in{};
  while (Pull(in)) {
    switch (in.kind) {
      case Kind::kConstant: {
        if (names_.Bound(in.name) >= 0) Fail(in.line, fmt::format("CONSTANT '{}' is already defined", Echo(in.name)));
        const Instruction& mem = next(mem_line, in, Kind::kMemory, in.name);
        CountSize(mem.number, mem.line);
        args_.clear();
        sizes_.assign(1, mem.number);
        aliases_.assign(1, -1);
        names_out_.resize(1);
        names_out_[0] = in.name;
        OpId op = MakeOp("constant", 0, args_, sizes_, aliases_, names_out_, true, in.line);
        TensorId t = trace_.ops[op].first_output;
        if (mem.has_role) SetRole(t, InternRole(mem.role));
        trace_.program.push_back({StepKind::kPin, t, in.line});
        Bind(in.name, t);
        break;
      }
      case Kind::kCopy: {
        if (names_.Bound(in.name) >= 0) Fail(in.line, fmt::format("COPY destination '{}' is already defined", Echo(in.name)));
        TensorId t = Lookup(in.src, in.line, "COPY source");
        Get(t, in.line, "COPY");
        Bind(in.name, t);
        break;
      }
      case Kind::kRelease: {
        TensorId t = names_.Bound(in.name);
        if (t >= 0) Release(t, in.line, "RELEASE");  // unknown names are ignored
        break;
      }
      case Kind::kCall: {
        if (in.results.empty()) Fail(in.line, fmt::format("CALL {} has no results", Echo(in.name)));
        std::vector<TensorId>& args = args_;
        args.clear();
        for (const std::string& a : in.args) args.push_back(Lookup(a, in.line, "argument"));
        std::vector<int64_t>&sizes = sizes_, &aliases = aliases_;
        sizes.clear();
        aliases.clear();
        result_roles_.clear();
        for (const std::string& r : in.results) {
          if (names_.Bound(r) >= 0) Fail(in.line, fmt::format("CALL result '{}' is already defined", Echo(r)));
          const Instruction& mem = next(mem_line, in, Kind::kMemory, r);
          const Instruction& alias = next(alias_line, in, Kind::kAlias, r);
          if (alias.number < -1 || alias.number >= static_cast<int64_t>(args.size()))
            Fail(alias.line, fmt::format("ALIAS of {} is {}, but {} has {} arguments", Echo(r),
                                         alias.number, Echo(in.name), args.size()));
          aliases.push_back(alias.number);
          sizes.push_back(alias.number != -1 ? 0 : mem.number);
          CountSize(sizes.back(), mem.line);
          if (mem.has_role)
            result_roles_.push_back({static_cast<int32_t>(sizes.size() - 1), InternRole(mem.role)});
        }
        MakeOp(in.name, in.number, args, sizes, aliases, in.results, false, in.line);
        OpId op = static_cast<OpId>(trace_.ops.size() - 1);
        AttributeOp(op, in);
        for (auto [i, role] : result_roles_) SetRole(trace_.ops[op].first_output + i, role);
        for (size_t i = 0; i < in.results.size(); ++i) Bind(in.results[i], trace_.ops[op].first_output + i);
        break;
      }
      case Kind::kMutate: {
        std::vector<TensorId>& args = args_;
        args.clear();
        for (const std::string& a : in.args) args.push_back(Lookup(a, in.line, "argument"));
        std::vector<int64_t>&sizes = sizes_, &aliases = aliases_;
        sizes.clear();
        aliases.clear();
        std::vector<std::string>& names = names_out_;
        names.clear();
        for (int64_t m : in.mutate) {
          if (m < 0 || m >= static_cast<int64_t>(args.size()))
            Fail(in.line, fmt::format("MUTATE index {} is out of range for {} arguments", m, args.size()));
          const Tensor& old = trace_.tensors[args[m]];
          sizes.push_back(trace_.storages[old.storage].size);
          CountSize(sizes.back(), in.line);
          aliases.push_back(-1);
          names.push_back(old.name + "$");
        }
        OpId op = MakeOp(in.name, in.number, args, sizes, aliases, names, false, in.line);
        AttributeOp(op, in);
        for (size_t i = 0; i < in.mutate.size(); ++i) {
          const std::string& arg_name = in.args[in.mutate[i]];
          TensorId old = names_.Bound(arg_name);
          Bind(arg_name, trace_.ops[op].first_output + static_cast<TensorId>(i));
          Release(old, in.line, "MUTATE");
        }
        break;
      }
      case Kind::kAnnotate:
        break;  // BACKWARD and other annotations do not change the replay
      case Kind::kCopyFrom: {
        TensorId old = Lookup(in.name, in.line, "COPY_FROM destination");
        TensorId src = Lookup(in.src, in.line, "COPY_FROM source");
        names_.Bind(in.name, src);  // bound already (Lookup above)
        Release(old, in.line, "COPY_FROM");
        Get(src, in.line, "COPY_FROM");
        break;
      }
      case Kind::kMemory:
      case Kind::kAlias:
        Fail(in.line, fmt::format("{} line for '{}' does not follow a CONSTANT or CALL", KindName(in.kind),
                                  Echo(in.name)));
    }
  }

  // Every name still referenced is rematerialized if needed and pinned, in the
  // order in which the names first appeared (simrd iterates its dict).
  int end_line = line_;
  names_.ForEachBound([&](TensorId t) {
    if (tensor_refs_[t] > 0) trace_.program.push_back({StepKind::kPin, t, end_line});
  });
}

}  // namespace

Trace ParseTrace(std::istream& in, const std::string& source) { return Parser(source).Parse(in); }

Trace ParseTraceString(std::string_view text, const std::string& source) {
  std::istringstream in{std::string(text)};
  return ParseTrace(in, source);
}

Trace LoadTrace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a trace file", path));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SystemErrorMessage(path, "cannot open the trace file"));
  return ParseTrace(in, path);
}

}  // namespace dtr
