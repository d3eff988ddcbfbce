// Issue 51, items 5, 6, 10 and 11: the certificate store
// (diagnose/certificate_store.h) under two writers, with a partial cut bound,
// a tampered bound, and a store that cannot be read or written. The comment
// of each case says what happened before.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checker/proofs/cut_bound.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/memory_bound.h"
#include "diagnose/certificate_records.h"
#include "diagnose/certificate_store.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/oom_classification.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/shell_run.h"
#include "tests/test_paths.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

using Folder = ScratchFolder;

// A trace written to a file (the store digests its bytes), parsed.
struct TraceFile {
  std::string path;
  Trace trace;
  Baseline baseline;
  TraceFile(const Folder& dir, const std::string& name, const std::string& text)
      : path((dir.path / name).string()) {
    std::ofstream(path) << text;
    trace = LoadTrace(path);
    baseline = ComputeBaseline(trace);
  }
};

// The small residual network whose keep-or-recompute cut lies well above
// its static bound (tests/certificate_store_test.cc chose it for that).
std::string SmallResNet() {
  ResNetOptions resnet;
  resnet.blocks = 1;
  resnet.size = resnet.inner_size = 10;
  return GenerateResNet(resnet);
}

ClassifyOptions WithoutZ3(const RuntimeCertificates* stored) {
  ClassifyOptions o;
  o.witness.use_z3 = false;
  o.windows = 0;
  o.stored = stored;
  return o;
}

// Item 5: two `bounds --store S` at once: the later rename won, replacing the
// stored peak with a higher one and lowering the stored bound, against the
// rule "keeps the lower peak and the higher bound". Each writer now merges
// into the file as it is on disk when it saves.
TEST_CASE("issue 51: two writers of one store keep the lower schedule and the higher bound") {
  Folder dir("dtrcheck_issue51_store_writers");
  TraceFile tf(dir, "random.log", RandomTraceText(12, [] {
                 RandomTraceOptions o;
                 o.storages = 7;
                 o.constants = 1;
                 return o;
               }()));
  const int64_t optimum = SmallestFeasibleBudget(tf.trace);
  ExhaustiveOptions eo;
  eo.budget = optimum;
  ExhaustiveResult best = SearchAllSchedules(tf.trace, eo);
  REQUIRE(best.verdict == SearchVerdict::kFeasible);
  StoredSchedule low{optimum, "exhaustive search", "", "test", best.script};
  StoredSchedule high = low;
  high.peak = optimum + 10;
  const RuntimeKind rt = RuntimeKind::kV2EagerOptimized;
  const std::string store_dir = (dir.path / "S").string();
  // Both open the store before either saves.
  CertificateStore a(store_dir, tf.path, tf.trace, tf.baseline.memory);
  CertificateStore b(store_dir, tf.path, tf.trace, tf.baseline.memory);
  a.OfferSchedule(rt, low);
  a.OfferBound(rt, StoredBound{9, BoundArgument::kStatic, {}, "", "test"});
  b.OfferSchedule(rt, high);
  b.OfferBound(rt, StoredBound{5, BoundArgument::kStatic, {}, "", "test"});
  CHECK(a.Save());
  b.Save();  // its bound and schedule are worse: nothing of it survives
  CertificateStore after(store_dir, tf.path, tf.trace, tf.baseline.memory);
  const RuntimeCertificates* c = after.Find(rt);
  REQUIRE(c);
  REQUIRE(c->schedule);
  CHECK(c->schedule->peak == optimum);
  REQUIRE(c->bound);
  CHECK(c->bound->bytes == 9);
  // The other way round: the later writer adds its better bound, keeps the
  // better schedule on disk.
  CertificateStore d(store_dir, tf.path, tf.trace, tf.baseline.memory);
  CertificateStore e(store_dir, tf.path, tf.trace, tf.baseline.memory);
  d.OfferBound(rt, StoredBound{11, BoundArgument::kStatic, {}, "", "test"});
  CHECK(d.Save());
  e.OfferBound(rt, StoredBound{10, BoundArgument::kStatic, {}, "", "test"});
  CHECK_FALSE(e.Save());
  CertificateStore last(store_dir, tf.path, tf.trace, tf.baseline.memory);
  CHECK(last.Find(rt)->bound->bytes == 11);
  CHECK(last.Find(rt)->schedule->peak == optimum);
  // No lock file or temporary is left beside the store file.
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(store_dir)) {
    ++files;
    CHECK(entry.path().extension() == ".json");
  }
  CHECK(files == 1);
}

