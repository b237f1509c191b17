// Persistence landscapes, silhouettes and pointwise operations on piecewise
// linear functions (plf_tda.hpp, plf_pointwise.hpp), against independent
// references written plainly here: hand-worked breakpoints, and brute force
// (every tent evaluated at a time, sorted) compared through a plain linear
// interpolation of the results.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/errors.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/plf_builder.hpp"
#include "mpcf/core/plf_pointwise.hpp"
#include "mpcf/core/plf_tda.hpp"

using namespace mpcf;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Bar {
  double b, d;
};
using Barcode = std::vector<Bar>;

// ---- plain references ----

struct Pt {
  double t, v;
};
using Plf = std::vector<Pt>;

template <typename T>
Plf function_of(const PcfCollection<T>& c, std::size_t i) {
  Plf f;
  const PcfPoint<T>* p = c.data().data_of(i);
  for (std::uint64_t k = 0; k < c.data().size_of(i); ++k) {
    f.push_back(Pt{static_cast<double>(p[k].t), static_cast<double>(p[k].v)});
  }
  return f;
}

// f(t) by the definition: 0 before the first breakpoint, linear between,
// the last value after.
double eval_ref(const Plf& f, double t) {
  if (t < f[0].t) return 0.0;
  for (std::size_t k = 0; k + 1 < f.size(); ++k) {
    if (f[k].t <= t && t < f[k + 1].t) {
      return f[k].v + (f[k + 1].v - f[k].v) * (t - f[k].t) / (f[k + 1].t - f[k].t);
    }
  }
  return f.back().v;
}

double tent(const Bar& bar, double t) { return std::max(0.0, std::min(t - bar.b, bar.d - t)); }

// The j-th largest tent at t (j from 1), bars already clipped.
double landscape_ref(const Barcode& bars, std::size_t j, double t) {
  std::vector<double> tents;
  for (const Bar& bar : bars) tents.push_back(tent(bar, t));
  std::sort(tents.begin(), tents.end(), std::greater<double>());
  return j <= tents.size() ? tents[j - 1] : 0.0;
}

double silhouette_ref(const Barcode& bars, double q, double t) {
  long double num = 0, den = 0;
  for (const Bar& bar : bars) {
    if (!(bar.b < bar.d)) continue;
    const long double w = std::pow(static_cast<long double>(bar.d - bar.b), q);
    num += w * tent(bar, t);
    den += w;
  }
  return den == 0 ? 0.0 : static_cast<double>(num / den);
}

// ---- inputs ----

struct Csr {
  std::vector<std::uint64_t> off{0};
  std::vector<double> bars;
  void add(const Barcode& code) {
    for (const Bar& bar : code) {
      bars.push_back(bar.b);
      bars.push_back(bar.d);
    }
    off.push_back(bars.size() / 2);
  }
  std::uint64_t n() const { return off.size() - 1; }
};

Csr csr(std::initializer_list<Barcode> codes) {
  Csr c;
  for (const Barcode& code : codes) c.add(code);
  return c;
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> plfs(const std::vector<Plf>& fs) {
  std::vector<std::uint64_t> off{0};
  std::vector<T> t, v;
  for (const Plf& f : fs) {
    for (const Pt& p : f) {
      t.push_back(static_cast<T>(p.t));
      v.push_back(static_cast<T>(p.v));
    }
    off.push_back(t.size());
  }
  return std::make_shared<const PcfCollection<T>>(fs.size(), off.data(), t.data(), v.data(), 1);
}

// ---- checks ----

void expect_plf(const Plf& got, const Plf& want, const char* what) {
  bool same = got.size() == want.size();
  for (std::size_t k = 0; same && k < want.size(); ++k) {
    same = got[k].t == want[k].t && got[k].v == want[k].v;
  }
  if (same) return;
  std::string text;
  for (const Pt& p : got) text += "(" + std::to_string(p.t) + ", " + std::to_string(p.v) + ") ";
  fail_msg("%s: got %s", what, text.c_str());
}

template <typename T>
void expect_functions(const PcfCollection<T>& c, const std::vector<Plf>& want) {
  assert_int_equal(c.count(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::string what = "function " + std::to_string(i);
    expect_plf(function_of(c, i), want[i], what.c_str());
  }
}

// The canonical form of plf_builder.hpp.
template <typename T>
void expect_canonical(const PcfCollection<T>& c) {
  for (std::size_t i = 0; i < c.count(); ++i) {
    const Plf f = function_of(c, i);
    for (std::size_t k = 0; k < f.size(); ++k) {
      assert_false(std::signbit(f[k].v) && f[k].v == 0);                       // no -0
      if (k > 0) assert_true(f[k - 1].t < f[k].t);                              // increasing
      if (k > 0 && k + 1 < f.size()) {
        assert_false(f[k - 1].v == f[k].v && f[k].v == f[k + 1].v);           // no flat run
      }
    }
    if (f.size() == 1 && f[0].v == 0) assert_true(f[0].t == 0);                // (0, 0)
    if (f.size() >= 2) {
      assert_false(f[0].v == 0 && f[1].v == 0);                                // starts
      assert_true(f[f.size() - 1].v != f[f.size() - 2].v);                     // tail
    }
  }
}

void expect_close(double got, double want, double tol, const char* what, double t) {
  if (std::fabs(got - want) <= tol) return;
  fail_msg("%s at t = %.17g: got %.17g, want %.17g (tolerance %g)", what, t, got, want, tol);
}

// Runs f, which must throw InvalidArgument with every one of `parts` in its
// message.
void expect_invalid(const std::function<void()>& f, std::initializer_list<const char*> parts) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    for (const char* part : parts) {
      if (!std::strstr(e.what(), part)) fail_msg("message \"%s\" lacks \"%s\"", e.what(), part);
    }
    return;
  }
  fail_msg("%s", "no InvalidArgument");
}

