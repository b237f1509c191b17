// Pointwise operations on collections of piecewise linear functions (PLFs,
// DESIGN §10; stored as PcfCollection<T>, read as 0 before the first
// breakpoint, linear between breakpoints, constant after the last):
// evaluation at given times, sums and means, linear combinations a f + b g.
// The same entry points as pointwise.hpp, for the other reading of the data.
//
// * Breakpoints of a result are the union of the inputs' breakpoints, in the
//   canonical form of plf_builder.hpp (flat runs and leading zeros dropped;
//   the zero function is the single breakpoint (0, 0)). Inputs that are
//   identically 0 add no breakpoint.
// * The value at a breakpoint t is computed from the inputs' values at t, in
//   double precision and a fixed order, then rounded once to T. An input's
//   value at t is its breakpoint value, or the linear interpolation of its
//   two neighbouring breakpoints (exact at breakpoints: v_k at t_k). A sum is
//   a balanced pairwise tree over the functions in index order whose every
//   node is a PLF on the union of its leaves' breakpoints: a node's value at
//   a time that is not one of its own breakpoints is interpolated from its
//   neighbouring values (the node is linear there, so this is the sum of its
//   leaves up to rounding). The same input gives the same bits.
// * A PLF jumps only at its first breakpoint (from 0 to v_0). A sum whose
//   terms jump (c v_0 != 0) at a time after another term is already non-zero
//   would jump inside, which no PLF can represent: InvalidArgument naming
//   the function and its first breakpoint. Terms that jump at the same time
//   by amounts that add up to 0 in double precision are accepted, and terms
//   that are identically 0 (or have coefficient 0) never count.
#pragma once

#include <cstdint>
#include <memory>

#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/pointwise.hpp"

namespace mpcf {

// out[i * nt + j] = f_i(t[j]) for every function i of `data`. t may hold
// +-inf (f(-inf) = 0, f(+inf) = the last value) but not NaN (InvalidArgument).
template <typename T>
void plf_evaluate(const PcfDataManager<T>& data, const double* t, std::uint64_t nt, T* out);

// The sums or means of groups of functions, grouped as reduce() in
// pointwise.hpp: output function g reduces index(g, 0 .. len - 1) with
// index(g, k) = (g / inner) * len * inner + k * inner + g % inner. The sum of
// no function is the zero function; the mean of none is an error. A mean is
// the sum (in double) divided by len, rounded once.
template <typename T>
std::shared_ptr<const PcfCollection<T>> plf_reduce(const PcfDataManager<T>& data, Reduction op,
                                                   std::uint64_t groups, std::uint64_t len,
                                                   std::uint64_t inner);

// a * x_i + b * y_j for i in 0 .. max(|x|, |y|) - 1, where j = i, or 0 when
// a collection has one function (broadcast). a and b must be finite.
template <typename T>
std::shared_ptr<const PcfCollection<T>> plf_combine(double a, const PcfDataManager<T>& x,
                                                    double b, const PcfDataManager<T>& y);

}  // namespace mpcf
