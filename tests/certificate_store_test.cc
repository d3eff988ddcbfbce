// The certificate store: round trip, refusal of another trace's file, keeping
// the better certificates, atomic writes; and prove answering from a store
// on a tiny trace, with the stored script checked again and a tampered store
// falling back to the search.
#include "diagnose/certificate_store.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checker/proofs/cut_bound.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/memory_bound.h"
#include "checker/proofs/schedule_checker.h"
#include "diagnose/oom_classification.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary directory, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("dtrcheck-store-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static inline int counter = 0;
};

// A trace written to a file (the store digests the file's bytes): a random
// tiny one, or given text.
struct TraceFile {
  std::string path;
  Trace trace;
  Baseline baseline;
  TraceFile(const TempDir& dir, uint64_t seed, int storages = 7)
      : TraceFile(dir, "trace-" + std::to_string(seed), RandomTraceText(seed, [&] {
                    RandomTraceOptions o;
                    o.storages = storages;
                    o.constants = 1;
                    return o;
                  }())) {}
  TraceFile(const TempDir& dir, const std::string& name, const std::string& text) {
    path = (dir.path / (name + ".log")).string();
    std::ofstream(path) << text;
    trace = LoadTrace(path);
    baseline = ComputeBaseline(trace);
  }
};

// The exhaustive optimum and a script that passes there.
StoredSchedule OptimalSchedule(const Trace& trace, int64_t* optimum) {
  *optimum = SmallestFeasibleBudget(trace);
  REQUIRE(*optimum > 0);
  ExhaustiveOptions o;
  o.budget = *optimum;
  ExhaustiveResult r = SearchAllSchedules(trace, o);
  REQUIRE(r.verdict == SearchVerdict::kFeasible);
  StoredSchedule s;
  s.peak = *optimum;
  s.source = "exhaustive search";
  s.found_by = "test";
  s.script = r.script;
  return s;
}

