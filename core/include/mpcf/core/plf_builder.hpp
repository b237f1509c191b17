// Builds a collection of piecewise linear functions (PLFs, DESIGN §10) in
// canonical form from breakpoints computed in double precision: landscapes,
// silhouettes and the pointwise operations on PLFs all end here, so their
// results follow one rule.
//
// A PLF is stored like a PCF (PcfCollection<T>: breakpoints (t_k, v_k),
// strictly increasing finite times); it is 0 before t_0, linear between
// consecutive breakpoints and constant (v_{m-1}) after the last.
//
// Canonical form: every breakpoint that can be removed without changing the
// function *as decided by exact equality of values* is removed, so
//   * the function starts where it stops being zero: v_0 != 0 (a jump at
//     t_0) or v_1 != 0 (a run of leading zeros keeps only its last point);
//   * no breakpoint lies inside a flat run (v_{k-1} == v_k == v_{k+1});
//   * the last value differs from the one before (v_{m-1} != v_{m-2}: a
//     repeated last value is the constant tail already);
//   * values are never -0, and the zero function is the single breakpoint
//     (0, 0).
// Breakpoints on a sloped straight line (collinear) are kept: whether
// rounded values are collinear cannot be decided exactly. Landscapes emit
// none; silhouettes and pointwise results may hold some.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

template <typename T>
class PlfBuilder {
 public:
  PlfBuilder() : offsets_{0} {}

  void reserve(std::uint64_t functions, std::uint64_t breakpoints) {
    offsets_.reserve(functions + 1);
    times_.reserve(breakpoints);
    values_.reserve(breakpoints);
  }

  // Appends the breakpoint (t, v) to the function being built. Times must not
  // decrease between calls. Breakpoints whose times are equal once rounded
  // to T meet in one point: the function's first point keeps the value of
  // the first of them (a landscape still starts at 0), any later point takes
  // the value of the last (a landscape still ends at 0). Either way the value
  // moves by at most the slope times the rounding of t. Returns false, and
  // appends nothing, when t or v is not finite in T.
  bool add(double t, double v) {
    const T tt = static_cast<T>(t);
    const T vv = static_cast<T>(v) + T(0);  // + 0 turns -0 into +0
    if (!std::isfinite(tt) || !std::isfinite(vv)) return false;
    if (pending_.size() > 0 && pending_.back().t == tt) {
      if (pending_.size() > 1) pending_.back().v = vv;
    } else {
      pending_.push_back(PcfPoint<T>{tt, vv});
    }
    return true;
  }

  // Closes the function being built, writing it in canonical form.
  void end_function() {
    const std::vector<PcfPoint<T>>& p = pending_;
    std::size_t first = 0, last = p.size();
    // Leading zeros: the function is 0 up to the last of them anyway.
    while (first + 1 < last && p[first].v == T(0) && p[first + 1].v == T(0)) ++first;
    // A last value equal to the one before adds nothing to the tail.
    while (last - first >= 2 && p[last - 1].v == p[last - 2].v) --last;
    const std::size_t start = times_.size();
    for (std::size_t k = first; k < last; ++k) {
      const bool inside_flat_run =
          k > first && k + 1 < last && p[k - 1].v == p[k].v && p[k].v == p[k + 1].v;
      if (inside_flat_run) continue;
      times_.push_back(p[k].t);
      values_.push_back(p[k].v);
    }
    const bool zero = times_.size() == start || (times_.size() == start + 1 && values_.back() == T(0));
    if (zero) {
      times_.resize(start);
      values_.resize(start);
      times_.push_back(T(0));
      values_.push_back(T(0));
    }
    offsets_.push_back(times_.size());
    pending_.clear();
  }

  // The collection of every function closed so far (validated once more by
  // PcfCollection's constructor, which catches any bug here).
  std::shared_ptr<const PcfCollection<T>> build() const {
    const std::uint64_t n = offsets_.size() - 1;
    return std::make_shared<const PcfCollection<T>>(n, offsets_.data(), times_.data(),
                                                    values_.data(), 1);
  }

 private:
  std::vector<std::uint64_t> offsets_;
  std::vector<T> times_;
  std::vector<T> values_;
  std::vector<PcfPoint<T>> pending_;
};

}  // namespace mpcf