// Every critical time a landscape or silhouette of `bars` can have, plus
// random times and times next to the critical ones.
std::vector<double> probe_times(const Barcode& bars, std::mt19937_64& rng) {
  std::vector<double> ts;
  double lo = 0, hi = 0;
  for (const Bar& x : bars) {
    lo = std::min(lo, x.b);
    hi = std::max(hi, x.d);
    ts.push_back(x.b);
    ts.push_back(x.d);
    for (const Bar& y : bars) ts.push_back((x.b + y.d) / 2);
  }
  const std::size_t critical = ts.size();
  for (std::size_t k = 0; k < critical; k += 7) {
    ts.push_back(std::nextafter(ts[k], kInf));
    ts.push_back(ts[k] - 1e-7);
  }
  std::uniform_real_distribution<double> u(lo - 1, hi + 1);
  for (int k = 0; k < 300; ++k) ts.push_back(u(rng));
  ts.push_back(-kInf);
  ts.push_back(kInf);
  return ts;
}

// Random barcodes of `count` bars: continuous end points, or integer ones
// (many ties), with some duplicated bars.
Barcode random_barcode(std::mt19937_64& rng, std::size_t count, bool integers) {
  std::uniform_real_distribution<double> u(0, 10), len(0, 4);
  std::uniform_int_distribution<int> ui(0, 8), li(0, 4);
  Barcode bars;
  for (std::size_t k = 0; k < count; ++k) {
    if (k > 0 && rng() % 8 == 0) {
      bars.push_back(bars[rng() % bars.size()]);  // a duplicate
    } else if (integers) {
      const double b = ui(rng);
      bars.push_back(Bar{b, b + li(rng)});
    } else {
      const double b = u(rng);
      bars.push_back(Bar{b, b + len(rng)});
    }
  }
  return bars;
}

}  // namespace

// ---- the canonical form ----

static void test_plf_builder(void**) {
  PlfBuilder<double> b;
  // Leading zeros keep their last point; a flat run its ends; a repeated
  // last value goes; -0 becomes +0.
  for (const Pt& p : Plf{{-2, 0}, {-1, -0.0}, {0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 0}, {6, 2}, {7, 2}}) {
    assert_true(b.add(p.t, p.v));
  }
  b.end_function();
  // Nothing, only zeros, a constant: (0, 0), (0, 0), one point.
  b.end_function();
  for (const double t : {3.0, 4.0, 5.0}) b.add(t, 0);
  b.end_function();
  for (const double t : {3.0, 4.0, 5.0}) b.add(t, 2);
  b.end_function();
  // Times equal in T meet: the first point keeps its first value, later
  // points take the last value.
  b.add(1, 0);
  b.add(1, 5);
  b.add(2, 1);
  b.add(2, 3);
  b.add(3, 0);
  b.end_function();
  assert_false(b.add(kInf, 1));
  assert_false(b.add(0, kNaN));
  expect_functions(*b.build(), {
                                   {{0, 0}, {1, 1}, {4, 1}, {5, 0}, {6, 2}},
                                   {{0, 0}},
                                   {{0, 0}},
                                   {{3, 2}},
                                   {{1, 0}, {2, 3}, {3, 0}},
                               });
  PlfBuilder<float> f;
  assert_false(f.add(1e300, 1));
  f.add(0, 0);
  f.add(1.0, 2);
  f.add(1.0 + 1e-12, 3);  // meets t = 1 in float32: takes the later value
  f.add(3, 0);
  f.end_function();
  expect_functions(*f.build(), {{{0, 0}, {1, 3}, {3, 0}}});
}

