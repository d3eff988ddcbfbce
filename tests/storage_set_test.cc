// StorageSet against std::set under random insertions and deletions, with
// ids clustered (the dense form) and spread (the sparse form), crossing
// between the two forms many times.
#include "checker/storage_set.h"

#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

namespace dtr::testing {
namespace {

void ExpectEqual(const StorageSet& set, const std::set<StorageId>& model) {
  REQUIRE(set.size() == model.size());
  std::vector<StorageId> seen;
  set.ForEach([&](StorageId s) { seen.push_back(s); });
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<StorageId>(model.begin(), model.end()));
}

TEST_CASE("StorageSet holds what std::set holds in both of its forms") {
  std::mt19937 rng(12);
  size_t dense_ops = 0, sparse_ops = 0;
  for (int round = 0; round < 40; ++round) {
    StorageSet set;
    std::set<StorageId> model;
    // Ids from a window that moves and changes width: narrow windows fill
    // bitmaps, wide ones force the hash form.
    const int width = round % 4 == 0 ? 1'000'000 : 64 << (round % 7);
    int start = static_cast<int>(rng() % 100'000);
    for (int op = 0; op < 4000; ++op) {
      if (op % 500 == 0) start = static_cast<int>(rng() % 100'000);
      const StorageId s = start + static_cast<StorageId>(rng() % width);
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 6) {
        CHECK(set.insert(s) == model.insert(s).second);
      } else if (kind < 9) {
        CHECK(set.erase(s) == (model.erase(s) == 1));
      } else if (!model.empty()) {  // erase a member
        const StorageId m = *std::next(model.begin(), static_cast<long>(rng() % model.size()));
        CHECK(set.erase(m));
        model.erase(m);
      }
      CHECK(set.contains(s) == (model.count(s) == 1));
      ++(set.dense() ? dense_ops : sparse_ops);
      if (op % 97 == 0) ExpectEqual(set, model);
    }
    ExpectEqual(set, model);
    std::vector<StorageId> members(model.begin(), model.end());
    std::shuffle(members.begin(), members.end(), rng);
    StorageSet copy;
    copy.assign(members);
    ExpectEqual(copy, model);
    for (StorageId s : members) CHECK(copy.erase(s));
    CHECK(copy.empty());
  }
  CHECK(dense_ops > 10'000);  // both forms were exercised
  CHECK(sparse_ops > 10'000);
}

}  // namespace
}  // namespace dtr::testing
