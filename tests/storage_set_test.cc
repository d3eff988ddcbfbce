// StorageSet against std::set under random insertions and deletions, with
// ids clustered (the dense form) and spread (the sparse form), crossing
// between the two forms many times; and sets of long runs (the runs form).
#include "checker/engine/storage_set.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
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

TEST_CASE("StorageSet keeps up to three members in place, and a table past them") {
  using Form = StorageSet::Form;
  StorageSet set;
  CHECK(set.insert(500'000));
  CHECK(set.form() == Form::kSmall);
  CHECK_FALSE(set.insert(500'000));
  CHECK(set.insert(9));
  CHECK(set.insert(70'000));
  CHECK(set.form() == Form::kSmall);
  std::vector<StorageId> seen;
  set.ForEach([&](StorageId s) { seen.push_back(s); });
  CHECK(seen == std::vector<StorageId>{500'000, 9, 70'000});  // insertion order
  CHECK(set.erase(500'000));
  CHECK_FALSE(set.erase(500'000));
  CHECK_FALSE(set.contains(500'000));
  ExpectEqual(set, {9, 70'000});
  // A copy is its own set; the original keeps its members.
  StorageSet copy(set);
  CHECK(copy.erase(9));
  ExpectEqual(set, {9, 70'000});
  ExpectEqual(copy, {70'000});
  StorageSet moved(std::move(copy));
  ExpectEqual(moved, {70'000});
  // A reserve() for a few more keeps it in place; the fourth member makes a table.
  set.reserve(5);
  CHECK(set.form() == Form::kSmall);
  CHECK(set.insert(1));
  CHECK(set.form() == Form::kSmall);
  ExpectEqual(set, {1, 9, 70'000});
  CHECK(set.insert(300'000));
  CHECK(set.form() == Form::kTable);
  ExpectEqual(set, {1, 9, 70'000, 300'000});
  // A union past three members: the new ones named once, the form a table.
  StorageSet a, b;
  a.assign(std::vector<StorageId>{10, 100'000, 900'000});
  b.assign(std::vector<StorageId>{100'000, 42, 7'000});
  CHECK(a.form() == Form::kSmall);
  std::vector<StorageId> added;
  a.ReserveFor(b);
  a.UnionWith(b, [&](StorageId s) { added.push_back(s); });
  std::sort(added.begin(), added.end());
  CHECK(added == std::vector<StorageId>{42, 7'000});
  CHECK(a.form() == Form::kTable);
  ExpectEqual(a, {10, 42, 7'000, 100'000, 900'000});
  // Close members are a bitmap, as before; clear() leaves an empty table.
  a.assign(std::vector<StorageId>{64, 65});
  CHECK(a.form() == Form::kBitmap);
  a.clear();
  CHECK(a.form() == Form::kTable);
  CHECK(a.empty());
}

TEST_CASE("StorageSet small sets against std::set, through unions past three members") {
  std::mt19937 rng(7);
  int small_ops = 0, table_ops = 0;
  for (int round = 0; round < 200; ++round) {
    StorageSet set, other;
    std::set<StorageId> model, other_model;
    for (int op = 0; op < 60; ++op) {
      const StorageId s = static_cast<StorageId>(rng() % 2'000'000);  // spread: never dense
      const StorageId m =
          model.empty() ? s : *std::next(model.begin(), static_cast<long>(rng() % model.size()));
      switch (rng() % 6) {
        case 0:
        case 1:
          CHECK(set.insert(s) == model.insert(s).second);
          break;
        case 2:
          CHECK(set.erase(m) == (model.erase(m) == 1));
          break;
        case 3:
          CHECK(set.contains(m) == (model.count(m) == 1));
          break;
        case 4:
          if (rng() % 2) {
            other.insert(s);
            other_model.insert(s);
          } else {
            other.insert(m);
            other_model.insert(m);
          }
          break;
        default: {
          std::set<StorageId> added;
          set.ReserveFor(other);
          set.UnionWith(other, [&](StorageId x) { CHECK(added.insert(x).second); });
          for (StorageId x : other_model)
            CHECK(added.count(x) == (model.insert(x).second ? 1u : 0u));
          other = StorageSet(set);  // a copy, then shrunk back to two
          other_model = model;
          while (other_model.size() > 2) {
            CHECK(other.erase(*other_model.begin()));
            other_model.erase(other_model.begin());
          }
        }
      }
      ++(set.form() == StorageSet::Form::kSmall ? small_ops : table_ops);
      ExpectEqual(set, model);
      ExpectEqual(other, other_model);
    }
  }
  CHECK(small_ops > 1'000);
  CHECK(table_ops > 1'000);
}

TEST_CASE("StorageSet copies and moves are sets of their own, in either form") {
  for (const int width : {200, 1'000'000}) {  // a bitmap, a hash table
    std::mt19937 rng(width);
    StorageSet set;
    std::set<StorageId> model;
    for (int i = 0; i < 300; ++i) {
      const StorageId s = 5'000 + static_cast<StorageId>(rng() % width);
      set.insert(s);
      model.insert(s);
    }
    CHECK(set.dense() == (width == 200));
    StorageSet copy(set);
    ExpectEqual(copy, model);
    CHECK(copy.dense() == set.dense());
    // Changing the copy leaves the original as it was, and the other way round.
    CHECK(copy.insert(3));
    CHECK(copy.erase(*model.begin()));
    ExpectEqual(set, model);
    CHECK(set.insert(4));
    CHECK_FALSE(copy.contains(4));
    CHECK(set.erase(4));
    StorageSet assigned;
    assigned.insert(77);
    assigned = set;
    ExpectEqual(assigned, model);
    assigned = StorageSet();
    CHECK(assigned.empty());
    CHECK_FALSE(assigned.contains(*model.begin()));
    StorageSet moved(std::move(set));
    ExpectEqual(moved, model);
    CHECK(set.empty());    // NOLINT(bugprone-use-after-move): a moved-from set is empty
    CHECK(set.insert(9));  // and usable
    CHECK(set.size() == 1);
    StorageSet target;
    target = std::move(moved);
    ExpectEqual(target, model);
    StorageSet empty_copy(StorageSet{});
    CHECK(empty_copy.empty());
    CHECK(empty_copy.insert(1));
  }
}

// ReserveFor() before taking in another set (as Absorb does): the members
// stay, the union comes out right, and a small set taking in a large dense
// one becomes dense rather than a large hash table.
TEST_CASE("StorageSet::ReserveFor keeps the members and makes room for another set") {
  std::mt19937 rng(34);
  size_t to_dense = 0, widened = 0, kept_sparse = 0;
  auto fill = [&](StorageSet& set, std::set<StorageId>& model, int count, int start, int width) {
    for (int i = 0; i < count; ++i) {
      const StorageId s = start + static_cast<StorageId>(rng() % width);
      set.insert(s);
      model.insert(s);
    }
  };
  for (int round = 0; round < 400; ++round) {
    StorageSet a, b;
    std::set<StorageId> ma, mb;
    const int widths[] = {64, 700, 5'000, 1'000'000};
    fill(a, ma, static_cast<int>(rng() % 40), static_cast<int>(rng() % 50'000), widths[rng() % 4]);
    fill(b, mb, static_cast<int>(rng() % 3'000), static_cast<int>(rng() % 50'000), widths[rng() % 4]);
    const bool was_dense = a.dense();
    a.ReserveFor(b);
    ExpectEqual(a, ma);
    if (!was_dense && a.dense()) ++to_dense;
    if (was_dense && b.dense()) ++widened;
    if (!was_dense && !a.dense()) ++kept_sparse;
    b.ForEach([&](StorageId s) { CHECK(a.insert(s) == ma.insert(s).second); });
    ExpectEqual(a, ma);
  }
  CHECK(to_dense > 20);  // each path was taken
  CHECK(widened > 5);
  CHECK(kept_sparse > 20);
}

// UnionWith() after ReserveFor(), as Absorb does: the union, and on_new
// called once for each member that was not there, by both of its paths.
TEST_CASE("StorageSet::UnionWith adds the other set's members and names the new ones") {
  std::mt19937 rng(56);
  size_t by_words = 0, by_members = 0;
  for (int round = 0; round < 400; ++round) {
    StorageSet a, b;
    std::set<StorageId> ma, mb;
    const int widths[] = {64, 700, 5'000, 1'000'000};
    const int start = static_cast<int>(rng() % 50'000);
    for (auto [set, model, count] : {std::tuple{&a, &ma, static_cast<int>(rng() % 3'000)},
                                     std::tuple{&b, &mb, static_cast<int>(rng() % 3'000)}}) {
      const int width = widths[rng() % 4];
      const int from = start + static_cast<int>(rng() % 2'000);
      for (int i = 0; i < count; ++i) {
        const StorageId s = from + static_cast<StorageId>(rng() % width);
        set->insert(s);
        model->insert(s);
      }
    }
    if (rng() % 2) a.ReserveFor(b);
    const bool words = a.BitmapCovers(b);
    std::set<StorageId> added;
    a.UnionWith(b, [&](StorageId s) { CHECK(added.insert(s).second); });
    std::set<StorageId> want_added;
    for (StorageId s : mb)
      if (!ma.count(s)) want_added.insert(s);
    CHECK(added == want_added);
    ma.insert(mb.begin(), mb.end());
    ExpectEqual(a, ma);
    ++(words ? by_words : by_members);
  }
  CHECK(by_words > 20);  // both paths were taken
  CHECK(by_members > 20);
}

// Members in long runs over a wide range (as a region of a long recurrent
// trace): `runs` runs of 100-3,000 ids, 40,000 to 80,000 ids apart.
void FillRuns(std::mt19937& rng, StorageSet& set, std::set<StorageId>& model, int runs) {
  for (int i = 0; i < runs; ++i) {
    const StorageId first = i * 60'000 + static_cast<StorageId>(rng() % 20'000);
    const StorageId length = 100 + static_cast<StorageId>(rng() % 2'900);
    for (StorageId s = first; s < first + length; ++s) {
      set.insert(s);
      model.insert(s);
    }
  }
}

TEST_CASE("StorageSet keeps long runs as runs, and leaves that form when they break up") {
  std::mt19937 rng(78);
  size_t runs_ops = 0, left = 0;
  for (int round = 0; round < 30; ++round) {
    StorageSet set;
    std::set<StorageId> model;
    FillRuns(rng, set, model, 2 + round % 5);
    CHECK(set.form() == StorageSet::Form::kRuns);
    ExpectEqual(set, model);
    // Random changes near the members: splits, joins, new runs, until the
    // runs are many and short.
    for (int op = 0; op < 6'000; ++op) {
      const StorageId near = *std::next(model.begin(), static_cast<long>(rng() % model.size()));
      const StorageId s = std::max<StorageId>(0, near + static_cast<StorageId>(rng() % 7) - 3);
      if (rng() % 2) {
        CHECK(set.insert(s) == model.insert(s).second);
      } else {
        CHECK(set.erase(s) == (model.erase(s) == 1));
      }
      CHECK(set.contains(s) == (model.count(s) == 1));
      CHECK(set.contains(s + 1) == (model.count(s + 1) == 1));
      if (set.form() == StorageSet::Form::kRuns) ++runs_ops;
      if (op % 500 == 0) ExpectEqual(set, model);
      if (model.size() < 10) break;
    }
    if (set.form() != StorageSet::Form::kRuns) ++left;
    ExpectEqual(set, model);
    StorageSet copy(set);  // a copy in any form is a set of its own
    ExpectEqual(copy, model);
    CHECK(copy.form() == set.form());
    // Emptied one member at a time, whatever the form on the way.
    for (StorageId m : model) CHECK(set.erase(m));
    CHECK(set.empty());
    CHECK_FALSE(set.contains(*model.begin()));
    ExpectEqual(copy, model);
  }
  CHECK(runs_ops > 10'000);
  CHECK(left > 5);  // fragmented sets went back to a bitmap or a table
}

// Unions and intersections where either set is runs, the other in any form,
// with few runs and with many.
TEST_CASE("StorageSet::UnionWith and ForEachCommon with runs on either side") {
  std::mt19937 rng(90);
  std::set<std::pair<StorageSet::Form, StorageSet::Form>> pairs;
  for (int round = 0; round < 300; ++round) {
    StorageSet a, b;
    std::set<StorageId> ma, mb;
    for (auto [set, model] : {std::pair{&a, &ma}, std::pair{&b, &mb}}) {
      switch (rng() % 4) {
        case 0:  // a few runs
          FillRuns(rng, *set, *model, 2 + static_cast<int>(rng() % 3));
          break;
        case 3:  // many runs (a union merges them rather than adding one by one)
          FillRuns(rng, *set, *model, 9 + static_cast<int>(rng() % 6));
          break;
        case 1:  // a bitmap: clustered ids
          for (int i = 0; i < 2'000; ++i) {
            const StorageId s = 50'000 + static_cast<StorageId>(rng() % 3'000);
            set->insert(s);
            model->insert(s);
          }
          break;
        default:  // a table: spread ids
          for (int i = 0; i < 300; ++i) {
            const StorageId s = static_cast<StorageId>(rng() % 250'000);
            set->insert(s);
            model->insert(s);
          }
      }
    }
    const auto forms = std::pair{a.form(), b.form()};
    if (forms.first != StorageSet::Form::kRuns && forms.second != StorageSet::Form::kRuns) continue;
    pairs.insert(forms);
    std::set<StorageId> common, want_common;
    a.ForEachCommon(b, [&](StorageId s) { CHECK(common.insert(s).second); });
    for (StorageId s : mb)
      if (ma.count(s)) want_common.insert(s);
    CHECK(common == want_common);
    if (rng() % 2) a.ReserveFor(b);
    ExpectEqual(a, ma);
    std::set<StorageId> added, want_added;
    a.UnionWith(b, [&](StorageId s) { CHECK(added.insert(s).second); });
    for (StorageId s : mb)
      if (!ma.count(s)) want_added.insert(s);
    CHECK(added == want_added);
    ma.insert(mb.begin(), mb.end());
    ExpectEqual(a, ma);
    ExpectEqual(b, mb);
  }
  CHECK(pairs.size() == 5);  // runs with each form, on each side
}

// Runs one id apart, filled by one long run (added in place) and by many
// short ones (merged): each one-id gap is a new member, the runs join.
TEST_CASE("StorageSet unions fill one-id gaps between runs") {
  for (const bool many : {false, true}) {
    StorageSet a, b;
    std::set<StorageId> ma, mb;
    for (StorageId i = 0; i < 10; ++i)
      for (StorageId s = i * 3'001; s < i * 3'001 + 3'000; ++s) {
        a.insert(s);
        ma.insert(s);
      }
    REQUIRE(a.form() == StorageSet::Form::kRuns);
    // b: 1,000..25,000 as one run, or as 12 runs over the same ids.
    for (StorageId s = 1'000; s <= 25'000; ++s)
      if (!many || s % 2'000 != 0) {
        b.insert(s);
        mb.insert(s);
      }
    REQUIRE(b.form() == StorageSet::Form::kRuns);
    std::set<StorageId> added, want_added;
    a.UnionWith(b, [&](StorageId s) { CHECK(added.insert(s).second); });
    for (StorageId s : mb)
      if (!ma.count(s)) want_added.insert(s);
    CHECK(want_added.size() == 8);  // 3,000, 6,001, ... 24,007
    CHECK(added == want_added);
    ma.insert(mb.begin(), mb.end());
    ExpectEqual(a, ma);
    CHECK(a.contains(24'007));
    CHECK_FALSE(a.contains(27'008));
  }
}

// Wide bitmaps are kept in blocks that sets share copy on write (copies,
// unions, BlockSharing): a change to one set never shows in another, and
// equal blocks of different sets become one.
TEST_CASE("StorageSet keeps wide bitmaps in shared blocks, copy on write") {
  std::mt19937 rng(31);
  auto id = [&](int width) { return 100'000 + static_cast<StorageId>(rng() % width); };
  for (int round = 0; round < 30; ++round) {
    // Sets 0-2 hold the same members, inserted one by one into each; 3-5
    // their own. All over 60,000 ids (938 words), a third to a half full.
    std::vector<StorageSet> sets(6);
    std::vector<std::set<StorageId>> models(6);
    for (int i = 0; i < 30'000; ++i) models[0].insert(id(60'000));
    models[1] = models[2] = models[0];
    for (size_t k = 3; k < 6; ++k)
      for (int i = 0; i < 20'000; ++i) models[k].insert(id(60'000));
    for (size_t k = 0; k < 6; ++k) {
      std::vector<StorageId> order(models[k].begin(), models[k].end());
      std::shuffle(order.begin(), order.end(), rng);
      for (StorageId s : order) CHECK(sets[k].insert(s));
      REQUIRE(sets[k].form() == StorageSet::Form::kBlocks);
      ExpectEqual(sets[k], models[k]);
    }
    std::set<StorageId> blocks_of_0;
    for (StorageId s : models[0]) blocks_of_0.insert(s / 1'024);
    BlockSharing sharing;
    for (StorageSet& set : sets) sharing.Add(set);
    // Sets 1 and 2 now hold set 0's blocks; the others' blocks differ.
    CHECK(sharing.distinct() == sharing.references() - 2 * blocks_of_0.size());
    // Copies share every block.
    std::vector<StorageSet> copies(sets);
    const std::vector<std::set<StorageId>> before(models);
    for (int op = 0; op < 6'000; ++op) {
      const size_t k = rng() % 6;
      const StorageId s = id(62'000);  // the range may widen
      if (rng() % 2)
        CHECK(sets[k].insert(s) == models[k].insert(s).second);
      else
        CHECK(sets[k].erase(s) == (models[k].erase(s) == 1));
      CHECK(sets[k].contains(s) == (models[k].count(s) == 1));
    }
    for (size_t k = 0; k < 6; ++k) ExpectEqual(sets[k], models[k]);
    for (size_t k = 0; k < 6; ++k) ExpectEqual(copies[k], before[k]);  // as they were
    // A union shares the blocks it lacks or holds a subset of: then the
    // source changes, and the union does not.
    StorageSet& a = copies[3];
    std::set<StorageId> ma;
    a.ForEach([&](StorageId s) { ma.insert(s); });
    const StorageSet& b = sets[static_cast<size_t>(rng() % 6)];
    std::set<StorageId> mb;
    b.ForEach([&](StorageId s) { mb.insert(s); });
    a.ReserveFor(b);
    std::set<StorageId> added, want_added, common, want_common;
    a.ForEachCommon(b, [&](StorageId s) { CHECK(common.insert(s).second); });
    for (StorageId s : mb) (ma.count(s) ? want_common : want_added).insert(s);
    CHECK(common == want_common);
    a.UnionWith(b, [&](StorageId s) { CHECK(added.insert(s).second); });
    CHECK(added == want_added);
    ma.insert(mb.begin(), mb.end());
    ExpectEqual(a, ma);
    StorageSet c(b);
    for (StorageId s : mb) c.erase(s);
    CHECK(c.empty());
    ExpectEqual(a, ma);
    ExpectEqual(b, mb);
  }
}

// BlockSharing keeps one block of each content across passes: a later pass
// looks at only the blocks made or changed since (a set left alone is not
// looked at again), shares them with kept equal ones, never lets a kept
// block change in place, and Prune() lets go of those no set holds.
TEST_CASE("BlockSharing passes look at what changed since, and kept blocks never change") {
  std::mt19937 rng(11);
  std::set<StorageId> model;
  for (int i = 0; i < 20'000; ++i) model.insert(static_cast<StorageId>(rng() % 50'000));
  auto make = [&](const std::set<StorageId>& members) {
    StorageSet set;
    for (StorageId s : members) set.insert(s);
    REQUIRE(set.form() == StorageSet::Form::kBlocks);
    return set;
  };
  size_t blocks = 0;  // of the model: ids 0-49,999, all non-empty
  for (StorageId b = 0; b < 50'000; b += StorageSet::kBlockIds) blocks += 1;
  BlockSharing sharing;
  StorageSet a = make(model);
  sharing.Add(a);
  CHECK(sharing.references() == blocks);
  CHECK(sharing.distinct() == blocks);
  sharing.Add(a);  // nothing changed since: nothing looked at
  CHECK(sharing.references() == blocks);
  // b's blocks are all equal to a's kept ones: shared, none kept anew.
  StorageSet b = make(model);
  sharing.Add(b);
  CHECK(sharing.references() == 2 * blocks);
  CHECK(sharing.distinct() == blocks);
  // A change to a copies its block (the kept one holds the old contents):
  // the next pass looks at that block alone and keeps it.
  const StorageId added = 3 * StorageSet::kBlockIds + 5;
  REQUIRE(!model.count(added));
  CHECK(a.insert(added));
  sharing.Add(a);
  sharing.Add(b);
  CHECK(sharing.references() == 2 * blocks + 1);
  CHECK(sharing.distinct() == blocks + 1);
  std::set<StorageId> with_added = model;
  with_added.insert(added);
  ExpectEqual(a, with_added);
  ExpectEqual(b, model);
  // A set made again with the model's members finds every block kept
  // unchanged (had the kept block changed in place, one would be new).
  StorageSet c = make(model);
  sharing.Add(c);
  CHECK(sharing.distinct() == blocks + 1);
  ExpectEqual(c, model);
  // With b and c gone, the old block 3 is held by nothing but the sharing.
  b = StorageSet();
  c = StorageSet();
  sharing.Prune();
  CHECK(sharing.distinct() == blocks);
  a = StorageSet();
  sharing.Prune();
  CHECK(sharing.distinct() == 0);
  // A copy of the sharing keeps the same blocks: a set made after the
  // original is gone still finds them.
  StorageSet d = make(model);
  sharing.Add(d);
  BlockSharing copy(sharing);
  sharing = BlockSharing();
  d = StorageSet();
  StorageSet e = make(model);
  const size_t looked = copy.references();
  copy.Add(e);
  CHECK(copy.references() == looked + blocks);
  CHECK(copy.distinct() == blocks);
  ExpectEqual(e, model);
}

// Blocks live in an arena whose numbers a thread reuses once freed; a
// thread that ends leaves its freed blocks and the rest of its chunk to the
// next. Sets made on many short threads, some released there and some on
// this one, keep their members, and the arena stops growing.
TEST_CASE("StorageSet blocks freed on ended threads are made again, members intact") {
  std::mt19937 rng(5);
  std::vector<StorageId> members;
  for (int i = 0; i < 40'000; ++i) members.push_back(static_cast<StorageId>(rng() % 200'000));
  std::set<StorageId> model(members.begin(), members.end());
  size_t after_first = 0;
  for (int round = 0; round < 12; ++round) {
    std::vector<StorageSet> kept;
    std::thread worker([&] {
      std::vector<StorageSet> sets(8);
      for (StorageSet& set : sets) {
        for (StorageId s : members) set.insert(s);
        CHECK(set.form() == StorageSet::Form::kBlocks);
      }
      sets[1].erase(members[0]);  // a block of its own, copied from a shared one
      kept.push_back(sets[0]);    // shares its blocks with this thread
      kept.push_back(std::move(sets[2]));
    });  // sets 1 and 3-7 released on the worker, before it ends
    worker.join();
    for (const StorageSet& set : kept) ExpectEqual(set, model);
    kept.clear();  // released on this thread
    if (round == 0) after_first = StorageSet::arena_blocks();
  }
  // Each round makes 8 x 196 blocks; twelve rounds without reuse would take
  // more than a chunk beyond the first round's.
  CHECK(StorageSet::arena_blocks() <= after_first + StorageSet::kArenaChunk);
}

// StorageQueue against std::set, both orders, with pushes of queued ids
// (no effect) and pushes in between pops, ids spread over many words.
TEST_CASE("StorageQueue takes ids out in order, each once however often pushed") {
  std::mt19937_64 rng(7);
  for (const bool descending : {false, true}) {
    StorageQueue queue;
    queue.Init(5000);
    std::set<StorageId> model;
    size_t pops = 0;
    for (int round = 0; round < 2000; ++round) {
      const int pushes = static_cast<int>(rng() % 8);
      for (int i = 0; i < pushes; ++i) {
        // Only ids after the last popped one (before, descending), as Shrink() pushes.
        StorageId s = static_cast<StorageId>(rng() % 5000);
        if (!model.empty())
          s = descending ? std::min(s, *model.rbegin()) : std::max(s, *model.begin());
        queue.push(s, descending);
        queue.push(s, descending);
        model.insert(s);
      }
      const int take = static_cast<int>(rng() % 8);
      for (int i = 0; i < take && !model.empty(); ++i) {
        REQUIRE_FALSE(queue.empty());
        const StorageId want = descending ? *model.rbegin() : *model.begin();
        REQUIRE(queue.pop(descending) == want);
        model.erase(want);
        ++pops;
      }
      REQUIRE(queue.empty() == model.empty());
    }
    CHECK(pops > 1000);
  }
}

}  // namespace
}  // namespace dtr::testing