// ---- landscapes: hand-worked ----

static void test_landscape_one_bar(void**) {
  const Csr c = csr({{{0, 2}}});
  const auto L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, kInf);
  expect_functions(*L, {{{0, 0}, {1, 1}, {2, 0}}, {{0, 0}}});
}

static void test_landscape_two_bars(void**) {
  // Nested: the tent of (1, 3) lies under the tent of (0, 4).
  Csr c = csr({{{0, 4}, {1, 3}}, {{0, 4}, {2, 6}}});
  auto L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, kInf);
  expect_functions(*L, {
                           {{0, 0}, {2, 2}, {4, 0}},
                           {{1, 0}, {2, 1}, {3, 0}},
                           // Overlapping: the tents cross at t = 3, value 1.
                           {{0, 0}, {2, 2}, {3, 1}, {4, 2}, {6, 0}},
                           {{2, 0}, {3, 1}, {4, 0}},
                       });
  // Disjoint, and touching (one ends where the other starts).
  c = csr({{{0, 2}, {3, 5}}, {{2, 4}, {0, 2}}});
  L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, kInf);
  expect_functions(*L, {
                           {{0, 0}, {1, 1}, {2, 0}, {3, 0}, {4, 1}, {5, 0}},
                           {{0, 0}},
                           {{0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 0}},
                           {{0, 0}},
                       });
}

static void test_landscape_three_bars(void**) {
  // (0,6), (1,3), (2,8): tents peak at 3 (h 3), 2 (h 1), 5 (h 3).
  // lambda_1: (0,6) up to t = 4 where it meets (2,8) at value 2.
  // lambda_2: (1,3) rising to its peak, down to 0.5 at t = 2.5 where (2,8)
  //           rises past it, up to 2 at t = 4, then (0,6) down to 0 at 6.
  // lambda_3: only on (2, 3): min of (1,3)'s falling edge and (2,8)'s rise.
  const Csr c = csr({{{0, 6}, {1, 3}, {2, 8}}});
  const auto L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 4, kInf);
  expect_functions(*L, {
                           {{0, 0}, {3, 3}, {4, 2}, {5, 3}, {8, 0}},
                           {{1, 0}, {2, 1}, {2.5, 0.5}, {4, 2}, {6, 0}},
                           {{2, 0}, {2.5, 0.5}, {3, 0}},
                           {{0, 0}},
                       });
}

static void test_landscape_ties_and_duplicates(void**) {
  const Csr c = csr({
      {{0, 2}, {0, 4}},          // same birth
      {{2, 4}, {0, 4}},          // same death: (2,4)'s peak touches (0,4)'s edge
      {{0, 2}, {0, 2}, {0, 2}},  // duplicates
  });
  const auto L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 4, kInf);
  const Plf tent02 = {{0, 0}, {1, 1}, {2, 0}}, zero = {{0, 0}};
  expect_functions(*L, {
                           {{0, 0}, {2, 2}, {4, 0}}, tent02, zero, zero,
                           {{0, 0}, {2, 2}, {4, 0}}, {{2, 0}, {3, 1}, {4, 0}}, zero, zero,
                           tent02, tent02, tent02, zero,
                       });
}

static void test_landscape_empty_zero_length_and_clip(void**) {
  // An empty barcode, bars of length 0, and no barcode at all.
  Csr c = csr({{}, {{1, 1}, {3, 3}}});
  auto L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, kInf);
  expect_functions(*L, {{{0, 0}}, {{0, 0}}, {{0, 0}}, {{0, 0}}});
  const std::uint64_t none[1] = {0};
  L = landscapes<double>(0, none, nullptr, 3, kInf);
  assert_int_equal(L->count(), 0);
  // clip: an infinite bar ends at clip; one born at or after clip gives
  // nothing; a finite bar beyond clip is kept.
  c = csr({{{0, kInf}}, {{5, kInf}, {4, kInf}}, {{0, 10}, {1, kInf}}});
  L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 1, 4);
  expect_functions(*L, {
                           {{0, 0}, {2, 2}, {4, 0}},
                           {{0, 0}},
                           {{0, 0}, {5, 5}, {10, 0}},
                       });
  // Results do not depend on k beyond the levels asked for.
  L = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, 4);
  expect_functions(*L, {
                           {{0, 0}, {2, 2}, {4, 0}}, {{0, 0}},
                           {{0, 0}}, {{0, 0}},
                           {{0, 0}, {5, 5}, {10, 0}}, {{1, 0}, {2.5, 1.5}, {4, 0}},
                       });
}

