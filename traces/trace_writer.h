// Writes the DTR execution-log format (one JSON object per line, the format
// model/trace_parser.h reads) for synthetic traces. Names are "x0", "x1", ...
// in creation order; numbers are written as decimal strings, keys sorted, as
// the public logs write them.
//
// The writer only formats: it does not track references. Generators are
// responsible for releasing every name they no longer need (an unreleased
// name is pinned at the end of the replay, as simrd does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtr {

class TraceWriter {
 public:
  // One result of a CALL: its size in bytes, and the index of the argument it
  // aliases (-1 for a fresh storage; an aliasing result is written with its
  // size but the parser gives it size 0).
  struct Result {
    int64_t size = 0;
    int alias = -1;
  };

  TraceWriter();  // writes the START annotation

  // CONSTANT + MEMORY; the replay pins it at once. Returns its name.
  std::string Constant(int64_t size);
  // CALL + (MEMORY, ALIAS) per result. Returns the result names in order.
  std::vector<std::string> Call(std::string_view op, const std::vector<std::string>& args,
                                const std::vector<Result>& results, int64_t time);
  // A CALL with one fresh result.
  std::string Call1(std::string_view op, const std::vector<std::string>& args, int64_t size,
                    int64_t time);
  void Release(const std::string& name);
  void Annotate(std::string_view annotation);  // e.g. "BACKWARD"

  const std::string& text() const { return text_; }
  std::string Take() { return std::move(text_); }

 private:
  std::string NewName();
  // Adds to the trace's sums; throws Error past what a trace may hold
  // (kMaxTraceSum), so that no generated trace is one the parser refuses.
  void Count(int64_t size, int64_t time);

  std::string text_;
  int64_t size_sum_ = 0, time_sum_ = 0;
  int64_t next_name_ = 0;
};

}  // namespace dtr
