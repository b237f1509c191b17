#include "mpcf/core/plf_pointwise.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "mpcf/core/barcode_checks.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/number_text.hpp"
#include "mpcf/core/plf_builder.hpp"

namespace mpcf {

namespace {


// (t - t0) / (t1 - t0) for t0 <= t < t1; in halves when the width overflows
// (float64 times near the ends of the range).
double fraction(double t, double t0, double t1) {
  const double width = t1 - t0;
  if (std::isfinite(width)) return (t - t0) / width;
  return (0.5 * t - 0.5 * t0) / (0.5 * t1 - 0.5 * t0);
}

// The line through (t0, v0) and (t1, v1) at t0 <= t < t1: exactly v0 at t0.
double interpolate(double t, double t0, double v0, double t1, double v1) {
  const double w = fraction(t, t0, t1);
  const double rise = v1 - v0;
  if (std::isfinite(rise)) return v0 + w * rise;
  return v0 * (1.0 - w) + v1 * w;  // the rise overflows: no difference taken
}

// Reads one PLF (points with .t and .v) at non-decreasing times, walking its
// breakpoints once.
template <typename P>
class Reader {
 public:
  Reader(const P* p, std::size_t m) : p_(p), m_(m) {}

  double at(double t) {
    while (k_ < m_ && static_cast<double>(p_[k_].t) <= t) ++k_;
    if (k_ == 0) return 0.0;  // before the first breakpoint
    const P& left = p_[k_ - 1];
    if (k_ == m_ || static_cast<double>(left.t) == t) return static_cast<double>(left.v);
    const P& right = p_[k_];
    return interpolate(t, static_cast<double>(left.t), static_cast<double>(left.v),
                       static_cast<double>(right.t), static_cast<double>(right.v));
  }

 private:
  const P* p_;
  std::size_t m_;
  std::size_t k_ = 0;  // breakpoints at or before the last time read
};

// The breakpoints of c * f that matter: none when c f is identically 0,
// else from where f stops being 0 (the last of its leading zeros) on.
template <typename T>
struct Span {
  const PcfPoint<T>* p;
  std::uint64_t m;
};

template <typename T>
Span<T> support(const PcfPoint<T>* p, std::uint64_t m, double c) {
  std::uint64_t k = 0;
  while (k < m && p[k].v == T(0)) ++k;
  if (c == 0.0 || k == m) return Span<T>{p + m, 0};
  const std::uint64_t first = k == 0 ? 0 : k - 1;
  return Span<T>{p + first, m - first};
}

// ---- the jump check ----

// A term c f of a sum, with a name for messages.
template <typename T>
struct Term {
  Span<T> f;  // support(f, c)
  double c;
};

// Throws when the sum of `terms` would jump after it starts: a term whose
// first value is not 0 starts after another term is non-zero, and the
// jumps of the terms starting then do not cancel. name(k) names term k,
// result() the sum (both called only to write the message).
template <typename T, typename Name, typename Result>
void check_single_jump(const std::vector<Term<T>>& terms, const Name& name, const Result& result) {
  std::size_t first = terms.size();
  double start = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const double t = terms[k].f.m == 0 ? start : static_cast<double>(terms[k].f.p[0].t);
    if (t < start) start = t, first = k;
  }
  std::vector<std::size_t> late;  // terms jumping after `start`
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Span<T>& f = terms[k].f;
    if (f.m > 0 && static_cast<double>(f.p[0].t) > start && terms[k].c * f.p[0].v != 0.0) {
      late.push_back(k);
    }
  }
  const auto when = [&](std::size_t k) { return static_cast<double>(terms[k].f.p[0].t); };
  std::stable_sort(late.begin(), late.end(),
                   [&](std::size_t a, std::size_t b) { return when(a) < when(b); });
  for (std::size_t g = 0; g < late.size();) {
    const std::size_t head = late[g];
    double jump = 0.0;
    for (; g < late.size() && when(late[g]) == when(head); ++g) {
      jump += terms[late[g]].c * static_cast<double>(terms[late[g]].f.p[0].v);
    }
    if (jump == 0.0) continue;  // jumps that cancel
    const std::string at = number_text(when(head));
    throw InvalidArgument(name(head) + " starts at t = " + at + " with value " +
                          number_text(static_cast<double>(terms[head].f.p[0].v)) + ", after " +
                          name(first) + " (which starts at t = " + number_text(start) + "): " +
                          result() + " would jump at t = " + at +
                          ", which a piecewise linear function cannot represent (it jumps only "
                          "at its first breakpoint)");
  }
}