// ---- landscapes: brute force ----

static void check_landscapes_against_brute_force(const Barcode& raw, double clip,
                                                 std::mt19937_64& rng) {
  Barcode bars;  // clipped, as the reference sees them
  double scale = 1;
  for (const Bar& x : raw) {
    const Bar y{x.b, std::isinf(x.d) ? clip : x.d};
    if (y.b < y.d) bars.push_back(y);
    scale = std::max({scale, std::fabs(y.b), std::fabs(y.d)});
  }
  const Csr c = csr({raw});
  const std::vector<double> ts = probe_times(bars, rng);
  std::vector<std::shared_ptr<const PcfCollection<double>>> byk;
  for (std::uint64_t k = 1; k <= 6; ++k) {
    const auto L = landscapes<double>(1, c.off.data(), c.bars.data(), k, clip);
    assert_int_equal(L->count(), k);
    expect_canonical(*L);
    byk.push_back(L);
    for (std::size_t j = 1; j <= k; ++j) {
      const Plf f = function_of(*L, j - 1);
      // lambda_j is the same function whatever k.
      if (k > 1) expect_plf(f, function_of(*byk[j - 1], j - 1), "lambda_j for another k");
      if (f.size() > 1) assert_true(f.front().v == 0 && f.back().v == 0);
      for (const double t : ts) {
        const std::string what = "lambda_" + std::to_string(j) + " (k = " + std::to_string(k) + ")";
        expect_close(eval_ref(f, t), landscape_ref(bars, j, t), 1e-12 * scale, what.c_str(), t);
      }
    }
  }
}

static void test_landscape_brute_force(void**) {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 12; ++round) {
    const bool integers = round % 3 == 2;
    check_landscapes_against_brute_force(random_barcode(rng, 30, integers), kInf, rng);
  }
  // Small barcodes, where levels run out.
  for (int round = 0; round < 20; ++round) {
    check_landscapes_against_brute_force(random_barcode(rng, 1 + round % 5, round % 2), kInf, rng);
  }
  // Infinite bars, clipped.
  for (int round = 0; round < 4; ++round) {
    Barcode bars = random_barcode(rng, 20, round % 2);
    for (std::size_t k = 0; k < bars.size(); k += 4) bars[k].d = kInf;
    check_landscapes_against_brute_force(bars, 7.5, rng);
  }
}

// The bars' order in the barcode does not change a bit of the result.
static void test_landscape_order_independent(void**) {
  std::mt19937_64 rng(7);
  Barcode bars = random_barcode(rng, 40, true);
  const Csr a = csr({bars});
  std::shuffle(bars.begin(), bars.end(), rng);
  const Csr b = csr({bars});
  const auto la = landscapes<double>(1, a.off.data(), a.bars.data(), 5, kInf);
  const auto lb = landscapes<double>(1, b.off.data(), b.bars.data(), 5, kInf);
  const auto sa = silhouettes<double>(1, a.off.data(), a.bars.data(), 1.5, kInf);
  const auto sb = silhouettes<double>(1, b.off.data(), b.bars.data(), 1.5, kInf);
  for (std::size_t j = 0; j < 5; ++j) expect_plf(function_of(*la, j), function_of(*lb, j), "shuffled");
  expect_plf(function_of(*sa, 0), function_of(*sb, 0), "shuffled silhouette");
}

// ---- silhouettes ----

static void test_silhouette_hand_worked(void**) {
  // One bar: its tent, whatever q.
  Csr c = csr({{{0, 2}}, {}, {{1, 1}}});
  auto S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 1, kInf);
  expect_functions(*S, {{{0, 0}, {1, 1}, {2, 0}}, {{0, 0}}, {{0, 0}}});
  // (0,4) and (1,3), q = 1: weights 4 and 2, phi = (4 T1 + 2 T2) / 6.
  // t = 1: 4/6; t = 2: (8 + 2)/6; t = 3: 4/6; t = 4: 0.
  c = csr({{{0, 4}, {1, 3}}});
  S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 1, kInf);
  expect_functions(*S, {{{0, 0}, {1, 4.0 / 6}, {2, 10.0 / 6}, {3, 4.0 / 6}, {4, 0}}});
  // q = 0: the mean tent, (T1 + T2) / 2.
  S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 0, kInf);
  expect_functions(*S, {{{0, 0}, {1, 0.5}, {2, 1.5}, {3, 0.5}, {4, 0}}});
  // Disjoint bars of lengths 2 and 4, q = 2: weights 4 and 16 (sum 20).
  c = csr({{{0, 2}, {3, 7}}});
  S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 2, kInf);
  expect_functions(*S, {{{0, 0}, {1, 0.2}, {2, 0}, {3, 0}, {5, 1.6}, {7, 0}}});
  // A bar of length 0 has no weight, even for q = 0.
  c = csr({{{0, 2}, {5, 5}}});
  S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 0, kInf);
  expect_functions(*S, {{{0, 0}, {1, 1}, {2, 0}}});
  // An infinite bar, clipped.
  c = csr({{{0, kInf}}});
  S = silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 1, 2);
  expect_functions(*S, {{{0, 0}, {1, 1}, {2, 0}}});
}

