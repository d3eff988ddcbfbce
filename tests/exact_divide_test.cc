// ExactDivide must equal Python's int / int: the correctly rounded double of
// the exact quotient, ties to even, also for denominators past 2^53. Checked
// against exact big-integer arithmetic on random and edge-case operands.
#include <doctest/doctest.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <random>

#include "checker/engine/exact_divide.h"

namespace dtr {
namespace {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

cpp_int Big(uint128 x) {
  cpp_int hi = static_cast<uint64_t>(x >> 64), lo = static_cast<uint64_t>(x);
  return (hi << 64) | lo;
}

cpp_rational Exact(double d) {
  int exp;
  double mant = std::frexp(d, &exp);
  cpp_rational r = cpp_int(static_cast<uint64_t>(std::ldexp(mant, 53)));
  exp -= 53;
  return exp >= 0 ? r * cpp_rational(cpp_int(1) << exp) : r / cpp_rational(cpp_int(1) << -exp);
}

bool EvenMantissa(double d) {
  int exp;
  return (static_cast<uint64_t>(std::ldexp(std::frexp(d, &exp), 53)) & 1) == 0;
}

// True iff q is the double nearest to num / den, ties to the even mantissa.
bool CorrectlyRounded(uint64_t num, uint128 den, double q) {
  cpp_rational x = cpp_rational(cpp_int(num)) / cpp_rational(Big(den));
  cpp_rational here = abs(x - Exact(q));
  for (double other : {std::nextafter(q, 0.0), std::nextafter(q, INFINITY)}) {
    cpp_rational there = abs(x - Exact(other));
    if (there < here || (there == here && !EvenMantissa(q))) return false;
  }
  return true;
}

TEST_CASE("ExactDivide is correctly rounded") {
  CHECK(ExactDivide(1, 3) == 1.0 / 3.0);
  CHECK(ExactDivide(0, 7) == 0.0);
  // 2^53 + 1 is not a double: dividing it by 1 must round to even (2^53).
  CHECK(ExactDivide((1ull << 53) + 1, 1) == 9007199254740992.0);
  CHECK(ExactDivide((1ull << 53) + 3, 1) == 9007199254740996.0);
  // A denominator past 2^53, where double(num) / double(den) would round twice.
  uint128 big = (static_cast<uint128>(1) << 70) + 12345;
  CHECK(CorrectlyRounded(1000000007, big, ExactDivide(1000000007, big)));
  std::mt19937_64 rng(20261129);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    int num_bits = 1 + static_cast<int>(rng() % 63), den_bits = 1 + static_cast<int>(rng() % 120);
    uint64_t num = rng() >> (64 - num_bits);
    uint128 den = (static_cast<uint128>(rng()) << 64 | rng()) >> (128 - den_bits);
    if (num == 0 || den == 0) continue;
    double q = ExactDivide(num, den);
    INFO("num ", num, " den bits ", den_bits);
    REQUIRE(CorrectlyRounded(num, den, q));
    ++checked;
  }
  CHECK(checked > 19000);
}

}  // namespace
}  // namespace dtr
