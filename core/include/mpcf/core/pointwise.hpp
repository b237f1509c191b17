// Pointwise operations on PCF collections: evaluation at given times, sums
// and means (of a whole collection or along one axis of its tensor shape),
// and linear combinations a f + b g. Results are exact in this sense:
//
// * their breakpoints are the union of the inputs' breakpoints, in canonical
//   form (pcf_builder.hpp: a breakpoint that repeats the previous value is
//   dropped; the zero function is the single breakpoint (0, 0));
// * at every t the value is computed from the inputs' values at t alone, in
//   double precision and in a fixed order (sums: a balanced pairwise tree
//   over the functions in index order), then rounded once to the dtype.
//   The same input gives the same bits, and no error accumulates along t.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

enum class Reduction { Sum, Mean };

// out[i * nt + j] = f_i(t[j]) for every function i of `data`. t may hold
// +-inf (f(-inf) = 0, f(+inf) = the last value) but not NaN (InvalidArgument).
template <typename T>
void evaluate(const PcfDataManager<T>& data, const double* t, std::uint64_t nt, T* out);

// A reduction of the functions `data`, grouped: output function g (g in
// 0 .. groups-1) reduces the functions index(g, 0), ..., index(g, len - 1)
// with index(g, k) = (g / inner) * len * inner + k * inner + g % inner
// (the reduction along an axis of length `len` whose inner dimensions have
// `inner` elements; the whole collection is groups = 1, len = n, inner = 1).
// The sum of no function is the zero function; the mean of none is an error.
template <typename T>
std::shared_ptr<const PcfCollection<T>> reduce(const PcfDataManager<T>& data, Reduction op,
                                               std::uint64_t groups, std::uint64_t len,
                                               std::uint64_t inner);

// a * x_i + b * y_j for i in 0 .. max(|x|, |y|) - 1, where j = i, or 0 when
// a collection has one function (broadcast). a and b must be finite.
template <typename T>
std::shared_ptr<const PcfCollection<T>> combine(double a, const PcfDataManager<T>& x, double b,
                                                const PcfDataManager<T>& y);

}  // namespace mpcf