static void test_silhouette_brute_force(void**) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 9; ++round) {
    const Barcode bars = random_barcode(rng, 30, round % 3 == 1);
    const Csr c = csr({bars});
    double scale = 1;
    for (const Bar& x : bars) scale = std::max({scale, std::fabs(x.b), std::fabs(x.d)});
    const std::vector<double> ts = probe_times(bars, rng);
    for (const double q : {0.0, 1.0, 2.0}) {
      const auto S = silhouettes<double>(1, c.off.data(), c.bars.data(), q, kInf);
      expect_canonical(*S);
      const Plf f = function_of(*S, 0);
      assert_true(f.front().v == 0 && f.back().v == 0);
      for (const double t : ts) {
        expect_close(eval_ref(f, t), silhouette_ref(bars, q, t), 1e-12 * scale, "silhouette", t);
      }
    }
  }
}

// ---- validation ----

static void test_validation(void**) {
  const auto fails = [](Csr c, std::initializer_list<const char*> parts, bool f32 = false,
                        double clip = kInf) {
    expect_invalid(
        [&] {
          if (f32) {
            landscapes<float>(c.n(), c.off.data(), c.bars.data(), 2, clip);
          } else {
            landscapes<double>(c.n(), c.off.data(), c.bars.data(), 2, clip);
          }
        },
        parts);
    expect_invalid(
        [&] {
          if (f32) {
            silhouettes<float>(c.n(), c.off.data(), c.bars.data(), 1, clip);
          } else {
            silhouettes<double>(c.n(), c.off.data(), c.bars.data(), 1, clip);
          }
        },
        parts);
  };
  fails(csr({{{0, 1}}, {{0, 1}, {kNaN, 2}}}), {"barcode 1, bar 1", "birth is NaN"});
  fails(csr({{{0, kNaN}}, {{0, 1}}}), {"barcode 0, bar 0", "death is NaN"});
  fails(csr({{{0, 1}}, {{kInf, kInf}}}), {"barcode 1, bar 0", "birth is infinite"});
  fails(csr({{{0, 1}}, {{0, 1}, {-kInf, 2}}}), {"barcode 1, bar 1", "birth is infinite"});
  fails(csr({{{0, 1}}, {{3, 2}}}), {"barcode 1, bar 0 (birth 3, death 2)",
                                    "death is smaller than the birth"});
  fails(csr({{{0, -kInf}}}), {"barcode 0, bar 0", "death is smaller than the birth"});
  fails(csr({{{0, 1}}, {{0, 2}, {1, kInf}}}),
        {"barcode 1, bar 1 (birth 1, death inf)", "is infinite; give clip to cut infinite bars"});
  fails(csr({{{0, 1}}, {{-1e308, 1e308}}}), {"barcode 1, bar 0", "overflows double"});
  fails(csr({{{-1e308, kInf}}}), {"barcode 0, bar 0", "clip - birth overflows double"}, false,
        1e308);
  fails(csr({{{0, 1}}, {{0, 1e300}}}), {"barcode 1, bar 0", "overflows float32"}, true);
  fails(csr({{{-1e300, kInf}}}), {"barcode 0, bar 0", "overflows float32"}, true, 1);
  fails(csr({{{0, 1}}}), {"clip is nan"}, false, kNaN);
  fails(csr({{{0, 1}}}), {"clip is -inf"}, false, -kInf);
  fails(csr({{{0, 1}}}), {"clip = 1e+300 overflows float32"}, true, 1e300);
  // Offsets.
  const double bars[4] = {0, 1, 0, 2};
  const std::uint64_t bad0[2] = {1, 2}, down[3] = {0, 2, 1};
  expect_invalid([&] { landscapes<double>(1, bad0, bars, 1, kInf); }, {"offsets[0] is 1"});
  expect_invalid([&] { silhouettes<double>(2, down, bars, 1, kInf); },
                 {"offsets[2] = 1 is smaller than offsets[1] = 2"});
  // k and q.
  const std::uint64_t off[2] = {0, 2};
  expect_invalid([&] { landscapes<double>(1, off, bars, 0, kInf); }, {"k = 0"});
  expect_invalid([&] { landscapes<double>(3, off, bars, 1ull << 63, kInf); }, {"64 bits"});
  for (const double q : {-1.0, kNaN, kInf}) {
    expect_invalid([&] { silhouettes<double>(1, off, bars, q, kInf); },
                   {"weight exponent", "finite and >= 0"});
  }
  // A bar clipped away is not checked further (clip <= birth).
  const Csr c = csr({{{5, kInf}}});
  const auto L = landscapes<float>(c.n(), c.off.data(), c.bars.data(), 1, 1);
  expect_functions(*L, {{{0, 0}}});
}

