#include "model/trace_line.h"

#include <nlohmann/json.hpp>

namespace dtr {

bool TraceLine::Parse(const std::string& text) {
  Reset();
  fast_ = ParseFast(text);
  if (fast_) return true;
  return ParseWithSax(text);
}

bool TraceLine::ParseWithSax(const std::string& text) {
  Reset();
  return nlohmann::json::sax_parse(text, this);
}

void TraceLine::Reset() {
  for (JsonValue& v : values_) v.type = JsonValue::Type::kAbsent;
  root_ = JsonValue::Type::kAbsent;
  depth_ = 0;
  current_ = array_ = nullptr;
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A character a string may hold as it is: printable ASCII but '"' and '\'.
bool IsPlain(char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool SameValue(const JsonValue& a, const JsonValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case JsonValue::Type::kInteger: return a.integer == b.integer;
    case JsonValue::Type::kUnsigned: return a.unsigned_integer == b.unsigned_integer;
    case JsonValue::Type::kString: return a.text == b.text;
    case JsonValue::Type::kArray:
      if (a.elements.size() != b.elements.size()) return false;
      for (size_t i = 0; i < a.elements.size(); ++i)
        if (!SameValue(a.elements[i], b.elements[i])) return false;
      return true;
    default: return true;  // absent, or a type whose content is not kept
  }
}

}  // namespace

// The grammar taken; at anything else it returns false, and Parse() resets
// the fields and hands the line to nlohmann's parser:
//   line    := ws '{' ws ( '}' | member ( ws ',' ws member )* ws '}' ) ws
//   member  := string ws ':' ws value
//   value   := scalar | '[' ws ( ']' | scalar ( ws ',' ws scalar )* ws ']' )
//   scalar  := string | '0' | [1-9][0-9]{0,17}, not followed by [0-9.eE]
//   string  := '"' plain* '"'
bool TraceLine::ParseFast(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  auto skip_space = [&] {
    while (p != end && IsSpace(*p)) ++p;
  };
  auto at = [&](char c) { return p != end && *p == c; };
  // A string into token_; false if it is not a plain one.
  auto read_string = [&]() -> bool {
    if (!at('"')) return false;
    const char* begin = ++p;
    while (p != end && IsPlain(*p)) ++p;
    if (!at('"')) return false;
    token_.assign(begin, p);
    ++p;
    return true;
  };
  // A string or a small non-negative integer, handed to the handler.
  auto read_scalar = [&]() -> bool {
    if (at('"')) return read_string() && string(token_);
    if (p == end || !IsDigit(*p)) return false;
    const char* begin = p;
    uint64_t value = 0;
    if (*p == '0') {
      ++p;
    } else {
      while (p != end && IsDigit(*p) && p - begin < 18) value = value * 10 + static_cast<uint64_t>(*p++ - '0');
    }
    if (p != end && (IsDigit(*p) || *p == '.' || *p == 'e' || *p == 'E')) return false;
    return number_unsigned(value);
  };
  // After an opening bracket: ws ( close | item ( ws ',' ws item )* ws close ).
  auto read_list = [&](char close, auto&& read_item) -> bool {
    skip_space();
    if (!at(close)) {
      for (;;) {
        if (!read_item()) return false;
        skip_space();
        if (!at(',')) break;
        ++p;
        skip_space();
      }
      if (!at(close)) return false;
    }
    ++p;
    return true;
  };
  auto read_value = [&]() -> bool {
    if (!at('[')) return read_scalar();
    ++p;
    start_array(static_cast<std::size_t>(-1));
    return read_list(']', read_scalar) && end_array();
  };
  auto read_member = [&]() -> bool {
    if (!read_string()) return false;
    key(token_);
    skip_space();
    if (!at(':')) return false;
    ++p;
    skip_space();
    return read_value();
  };

  skip_space();
  if (!at('{')) return false;
  ++p;
  start_object(static_cast<std::size_t>(-1));
  if (!read_list('}', read_member)) return false;
  end_object();
  skip_space();
  return p == end;
}

bool TraceLine::SameFieldsAs(const TraceLine& other) const {
  if (root_ != other.root_) return false;
  for (int k = 0; k < kKeys; ++k)
    if (!SameValue(values_[k], other.values_[k])) return false;
  return true;
}

bool TraceLine::number_integer(int64_t v) {
  if (JsonValue* to = Slot(JsonValue::Type::kInteger)) to->integer = v;
  return true;
}

bool TraceLine::number_unsigned(uint64_t v) {
  if (JsonValue* to = Slot(JsonValue::Type::kUnsigned)) to->unsigned_integer = v;
  return true;
}

bool TraceLine::string(std::string& v) {
  if (JsonValue* to = Slot(JsonValue::Type::kString)) to->text.swap(v);
  return true;
}

bool TraceLine::start_object(std::size_t) {
  Slot(JsonValue::Type::kObject);
  ++depth_;
  return true;
}

bool TraceLine::end_object() {
  --depth_;
  return true;
}

bool TraceLine::key(std::string& k) {
  if (depth_ == 1) current_ = Find(k);
  return true;
}

bool TraceLine::start_array(std::size_t) {
  JsonValue* to = Slot(JsonValue::Type::kArray);
  if (depth_ == 1 && to) {
    to->elements.clear();
    array_ = to;
  }
  ++depth_;
  return true;
}

bool TraceLine::end_array() {
  if (--depth_ == 1) array_ = nullptr;
  return true;
}

// Where a value of type t read now goes (set to t), or null if nowhere: the
// root's type, a kept key's value, an element of a kept array.
JsonValue* TraceLine::Slot(JsonValue::Type t) {
  JsonValue* to = nullptr;
  if (depth_ == 0) {
    root_ = t;
  } else if (depth_ == 1) {
    to = current_;
    current_ = nullptr;
  } else if (depth_ == 2 && array_) {
    to = &array_->elements.emplace_back();
  }
  if (to) to->type = t;
  return to;
}

JsonValue* TraceLine::Find(std::string_view k) {
  for (int i = 0; i < kKeys; ++i)
    if (k == kKeyNames[i]) return &values_[i];
  return nullptr;
}

}  // namespace dtr