// ---- sums ----

// A function during a sum: breakpoints of the input dtype, values in
// double. Empty means the zero function.
template <typename T>
struct Piece {
  T t;
  double v;
};
template <typename T>
using Partial = std::vector<Piece<T>>;

template <typename T>
Partial<T> leaf(const Span<T>& f) {
  Partial<T> out(f.m);
  for (std::uint64_t k = 0; k < f.m; ++k) out[k] = Piece<T>{f.p[k].t, static_cast<double>(f.p[k].v)};
  return out;
}

// f + g on the union of their breakpoints.
template <typename T>
Partial<T> add(const Partial<T>& f, const Partial<T>& g) {
  Partial<T> out;
  out.reserve(f.size() + g.size());
  Reader<Piece<T>> rf(f.data(), f.size()), rg(g.data(), g.size());
  std::size_t i = 0, j = 0;
  while (i < f.size() || j < g.size()) {
    const T t = j == g.size() || (i < f.size() && f[i].t < g[j].t) ? f[i].t : g[j].t;
    if (i < f.size() && f[i].t == t) ++i;
    if (j < g.size() && g[j].t == t) ++j;
    const double td = static_cast<double>(t);
    out.push_back(Piece<T>{t, rf.at(td) + rg.at(td)});
  }
  return out;
}

// The sum of terms[lo .. hi), as a balanced pairwise tree.
template <typename T>
Partial<T> tree_sum(const std::vector<Term<T>>& terms, std::size_t lo, std::size_t hi) {
  if (hi - lo == 0) return {};
  if (hi - lo == 1) return leaf(terms[lo].f);
  const std::size_t mid = lo + (hi - lo) / 2;
  return add(tree_sum(terms, lo, mid), tree_sum(terms, mid, hi));
}

}  // namespace