// ---- float32 ----

static void test_float32_rounding(void**) {
  // A bar shorter than float32 can resolve vanishes; end points of bars a
  // double ulp apart collapse, and times stay strictly increasing.
  Csr c = csr({{{1, 1 + 1e-9}}, {{0, 2}, {1e-9, 2 + 1e-9}, {2e-9, 2 + 2e-9}}});
  auto L = landscapes<float>(c.n(), c.off.data(), c.bars.data(), 3, kInf);
  expect_canonical(*L);
  expect_plf(function_of(*L, 0), {{0, 0}}, "tiny bar in float32");
  const auto L64 = landscapes<double>(c.n(), c.off.data(), c.bars.data(), 3, kInf);
  assert_true(function_of(*L64, 0).size() == 3);
  for (std::size_t j = 3; j < 6; ++j) {
    const Plf f = function_of(*L, j);
    assert_true(f.front().v == 0 && f.back().v == 0);
  }
  // Random barcodes crowded into [1, 1 + 1e-4]: against brute force, to
  // float32 accuracy; every function still starts and ends at 0.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(1, 1 + 1e-4), len(0, 1e-5);
  for (int round = 0; round < 10; ++round) {
    Barcode bars;
    for (int k = 0; k < 30; ++k) {
      const double b = u(rng);
      bars.push_back(Bar{b, b + len(rng)});
    }
    c = csr({bars});
    L = landscapes<float>(1, c.off.data(), c.bars.data(), 4, kInf);
    const auto S = silhouettes<float>(1, c.off.data(), c.bars.data(), 1, kInf);
    expect_canonical(*L);
    expect_canonical(*S);
    const std::vector<double> ts = probe_times(bars, rng);
    const double tol = 4 * std::ldexp(1.0, -23);  // a few float32 ulps at t ~ 1
    for (std::size_t j = 1; j <= 4; ++j) {
      const Plf f = function_of(*L, j - 1);
      if (f.size() > 1) assert_true(f.front().v == 0 && f.back().v == 0);
      for (const double t : ts) expect_close(eval_ref(f, t), landscape_ref(bars, j, t), tol, "float32", t);
    }
    const Plf s = function_of(*S, 0);
    for (const double t : ts) expect_close(eval_ref(s, t), silhouette_ref(bars, 1, t), tol, "float32", t);
  }
}

// ---- pointwise ----

static void test_plf_evaluate(void**) {
  const auto X = plfs<double>({
      {{0, 0}, {1, 1}, {3, 0}},  // a tent
      {{1, 5}, {2, 7}},          // jumps to 5 at 1, constant 7 after 2
      {{0, 0}},                  // zero
  });
  const double t[9] = {-kInf, -1, 0, 0.5, 1, 2, 2.5, 3, kInf};
  double out[27];
  plf_evaluate<double>(X->data(), t, 9, out);
  const double want[27] = {0, 0, 0, 0.5, 1, 0.5, 0.25, 0, 0,
                           0, 0, 0, 0,   5, 7,   7,    7, 7,
                           0, 0, 0, 0,   0, 0,   0,    0, 0};
  for (int k = 0; k < 27; ++k) assert_true(out[k] == want[k]);
  // Breakpoints exactly, in float32 too.
  const auto F = plfs<float>({{{0.1, 0.3}, {0.7, 1e-3}, {1e6, 123.456}}});
  const double tf[3] = {static_cast<float>(0.1), static_cast<float>(0.7), static_cast<float>(1e6)};
  float outf[3];
  plf_evaluate<float>(F->data(), tf, 3, outf);
  assert_true(outf[0] == 0.3f && outf[1] == 1e-3f && outf[2] == 123.456f);
  const double bad[2] = {0, kNaN};
  expect_invalid([&] { plf_evaluate<double>(X->data(), bad, 2, out); }, {"t[1] is NaN"});
}