TEST_CASE("certificate store: a schedule and a bound survive a round trip") {
  TempDir dir;
  TraceFile tf(dir, 11);
  int64_t optimum = 0;
  StoredSchedule s = OptimalSchedule(tf.trace, &optimum);
  CertificateStore store(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
  CHECK(store.Find(RuntimeKind::kV2EagerOptimized) == nullptr);
  CHECK(store.OfferSchedule(RuntimeKind::kV2EagerOptimized, s));
  StoredBound b;
  b.bytes = optimum - 1;
  b.argument = BoundArgument::kWindow;
  b.window = {1, 2};
  b.description = "made up for the test";
  CHECK(store.OfferBound(RuntimeKind::kV2EagerOptimized, b));
  store.Save();
  CHECK(fs::path(store.path()).filename() == store.digest() + ".json");

  CertificateStore again(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
  const RuntimeCertificates* c = again.Find(RuntimeKind::kV2EagerOptimized);
  REQUIRE(c);
  REQUIRE(c->schedule);
  CHECK(c->schedule->peak == optimum);
  CHECK(c->schedule->script.entries.size() == s.script.entries.size());
  for (size_t i = 0; i < s.script.entries.size(); ++i) {
    CHECK(c->schedule->script.entries[i].event == s.script.entries[i].event);
    CHECK(c->schedule->script.entries[i].storage == s.script.entries[i].storage);
  }
  REQUIRE(c->bound);
  CHECK(c->bound->bytes == optimum - 1);
  CHECK(c->bound->argument == BoundArgument::kWindow);
  CHECK(c->bound->window.first == 1);
  CHECK(c->bound->window.last == 2);
  CHECK(again.Find(RuntimeKind::kV2Optimized) == nullptr);
}

TEST_CASE("certificate store: keeps the lower schedule and the higher bound") {
  TempDir dir;
  TraceFile tf(dir, 12);
  int64_t optimum = 0;
  StoredSchedule s = OptimalSchedule(tf.trace, &optimum);
  CertificateStore store(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
  StoredSchedule worse = s;
  worse.peak = optimum + 10;
  CHECK(store.OfferSchedule(RuntimeKind::kV2EagerOptimized, worse));
  CHECK(store.OfferSchedule(RuntimeKind::kV2EagerOptimized, s));
  CHECK_FALSE(store.OfferSchedule(RuntimeKind::kV2EagerOptimized, worse));
  CHECK(store.Find(RuntimeKind::kV2EagerOptimized)->schedule->peak == optimum);
  StoredBound low, high;
  low.bytes = 5;
  high.bytes = 9;
  CHECK(store.OfferBound(RuntimeKind::kV2EagerOptimized, high));
  CHECK_FALSE(store.OfferBound(RuntimeKind::kV2EagerOptimized, low));
  CHECK(store.Find(RuntimeKind::kV2EagerOptimized)->bound->bytes == 9);
}

TEST_CASE("certificate store: at an equal peak, keeps the schedule with less compute") {
  TempDir dir;
  TraceFile tf(dir, 13);
  int64_t optimum = 0;
  StoredSchedule s = OptimalSchedule(tf.trace, &optimum);
  const int64_t clock = CheckSchedule(tf.trace, optimum, s.script).run.clock;
  const RuntimeKind rt = RuntimeKind::kV2EagerOptimized;
  StoredSchedule unknown = s, more = s, less = s;
  more.clock = clock + 5;
  more.description = "more";
  less.clock = clock;
  less.description = "less";
  {
    CertificateStore store(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
    CHECK(store.OfferSchedule(rt, unknown));
    CHECK(store.OfferSchedule(rt, more));  // a known clock beats an unknown one
    CHECK_FALSE(store.OfferSchedule(rt, unknown));
    CHECK(store.OfferSchedule(rt, less));
    CHECK_FALSE(store.OfferSchedule(rt, more));
    CHECK(store.Find(rt)->schedule->description == "less");
    store.Save();
  }
  // The clock survives the file, and a lower peak still wins whatever its clock.
  CertificateStore again(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
  REQUIRE(again.Find(rt));
  CHECK(again.Find(rt)->schedule->clock == clock);
  CHECK_FALSE(again.OfferSchedule(rt, more));
  StoredSchedule higher = more;
  higher.peak = optimum + 1;
  higher.clock = 0;
  CHECK_FALSE(again.OfferSchedule(rt, higher));
  // Two processes offer schedules at the same peak: the one saved last
  // merges with the file and keeps the one with less compute.
  StoredSchedule fewer = less, fewest = less;
  fewer.clock = clock - 1;  // (as if: the store takes the clock it is given)
  fewer.description = "fewer";
  fewest.clock = clock - 2;
  fewest.description = "fewest";
  CHECK(again.OfferSchedule(rt, fewest));
  {
    CertificateStore other(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
    CHECK(other.OfferSchedule(rt, fewer));
    other.Save();
  }
  again.Save();
  CertificateStore last(dir.path.string(), tf.path, tf.trace, tf.baseline.memory);
  CHECK(last.Find(rt)->schedule->description == "fewest");
}

TEST_CASE("certificate store: refuses the file of another trace with a clear error") {
  TempDir dir;
  TraceFile a(dir, 13), b(dir, 14);
  CertificateStore store(dir.path.string(), a.path, a.trace, a.baseline.memory);
  StoredBound bound;
  bound.bytes = 1;
  store.OfferBound(RuntimeKind::kV2EagerOptimized, bound);
  store.Save();
  // The directory holds one file per trace: b has none yet, so it starts empty.
  CertificateStore other(dir.path.string(), b.path, b.trace, b.baseline.memory);
  CHECK(other.Find(RuntimeKind::kV2EagerOptimized) == nullptr);
  // But a's file named directly is refused for b.
  try {
    CertificateStore wrong(store.path(), b.path, b.trace, b.baseline.memory);
    FAIL("another trace's certificate file was accepted");
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(m.find("belongs to another trace") != std::string::npos);
    CHECK(m.find(store.digest()) != std::string::npos);
  }
}

TEST_CASE("certificate store: a malformed file is an error naming it") {
  TempDir dir;
  TraceFile tf(dir, 15);
  const std::string path = (dir.path / "bad.json").string();
  std::ofstream(path) << "{\"format\": \"something else\"}";
  CHECK_THROWS_WITH_AS(CertificateStore(path, tf.path, tf.trace, tf.baseline.memory),
                       (path + ": not a certificate store file: \"format\" is not \"dtrcheck "
                               "certificate store\"")
                           .c_str(),
                       Error);
}

TEST_CASE("certificate store: Save replaces the file whole, leaving no temporary file") {
  TempDir dir;
  TraceFile tf(dir, 16);
  const fs::path sub = dir.path / "nested" / "store";
  CertificateStore store(sub.string(), tf.path, tf.trace, tf.baseline.memory);
  StoredBound b;
  b.bytes = 3;
  store.OfferBound(RuntimeKind::kV2EagerOptimized, b);
  store.Save();
  b.bytes = 4;
  store.OfferBound(RuntimeKind::kV2EagerOptimized, b);
  store.Save();
  int files = 0;
  for (const auto& e : fs::directory_iterator(sub)) {
    ++files;
    CHECK(e.path().extension() == ".json");
  }
  CHECK(files == 1);
  CertificateStore again(sub.string(), tf.path, tf.trace, tf.baseline.memory);
  CHECK(again.Find(RuntimeKind::kV2EagerOptimized)->bound->bytes == 4);
}

TEST_CASE("prove answers from the store, checks the stored script again, and falls back") {
  TempDir dir;
  // Small networks whose optimum lies above the static bound, so that a
  // budget just below it reaches the store; and a random tiny trace.
  std::vector<std::pair<std::string, std::string>> traces;
  ResNetOptions resnet;
  resnet.blocks = 1;
  resnet.size = resnet.inner_size = 10;
  traces.emplace_back("resnet", GenerateResNet(resnet));
  RnnOptions rnn;
  rnn.steps = 3;
  rnn.hidden_size = 10;
  rnn.input_size = 3;
  rnn.param_size = 2;
  traces.emplace_back("rnn", GenerateRnn(rnn));
  traces.emplace_back("random", RandomTraceText(21));
  int tampered_checked = 0;
  for (const auto& [name, text] : traces) {
    INFO(name);
    TraceFile tf(dir, name, text);
    int64_t optimum = 0;
    StoredSchedule s = OptimalSchedule(tf.trace, &optimum);
    RuntimeCertificates stored;
    stored.schedule = s;
    ClassifyOptions o;
    o.witness.use_z3 = false;
    o.windows = 0;
    o.stored = &stored;
    Classification at = ProveBudget(tf.trace, tf.baseline, optimum + 1, o);
    CHECK(at.verdict == Verdict::kFeasible);
    CHECK(at.from_store);
    REQUIRE(at.witness_search.witness);
    CHECK(at.witness_search.witness->source == "certificate store");
    CHECK(CheckSchedule(tf.trace, optimum + 1, at.witness_search.witness->script).passed());
    // Below the optimum nothing fits: the stored schedule is not used.
    Classification below = ProveBudget(tf.trace, tf.baseline, optimum - 1, o);
    CHECK_FALSE(below.from_store);
    CHECK(below.verdict != Verdict::kFeasible);
    // A tampered store claims a lower peak: the checker refuses the script
    // there, and prove says so and answers without it (unless the static
    // bound answers first).
    if (optimum - 1 < ComputeMemoryBound(tf.trace).bytes) continue;
    RuntimeCertificates tampered = stored;
    tampered.schedule->peak = optimum - 1;
    o.stored = &tampered;
    Classification t = ProveBudget(tf.trace, tf.baseline, optimum - 1, o);
    CHECK_FALSE(t.from_store);
    CHECK(t.verdict != Verdict::kFeasible);
    CHECK(t.store_notes.size() == 1);
    ++tampered_checked;
  }
  CHECK(tampered_checked >= 2);
}

TEST_CASE("prove answers below a stored cut bound by running the cut again there") {
  TempDir dir;
  ResNetOptions resnet;
  resnet.blocks = 1;
  resnet.size = resnet.inner_size = 10;
  TraceFile tf(dir, "resnet", GenerateResNet(resnet));
  MemoryBound stat = ComputeMemoryBound(tf.trace);
  CutBound cut = ComputeCutBound(tf.trace, stat, tf.baseline.memory, CutOptions{});
  REQUIRE(cut.bytes > stat.bytes);  // the trace is chosen for it
  RuntimeCertificates stored;
  stored.bound = StoredBound{cut.bytes, BoundArgument::kCut, {}, "", "test"};
  ClassifyOptions o;
  o.witness.use_z3 = false;
  o.windows = 0;
  o.stored = &stored;
  Classification c = ProveBudget(tf.trace, tf.baseline, cut.bytes - 1, o);
  CHECK(c.verdict == Verdict::kInherent);
  CHECK(c.from_store);
  REQUIRE(c.certificate);
  CHECK(c.certificate->kind == CertificateKind::kCut);
  CHECK(c.certificate->checked_by == CheckedBy::kCutArgument);
  CHECK(c.certificate->Holds());
  CHECK(c.certificate->cut->budget == cut.bytes - 1);
  // A stored bound above what the argument proves is not believed.
  stored.bound->bytes = tf.baseline.memory;
  Classification high = ProveBudget(tf.trace, tf.baseline, cut.bytes, o);
  CHECK(high.verdict != Verdict::kInherent);
  CHECK(high.store_notes.size() == 1);
}

}  // namespace
}  // namespace dtr::testing