// Item 11: a tampered high bound in a store could never be replaced: the
// store keeps the higher bound, and the checks that found it wrong changed
// nothing. A stored bound whose argument does not refute a budget below it
// is dropped, by prove and explain when they check it, and by bounds when it
// lies above the bound bounds proved.
TEST_CASE("issue 51: a stored bound that does not hold is dropped from the store") {
  Folder dir("dtrcheck_issue51_store_tampered");
  TraceFile tf(dir, "resnet.log", SmallResNet());
  const MemoryBound stat = ComputeMemoryBound(tf.trace);
  const CutBound cut = ComputeCutBound(tf.trace, stat, tf.baseline.memory, CutOptions{});
  const RuntimeKind rt = RuntimeKind::kV2EagerOptimized;
  const std::string store_dir = (dir.path / "S").string();
  const StoredBound tampered{tf.baseline.memory, BoundArgument::kCut, {}, "tampered", "test"};
  {
    CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
    store.OfferBound(rt, tampered);
    store.Save();
  }
  {  // prove at the cut bound: the stored cut does not refute it there
    CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
    Classification c = ProveBudget(tf.trace, tf.baseline, cut.bytes, WithoutZ3(store.Find(rt)));
    CHECK(c.verdict != Verdict::kInherent);
    CHECK(c.stored_bound_refuted);
    CHECK(Contains(RecordClassification(store, tf.trace, rt, c, "prove"), "dropped the lower bound"));
    CHECK(store.Save());
  }
  {
    CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
    const RuntimeCertificates* c = store.Find(rt);
    CHECK((c == nullptr || !c->bound || c->bound->bytes <= cut.bytes));
  }
  // bounds: the tampered bound above its own is checked and replaced.
  {
    CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
    store.OfferBound(rt, tampered);
    store.Save();
  }
  CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
  BoundsOptions o;
  o.grid = "0.5:1:0.1";
  o.fine_step = "";
  o.jobs = 1;
  o.windows = 0;
  o.search_seconds = 0;
  o.plan_seconds = 0;
  BoundsReport r = ComputeBounds(tf.trace, tf.baseline, o);
  REQUIRE(r.proven_infeasible_below < tf.baseline.memory);
  RecordBounds(store, tf.trace, rt, r);
  store.Save();
  CertificateStore after(store_dir, tf.path, tf.trace, tf.baseline.memory);
  REQUIRE(after.Find(rt));
  REQUIRE(after.Find(rt)->bound);
  CHECK(after.Find(rt)->bound->bytes == r.proven_infeasible_below);
  // The schedule kept (prove's above, or bounds') carries its run's compute,
  // the checker's clock for its script.
  REQUIRE(after.Find(rt)->schedule);
  const StoredSchedule& kept = *after.Find(rt)->schedule;
  REQUIRE(kept.clock);
  CHECK(*kept.clock == CheckSchedule(tf.trace, kept.peak, kept.script, rt).run.clock);
}

// Item 10: store errors exited with status 2 ("usage") where docs/cli.md
// says 3, and a failed write named the temporary file without the system's
// reason. Every store error is bad input (InputError, exit status 3) naming
// the store file.
TEST_CASE("issue 51: store errors are input errors naming the store file and the reason") {
  Folder dir("dtrcheck_issue51_store_errors");
  TraceFile tf(dir, "resnet.log", SmallResNet());
  const RuntimeKind rt = RuntimeKind::kV2EagerOptimized;
  const std::string bad = (dir.path / "bad.json").string();
  std::ofstream(bad) << "{\"format\": \"something else\"}";
  try {
    CertificateStore store(bad, tf.path, tf.trace, tf.baseline.memory);
    FAIL("a malformed store was read");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInput);
    CHECK(Contains(e.what(), bad + ": not a certificate store file"));
  }
  // A store under /proc cannot be written, even by root.
  CertificateStore store("/proc/self", tf.path, tf.trace, tf.baseline.memory);
  store.OfferBound(rt, StoredBound{1, BoundArgument::kStatic, {}, "", "test"});
  try {
    store.Save();
    FAIL("a store under /proc was written");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInput);
    const std::string m = e.what();
    CHECK(m.rfind(store.path() + ": cannot write (", 0) == 0);
    CHECK(m.find(".tmp") == std::string::npos);
  }
}