// Random PLFs that start at 0 (continuous), some starting together with a
// jump, on a grid of times with ties between functions.
static std::vector<Plf> random_plfs(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<Plf> fs;
  for (std::size_t i = 0; i < n; ++i) {
    Plf f;
    double t = i % 4 == 0 ? -10.0 : static_cast<double>(rng() % 8) * 0.5 - 2;
    const std::size_t m = 1 + rng() % 7;
    for (std::size_t k = 0; k < m; ++k) {
      const bool start_at_zero = k == 0 && t != -10.0;
      f.push_back(Pt{t, start_at_zero ? 0.0 : u(rng)});
      t += rng() % 3 == 0 ? 0.25 : u(rng) + 3.5;
    }
    if (rng() % 5 == 0) f = {{0, 0}};
    fs.push_back(f);
  }
  return fs;
}

static void test_plf_combine(void**) {
  std::mt19937_64 rng(3);
  const std::vector<Plf> xs = random_plfs(rng, 12), ys = random_plfs(rng, 12);
  const auto X = plfs<double>(xs), Y = plfs<double>(ys);
  const auto Z = plf_combine<double>(1.5, X->data(), -0.75, Y->data());
  expect_canonical(*Z);
  assert_int_equal(Z->count(), 12);
  std::uniform_real_distribution<double> u(-12, 25);
  for (std::size_t i = 0; i < 12; ++i) {
    const Plf z = function_of(*Z, i);
    std::vector<double> ts;
    for (const Pt& p : xs[i]) ts.push_back(p.t);
    for (const Pt& p : ys[i]) ts.push_back(p.t);
    for (const Pt& p : z) {
      // The result's breakpoints are inputs' breakpoints (zero: (0, 0)).
      const bool known = std::find(ts.begin(), ts.end(), p.t) != ts.end() || z.size() == 1;
      assert_true(known);
    }
    for (int k = 0; k < 100; ++k) ts.push_back(u(rng));
    for (const double t : ts) {
      const double want = 1.5 * eval_ref(xs[i], t) - 0.75 * eval_ref(ys[i], t);
      expect_close(eval_ref(z, t), want, 1e-12 * 8, "combine", t);
    }
  }
  // Broadcasting one function; mismatched counts; coefficients.
  const auto one = plfs<double>({{{0, 0}, {1, 2}, {2, 0}}});
  const auto B = plf_combine<double>(2, one->data(), 1, one->data());
  expect_functions(*B, {{{0, 0}, {1, 6}, {2, 0}}});
  expect_invalid([&] { plf_combine<double>(kNaN, X->data(), 1, Y->data()); }, {"finite"});
  const auto three = plfs<double>({{{0, 0}}, {{0, 0}}, {{0, 0}}});
  expect_invalid([&] { plf_combine<double>(1, X->data(), 1, three->data()); },
                 {"X has 12 functions and Y has 3"});
}

static void test_plf_reduce(void**) {
  std::mt19937_64 rng(11);
  // Shape (2, 3, 4), reduced along the middle axis: groups 8, len 3, inner 4.
  const std::vector<Plf> fs = random_plfs(rng, 24);
  const auto X = plfs<double>(fs);
  for (const Reduction op : {Reduction::Sum, Reduction::Mean}) {
    const auto R = plf_reduce<double>(X->data(), op, 8, 3, 4);
    expect_canonical(*R);
    assert_int_equal(R->count(), 8);
    std::uniform_real_distribution<double> u(-12, 25);
    for (std::uint64_t g = 0; g < 8; ++g) {
      std::vector<std::size_t> members;
      for (std::uint64_t k = 0; k < 3; ++k) members.push_back((g / 4) * 12 + k * 4 + g % 4);
      std::vector<double> ts;
      for (const std::size_t i : members) {
        for (const Pt& p : fs[i]) ts.push_back(p.t);
      }
      for (int k = 0; k < 100; ++k) ts.push_back(u(rng));
      const Plf r = function_of(*R, g);
      for (const double t : ts) {
        double want = 0;
        for (const std::size_t i : members) want += eval_ref(fs[i], t);
        if (op == Reduction::Mean) want /= 3;
        expect_close(eval_ref(r, t), want, 1e-12 * 8, "reduce", t);
      }
    }
  }
  // The whole collection in float32: values in double, rounded once.
  std::vector<Plf> small = random_plfs(rng, 9);
  const auto F = plfs<float>(small);
  const auto S = plf_reduce<float>(F->data(), Reduction::Mean, 1, 9, 1);
  expect_canonical(*S);
  const Plf s = function_of(*S, 0);
  for (const Pt& p : s) {
    double want = 0;
    for (std::size_t i = 0; i < 9; ++i) want += eval_ref(function_of(*F, i), p.t);
    expect_close(p.v, static_cast<double>(static_cast<float>(want / 9)), 1e-6, "float32 mean", p.t);
  }
  // Sums of none; means of none.
  const auto Z = plf_reduce<double>(X->data(), Reduction::Sum, 2, 0, 1);
  expect_functions(*Z, {{{0, 0}}, {{0, 0}}});
  expect_invalid([&] { plf_reduce<double>(X->data(), Reduction::Mean, 1, 0, 1); },
                 {"mean of no functions"});
  assert_int_equal(plf_reduce<double>(X->data(), Reduction::Mean, 0, 0, 1)->count(), 0);
}

