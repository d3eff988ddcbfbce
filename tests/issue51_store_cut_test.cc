// Issue 51, item 6: a partial cut bound in the certificate store
// (diagnose/certificate_store.h) must not weaken prove's verdict at a higher
// budget (diagnose/oom_classification.cc). The comment says what happened
// before.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checker/cut_bound.h"
#include "checker/memory_bound.h"
#include "diagnose/certificate_records.h"
#include "diagnose/certificate_store.h"
#include "diagnose/oom_classification.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

// A fresh folder, removed at the end.
struct Folder {
  fs::path path;
  explicit Folder(const std::string& name) : path(TempPath(name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

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
