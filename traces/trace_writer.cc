#include "traces/trace_writer.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include "model/error.h"
#include "model/trace.h"

namespace dtr {

namespace {

std::string NameList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += fmt::format("{}\"{}\"", i ? "," : "", names[i]);
  return out + "]";
}

}  // namespace

TraceWriter::TraceWriter() { Annotate("START"); }

std::string TraceWriter::NewName() { return fmt::format("x{}", next_name_++); }

void TraceWriter::Count(int64_t size, int64_t time) {
  if (size > kMaxTraceSum - size_sum_)
    throw Error("the generated trace's sizes would sum to more than 2^62 bytes, more than a trace may hold "
                "(docs/trace_format.md): give smaller sizes or fewer layers");
  if (time > kMaxTraceSum - time_sum_)
    throw Error("the generated trace's compute would sum to more than 2^62, more than a trace may hold "
                "(docs/trace_format.md): give a smaller compute or fewer layers");
  size_sum_ += size;
  time_sum_ += time;
}

std::string TraceWriter::Constant(int64_t size) {
  Count(size, 0);
  std::string name = NewName();
  text_ += fmt::format("{{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"{}\"}}\n", name);
  text_ +=
      fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n", size, name);
  return name;
}

std::vector<std::string> TraceWriter::Call(std::string_view op,
                                           const std::vector<std::string>& args,
                                           const std::vector<Result>& results, int64_t time) {
  std::vector<std::string> names;
  Count(0, time);
  for (const Result& r : results) Count(r.alias == -1 ? r.size : 0, 0);
  for (size_t i = 0; i < results.size(); ++i) names.push_back(NewName());
  text_ += fmt::format(
      "{{\"ARGS\":{},\"INSTRUCTION\":\"CALL\",\"NAME\":\"{}\",\"RESULT\":{},\"TIME\":\"{}\"}}\n",
      NameList(args), op, NameList(names), time);
  for (size_t i = 0; i < results.size(); ++i) {
    text_ += fmt::format("{{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"{}\",\"NAME\":\"{}\"}}\n",
                         results[i].size, names[i]);
    text_ += fmt::format("{{\"ALIAS\":\"{}\",\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"{}\"}}\n",
                         results[i].alias, names[i]);
  }
  return names;
}

std::string TraceWriter::Call1(std::string_view op, const std::vector<std::string>& args,
                               int64_t size, int64_t time) {
  return Call(op, args, {{size, -1}}, time)[0];
}

void TraceWriter::Release(const std::string& name) {
  text_ += fmt::format("{{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"{}\"}}\n", name);
}

void TraceWriter::Annotate(std::string_view annotation) {
  text_ += fmt::format("{{\"ANNOTATION\":\"{}\",\"INSTRUCTION\":\"ANNOTATE\"}}\n", annotation);
}

}  // namespace dtr