static void test_plf_jump(void**) {
  // Function 3 jumps to 5 at t = 1 while function 0 is already non-zero.
  auto X = plfs<double>({{{0, 0}, {1, 1}, {2, 0}}, {{0.5, 0}, {1, 2}}, {{0, 0}}, {{1, 5}, {2, 5}}});
  expect_invalid([&] { plf_reduce<double>(X->data(), Reduction::Sum, 1, 4, 1); },
                 {"function 3 starts at t = 1 with value 5, after function 0 (which starts at t = 0)",
                  "the sum would jump at t = 1, which a piecewise linear function cannot represent"});
  // Shape (2, 2) reduced along axis 0: groups {0, 2} and {1, 3}.
  expect_invalid([&] { plf_reduce<double>(X->data(), Reduction::Mean, 2, 2, 2); },
                 {"function 3 starts at t = 1 with value 5, after function 1 (which starts at "
                  "t = 0.5): the mean of output function 1 would jump at t = 1"});
  // (f1 stays at 2 after t = 1.) Function 2 is the zero function: {2, 3}
  // sums to function 3.
  expect_functions(*plf_reduce<double>(X->data(), Reduction::Sum, 2, 2, 1),
                   {{{0, 0}, {0.5, 0.5}, {1, 3}, {2, 2}}, {{1, 5}}});
  X = plfs<double>({{{0, 0}, {1, 1}, {2, 0}}, {{1, 5}, {2, 5}}});
  expect_invalid([&] { plf_combine<double>(1, X->data(), 2, X->slice(1, 1)->data()); },
                 {"Y[0] starts at t = 1 with value 5, after X[0] (which starts at t = 0)",
                  "a * X[0] + b * Y[0] would jump at t = 1"});
  // Allowed: jumps at the earliest start; terms identically 0 (the zero
  // function, a coefficient 0); jumps at one time that cancel.
  X = plfs<double>({{{1, 5}, {2, 5}}, {{1, -2}, {3, 0}}, {{0, 0}}, {{0.5, 0}, {1, 0}, {2, 1}}});
  auto R = plf_reduce<double>(X->slice(0, 3)->data(), Reduction::Sum, 1, 3, 1);
  expect_functions(*R, {{{1, 3}, {2, 4}, {3, 5}}});
  // Function 3 is zero up to t = 1: it starts there, with no jump.
  R = plf_reduce<double>(X->data(), Reduction::Sum, 1, 4, 1);
  expect_functions(*R, {{{1, 3}, {2, 5}, {3, 6}}});
  R = plf_combine<double>(0, X->slice(3, 1)->data(), 1, X->slice(0, 1)->data());
  expect_functions(*R, {{{1, 5}}});
  // Collinear breakpoints (1, 1), (2, 2) are kept.
  X = plfs<double>({{{0, 0}, {4, 4}}, {{1, 5}, {2, 0}}, {{1, -5}, {2, 0}}});
  R = plf_reduce<double>(X->data(), Reduction::Sum, 1, 3, 1);
  expect_functions(*R, {{{0, 0}, {1, 1}, {2, 2}, {4, 4}}});
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plf_builder),
      cmocka_unit_test(test_landscape_one_bar),
      cmocka_unit_test(test_landscape_two_bars),
      cmocka_unit_test(test_landscape_three_bars),
      cmocka_unit_test(test_landscape_ties_and_duplicates),
      cmocka_unit_test(test_landscape_empty_zero_length_and_clip),
      cmocka_unit_test(test_landscape_brute_force),
      cmocka_unit_test(test_landscape_order_independent),
      cmocka_unit_test(test_silhouette_hand_worked),
      cmocka_unit_test(test_silhouette_brute_force),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_float32_rounding),
      cmocka_unit_test(test_plf_evaluate),
      cmocka_unit_test(test_plf_combine),
      cmocka_unit_test(test_plf_reduce),
      cmocka_unit_test(test_plf_jump),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
