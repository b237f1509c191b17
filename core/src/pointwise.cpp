#include "mpcf/core/pointwise.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "mpcf/core/barcode_checks.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/number_text.hpp"
#include "mpcf/core/pcf_builder.hpp"

namespace mpcf {

namespace {


// A function during a sum: breakpoints of the input dtype, values in double.
// Empty means the zero function.
template <typename T>
struct Piece {
  T t;
  double v;
};
template <typename T>
using Partial = std::vector<Piece<T>>;

template <typename T>
Partial<T> leaf(const PcfPoint<T>* p, std::uint64_t m) {
  Partial<T> f;
  f.reserve(m);
  double previous = 0.0;
  for (std::uint64_t k = 0; k < m; ++k) {
    const double v = static_cast<double>(p[k].v);
    if (v == previous) continue;
    f.push_back(Piece<T>{p[k].t, v});
    previous = v;
  }
  return f;
}

// f + g on the union of their breakpoints, repeated values dropped.
template <typename T>
Partial<T> add(const Partial<T>& f, const Partial<T>& g) {
  Partial<T> out;
  out.reserve(f.size() + g.size());
  std::size_t i = 0, j = 0;
  double vf = 0.0, vg = 0.0, previous = 0.0;
  while (i < f.size() || j < g.size()) {
    const T t = j == g.size() || (i < f.size() && f[i].t < g[j].t) ? f[i].t : g[j].t;
    if (i < f.size() && f[i].t == t) vf = f[i++].v;
    if (j < g.size() && g[j].t == t) vg = g[j++].v;
    const double v = vf + vg;
    if (v == previous) continue;
    out.push_back(Piece<T>{t, v});
    previous = v;
  }
  return out;
}

// The sum of functions index[lo .. hi), as a balanced pairwise tree.
template <typename T>
Partial<T> tree_sum(const PcfDataManager<T>& data, const std::vector<std::uint64_t>& index,
                    std::size_t lo, std::size_t hi) {
  if (hi - lo == 0) return {};
  if (hi - lo == 1) return leaf(data.data_of(index[lo]), data.size_of(index[lo]));
  const std::size_t mid = lo + (hi - lo) / 2;
  return add(tree_sum(data, index, lo, mid), tree_sum(data, index, mid, hi));
}

}  // namespace

template <typename T>
void evaluate(const PcfDataManager<T>& data, const double* t, std::uint64_t nt, T* out) {
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
    const PcfPoint<T>* p = data.data_of(i);
    const std::uint64_t m = data.size_of(i);
    T* row = out + i * nt;
    std::uint64_t k = 0;  // breakpoints at or before the current time
    for (const std::uint64_t j : order) {
      while (k < m && static_cast<double>(p[k].t) <= t[j]) ++k;
      row[j] = k == 0 ? T(0) : p[k - 1].v;
    }
  }
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> reduce(const PcfDataManager<T>& data, Reduction op,
                                               std::uint64_t groups, std::uint64_t len,
                                               std::uint64_t inner) {
  if (op == Reduction::Mean && len == 0 && groups > 0) {
    throw InvalidArgument(
        "the mean of no functions is undefined (the collection, or the axis reduced, is empty)");
  }
  PcfBuilder<T> out;
  // No groups: an empty result, whatever len (an empty collection's axis
  // may be 2^63 long; nothing may be sized by it).
  if (groups == 0) return out.build();
  std::vector<std::uint64_t> index(len);
  for (std::uint64_t g = 0; g < groups; ++g) {
    const std::uint64_t base = (g / inner) * len * inner + g % inner;
    for (std::uint64_t k = 0; k < len; ++k) index[k] = base + k * inner;
    const Partial<T> sum = tree_sum(data, index, 0, index.size());
    const double scale = op == Reduction::Mean ? static_cast<double>(len) : 1.0;
    for (const Piece<T>& p : sum) {
      const double v = op == Reduction::Mean ? p.v / scale : p.v;
      if (!out.add(static_cast<double>(p.t), v)) {
        throw InvalidArgument(std::string("the ") + (op == Reduction::Mean ? "mean" : "sum") +
                              " of output function " + std::to_string(g) + " overflows " +
                              dtype_name<T>() + " at t = " + number_text(static_cast<double>(p.t)));
      }
    }
    out.end_function();
  }
  return out.build();
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> combine(double a, const PcfDataManager<T>& x, double b,
                                                const PcfDataManager<T>& y) {
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
  // collection: none when that one is empty (found by fuzzing: max(0, 1)
  // read the empty collection's function 0, out of bounds).
  const std::uint64_t n = nx == ny ? nx : (nx == 1 ? ny : nx);
  PcfBuilder<T> out;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t ix = nx == 1 ? 0 : i, iy = ny == 1 ? 0 : i;
    const PcfPoint<T>* f = x.data_of(ix);
    const PcfPoint<T>* g = y.data_of(iy);
    const std::uint64_t mf = x.size_of(ix), mg = y.size_of(iy);
    std::uint64_t k = 0, l = 0;
    double vf = 0.0, vg = 0.0;
    while (k < mf || l < mg) {
      const T t = l == mg || (k < mf && f[k].t < g[l].t) ? f[k].t : g[l].t;
      if (k < mf && f[k].t == t) vf = static_cast<double>(f[k++].v);
      if (l < mg && g[l].t == t) vg = static_cast<double>(g[l++].v);
      if (!out.add(static_cast<double>(t), a * vf + b * vg)) {
        throw InvalidArgument("a * X[" + std::to_string(ix) + "] + b * Y[" + std::to_string(iy) +
                              "] overflows " + dtype_name<T>() + " at t = " +
                              number_text(static_cast<double>(t)));
      }
    }
    out.end_function();
  }
  return out.build();
}

template void evaluate<float>(const PcfDataManager<float>&, const double*, std::uint64_t, float*);
template void evaluate<double>(const PcfDataManager<double>&, const double*, std::uint64_t,
                               double*);
template std::shared_ptr<const PcfCollection<float>> reduce<float>(const PcfDataManager<float>&,
                                                                   Reduction, std::uint64_t,
                                                                   std::uint64_t, std::uint64_t);
template std::shared_ptr<const PcfCollection<double>> reduce<double>(
    const PcfDataManager<double>&, Reduction, std::uint64_t, std::uint64_t, std::uint64_t);
template std::shared_ptr<const PcfCollection<float>> combine<float>(double,
                                                                    const PcfDataManager<float>&,
                                                                    double,
                                                                    const PcfDataManager<float>&);
template std::shared_ptr<const PcfCollection<double>> combine<double>(
    double, const PcfDataManager<double>&, double, const PcfDataManager<double>&);

}  // namespace mpcf