// The CLI side of item 10: the finished answer is printed before the store
// is written; a store that cannot be written then ends the command with exit
// status 3 and one line naming the store file.
TEST_CASE("issue 51: prove prints its answer, then reports a store it cannot write (exit 3)") {
  Folder dir("dtrcheck_issue51_store_cli");
  auto run = [&](const std::string& args) {
    return RunShell("cd " + dir.path.string() + " && " + DTRCHECK_BINARY + " " + args, dir.path / ".stderr");
  };
  REQUIRE(run("gen demo -o demo.log").status == 0);
  ShellOutput alone = run("prove demo.log --ratio 0.5 --no-z3");
  REQUIRE(alone.status == 0);
  ShellOutput unwritable = run("prove demo.log --ratio 0.5 --no-z3 --store /proc/self");
  CHECK(unwritable.status == 3);
  CHECK(unwritable.out == alone.out);
  CHECK(Contains(unwritable.err, "dtrcheck: /proc/self/"));
  CHECK(Contains(unwritable.err, ".json: cannot write ("));
  std::ofstream(dir.path / "bad.json") << "not json";
  ShellOutput malformed = run("prove demo.log --ratio 0.5 --no-z3 --store bad.json");
  CHECK(malformed.status == 3);
  CHECK(Contains(malformed.err, "dtrcheck: bad.json: not a certificate store file: invalid JSON"));
}

// Item 6: `prove T --ratio 0.06 --store S` stored a cut bound (budget + 1),
// and then `prove T --ratio 0.09 --store S` skipped the cut because a stored
// cut bound lay at or below the budget, answering "undetermined" where the
// same command without the store proves "inherent". A store may only add
// answers: the same two commands give the verdicts they give without it.
TEST_CASE("issue 51: a partial cut bound in the store does not stop the cut at a higher budget") {
  Folder dir("dtrcheck_issue51_store_cut");
  TraceFile tf(dir, "resnet.log", SmallResNet());
  const MemoryBound stat = ComputeMemoryBound(tf.trace);
  const CutBound cut = ComputeCutBound(tf.trace, stat, tf.baseline.memory, CutOptions{});
  REQUIRE(cut.bytes >= stat.bytes + 2);  // room for two budgets the cut refutes
  const int64_t first = stat.bytes, second = cut.bytes - 1;
  const RuntimeKind rt = RuntimeKind::kV2EagerOptimized;
  for (int64_t budget : {first, second}) {
    INFO("budget ", budget);
    Classification alone = ProveBudget(tf.trace, tf.baseline, budget, WithoutZ3(nullptr));
    REQUIRE(alone.verdict == Verdict::kInherent);
  }
  const std::string store_dir = (dir.path / "S").string();
  {
    CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
    Classification c = ProveBudget(tf.trace, tf.baseline, first, WithoutZ3(store.Find(rt)));
    CHECK(c.verdict == Verdict::kInherent);
    CHECK_FALSE(RecordClassification(store, tf.trace, rt, c, "prove").empty());
    store.Save();
  }
  CertificateStore store(store_dir, tf.path, tf.trace, tf.baseline.memory);
  REQUIRE(store.Find(rt));
  REQUIRE(store.Find(rt)->bound);
  CHECK(store.Find(rt)->bound->bytes == first + 1);  // partial: the cut refutes more
  Classification c = ProveBudget(tf.trace, tf.baseline, second, WithoutZ3(store.Find(rt)));
  CHECK(c.verdict == Verdict::kInherent);
  REQUIRE(c.certificate);
  CHECK(c.certificate->kind == CertificateKind::kCut);
}

}  // namespace
}  // namespace dtr::testing