template <typename T>
void plf_evaluate(const PcfDataManager<T>& data, const double* t, std::uint64_t nt, T* out) {
  for (std::uint64_t j = 0; j < nt; ++j) {
    if (std::isnan(t[j])) {
      throw InvalidArgument("t[" + std::to_string(j) +
                            "] is NaN; evaluation times must be numbers (+-inf are allowed)");
    }
  }
  // Visit the times in increasing order, so each function is walked once.
  std::vector<std::uint64_t> order(nt);
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [t](std::uint64_t a, std::uint64_t b) { return t[a] < t[b]; });
  for (std::size_t i = 0; i < data.count(); ++i) {
    Reader<PcfPoint<T>> f(data.data_of(i), data.size_of(i));
    T* row = out + i * nt;
    for (const std::uint64_t j : order) row[j] = static_cast<T>(f.at(t[j]));
  }
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> plf_reduce(const PcfDataManager<T>& data, Reduction op,
                                                   std::uint64_t groups, std::uint64_t len,
                                                   std::uint64_t inner) {
  if (op == Reduction::Mean && len == 0 && groups > 0) {
    throw InvalidArgument(
        "the mean of no functions is undefined (the collection, or the axis reduced, is empty)");
  }
  PlfBuilder<T> out;
  // No groups: an empty result, whatever len (nothing may be sized by it).
  if (groups == 0) return out.build();
  const char* what = op == Reduction::Mean ? "mean" : "sum";
  std::vector<std::uint64_t> index(len);
  std::vector<Term<T>> terms(len);
  for (std::uint64_t g = 0; g < groups; ++g) {
    const std::uint64_t base = (g / inner) * len * inner + g % inner;
    for (std::uint64_t k = 0; k < len; ++k) {
      index[k] = base + k * inner;
      terms[k] = Term<T>{support(data.data_of(index[k]), data.size_of(index[k]), 1.0), 1.0};
    }
    check_single_jump(
        terms, [&](std::size_t k) { return "function " + std::to_string(index[k]); },
        [&] {
          return std::string("the ") + what +
                 (groups > 1 ? " of output function " + std::to_string(g) : "");
        });
    const Partial<T> sum = tree_sum(terms, 0, terms.size());
    const double scale = static_cast<double>(len);
    for (const Piece<T>& p : sum) {
      const double v = op == Reduction::Mean ? p.v / scale : p.v;
      if (!out.add(static_cast<double>(p.t), v)) {
        throw InvalidArgument(std::string("the ") + what + " of output function " +
                              std::to_string(g) + " overflows " + dtype_name<T>() + " at t = " +
                              number_text(static_cast<double>(p.t)));
      }
    }
    out.end_function();
  }
  return out.build();
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> plf_combine(double a, const PcfDataManager<T>& x,
                                                    double b, const PcfDataManager<T>& y) {
  if (!std::isfinite(a) || !std::isfinite(b)) {
    throw InvalidArgument("the coefficients a = " + number_text(a) + " and b = " + number_text(b) +
                          " must both be finite");
  }
  const std::uint64_t nx = x.count(), ny = y.count();
  if (nx != ny && nx != 1 && ny != 1) {
    throw InvalidArgument("X has " + std::to_string(nx) + " functions and Y has " +
                          std::to_string(ny) +
                          "; they must have as many, or one of them exactly one (which is then "
                          "combined with every function of the other)");
  }
  // A single function is combined with every function of the other
  // collection: none when that one is empty.
  const std::uint64_t n = nx == ny ? nx : (nx == 1 ? ny : nx);
  PlfBuilder<T> out;
  std::vector<Term<T>> terms(2);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t ix = nx == 1 ? 0 : i, iy = ny == 1 ? 0 : i;
    const std::string nxi = "X[" + std::to_string(ix) + "]", nyi = "Y[" + std::to_string(iy) + "]";
    terms[0] = Term<T>{support(x.data_of(ix), x.size_of(ix), a), a};
    terms[1] = Term<T>{support(y.data_of(iy), y.size_of(iy), b), b};
    check_single_jump(
        terms, [&](std::size_t k) { return k == 0 ? nxi : nyi; },
        [&] { return "a * " + nxi + " + b * " + nyi; });
    const Span<T> f = terms[0].f, g = terms[1].f;
    Reader<PcfPoint<T>> rf(f.p, f.m), rg(g.p, g.m);
    std::uint64_t k = 0, l = 0;
    while (k < f.m || l < g.m) {
      const T t = l == g.m || (k < f.m && f.p[k].t < g.p[l].t) ? f.p[k].t : g.p[l].t;
      if (k < f.m && f.p[k].t == t) ++k;
      if (l < g.m && g.p[l].t == t) ++l;
      const double td = static_cast<double>(t);
      if (!out.add(td, a * rf.at(td) + b * rg.at(td))) {
        throw InvalidArgument("a * " + nxi + " + b * " + nyi + " overflows " + dtype_name<T>() +
                              " at t = " + number_text(td));
      }
    }
    out.end_function();
  }
  return out.build();
}

template void plf_evaluate<float>(const PcfDataManager<float>&, const double*, std::uint64_t,
                                  float*);
template void plf_evaluate<double>(const PcfDataManager<double>&, const double*, std::uint64_t,
                                   double*);
template std::shared_ptr<const PcfCollection<float>> plf_reduce<float>(
    const PcfDataManager<float>&, Reduction, std::uint64_t, std::uint64_t, std::uint64_t);
template std::shared_ptr<const PcfCollection<double>> plf_reduce<double>(
    const PcfDataManager<double>&, Reduction, std::uint64_t, std::uint64_t, std::uint64_t);
template std::shared_ptr<const PcfCollection<float>> plf_combine<float>(
    double, const PcfDataManager<float>&, double, const PcfDataManager<float>&);
template std::shared_ptr<const PcfCollection<double>> plf_combine<double>(
    double, const PcfDataManager<double>&, double, const PcfDataManager<double>&);

}  // namespace mpcf
