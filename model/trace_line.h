// One line of a trace (docs/trace_format.md) as its top-level JSON fields:
// only the keys an instruction can have are kept (the last of a repeated
// key, as a DOM keeps it), each with its JSON type and, for strings,
// integers and arrays, its value; an array keeps its elements one level
// deep (a nested array or object as its type only).
//
// Two readers fill the same fields through the same handler (the SAX
// interface of nlohmann::json):
//  - a fast path for the lines traces are made of: one flat object whose
//    values are strings of printable ASCII without escapes, non-negative
//    integers of at most 18 digits, or arrays of those; JSON whitespace
//    between tokens;
//  - nlohmann's SAX parser for every other line, which then gives the fields
//    or rejects the line. The fast path gives up (and hands the line over)
//    at the first byte it does not expect, so it never rejects a line.
// Both give the same fields for every line the fast path takes
// (tests/trace_line_test.cc compares them on every line of the public
// traces and on mutated lines; the fuzz target compares them on its inputs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtr {

struct JsonValue {
  enum class Type : uint8_t { kAbsent, kScalar, kInteger, kUnsigned, kString, kArray, kObject };
  Type type = Type::kAbsent;        // kScalar: null, a boolean or a float
  int64_t integer = 0;              // kInteger
  uint64_t unsigned_integer = 0;    // kUnsigned (nlohmann's type of a non-negative integer)
  std::string text;                 // kString
  std::vector<JsonValue> elements;  // kArray
  bool is_integer() const { return type == Type::kInteger || type == Type::kUnsigned; }
  int64_t as_int64() const {  // what json::get<int64_t>() gives
    return type == Type::kInteger ? integer : static_cast<int64_t>(unsigned_integer);
  }
};

class TraceLine {
 public:
  // The keys of docs/trace_format.md's table, then its attribution keys
  // (MODULE, PHASE, SOURCE, ENTER on CALL and MUTATE, ROLE on MEMORY).
  enum Key {
    kInstruction, kName, kDst, kSrc, kMemory, kTime, kAlias, kAnnotation, kResult, kArgs, kMutate,
    kModule, kPhase, kSource, kEnter, kRole, kKeys
  };
  static constexpr const char* kKeyNames[kKeys] = {
      "INSTRUCTION", "NAME",   "DST",    "SRC",   "MEMORY", "TIME",   "ALIAS", "ANNOTATION",
      "RESULT",      "ARGS",   "MUTATE", "MODULE", "PHASE", "SOURCE", "ENTER", "ROLE"};

  // Reads `text` into the fields; false if it is not one JSON value.
  bool Parse(const std::string& text);
  // The same with nlohmann's parser alone (for tests and the fuzz target).
  bool ParseWithSax(const std::string& text);
  // Whether the last Parse() took the fast path.
  bool took_fast_path() const { return fast_; }

  bool root_is_object() const { return root_ == JsonValue::Type::kObject; }
  const JsonValue& operator[](Key k) const { return values_[k]; }
  // Whether both last parses gave the same root type and fields (for tests
  // and the fuzz target, which compare Parse() with ParseWithSax()).
  bool SameFieldsAs(const TraceLine& other) const;

  // nlohmann's SAX interface (json::sax_parse calls these; so does the fast path).
  bool null() { return Kept(JsonValue::Type::kScalar); }
  bool boolean(bool) { return Kept(JsonValue::Type::kScalar); }
  bool number_integer(int64_t v);
  bool number_unsigned(uint64_t v);
  bool number_float(double, const std::string&) { return Kept(JsonValue::Type::kScalar); }
  bool string(std::string& v);
  template <class Binary>
  bool binary(Binary&) {
    return Kept(JsonValue::Type::kScalar);
  }
  bool start_object(std::size_t);
  bool end_object();
  bool key(std::string& k);
  bool start_array(std::size_t);
  bool end_array();
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  void Reset();
  bool ParseFast(std::string_view text);  // false: not a line of the fast path's shape
  JsonValue* Slot(JsonValue::Type t);
  bool Kept(JsonValue::Type t) {  // a value whose content is not kept
    Slot(t);
    return true;
  }
  JsonValue* Find(std::string_view k);

  JsonValue values_[kKeys];
  JsonValue::Type root_ = JsonValue::Type::kAbsent;
  int depth_ = 0;
  JsonValue* current_ = nullptr;  // the kept key whose value comes next
  JsonValue* array_ = nullptr;    // the kept top-level array being read
  bool fast_ = false;
  std::string token_;  // the fast path's current key or string
};

}  // namespace dtr
