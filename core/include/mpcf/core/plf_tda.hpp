// Persistence barcodes to piecewise linear functions (DESIGN §10):
// persistence landscapes and silhouettes, with exact breakpoints.
//
// Barcodes cross in the CSR form of tda.hpp: offsets[n + 1] (barcode i owns
// bars offsets[i] .. offsets[i+1]-1, possibly none) and the bars
// interleaved, birth and death, in double precision. The tent of a bar is
//   tent(t) = max(0, min(t - birth, death - t)).
//
//   landscape  lambda_j(t) = the j-th largest tent at t (j = 1 .. k; 0 when
//              fewer than j tents are positive at t)
//   silhouette phi(t) = sum_j w_j tent_j(t) / sum_j w_j,
//              w_j = (death_j - birth_j)^q, q finite and >= 0 (q = 0: the
//              mean tent)
//
// Bars. A bar needs a finite birth and birth <= death; NaN, an infinite
// birth, death < birth, a length that overflows double, or an end point
// that overflows T are errors naming the barcode and the bar. A death of
// +inf is an error unless `clip` is finite: then it is clipped to `clip`
// (only infinite deaths are; finite ones are kept even beyond clip), and a
// bar whose birth is at or after clip contributes nothing. clip = +inf
// means no clipping; NaN or -inf, or a clip that overflows T, is an error.
// Bars of length 0 (after clipping) contribute nothing, to the weights of a
// silhouette neither (also for q = 0).
//
// Results are PLFs in the canonical form of plf_builder.hpp: continuous,
// each starts with value 0 where it stops being 0 (a birth: (b, 0)) and
// ends with value 0 (a death: (d, 0)), and the zero function (no bar of
// positive length; a level j with fewer than j bars overlapping anywhere)
// is the single breakpoint (0, 0).
//
// Exactness. Landscape breakpoints are the points where the slope changes
// (no collinear ones): births and deaths (value 0), and points
// ((b + d) / 2, (d - b) / 2) for a birth b and a death d (peaks, b and d of
// one bar, and valleys where a falling edge d - t meets a rising edge
// t - b); time and value are computed as 0.5 * b + 0.5 * d and 0.5 * d -
// 0.5 * b, each rounded once. Silhouette breakpoints are the distinct
// births, peaks (computed as above) and deaths; the value at each time t is
// sum w_j min(t - b_j, d_j - t) over the bars with b_j < t < d_j, summed in
// double in the order of birth (ties: of death), divided once by the sum
// of the weights (in the same order): the same bits whatever the order of
// the bars in the barcode. Weights are computed as
// (length / longest)^q, which leaves phi unchanged and cannot overflow.
// For float32 results the breakpoints are computed in double and then
// rounded; breakpoints that meet after rounding collapse (plf_builder.hpp:
// the first point of a function keeps its first value, others the last), so
// times stay strictly increasing and functions still start and end at 0.
//
// Cost, per barcode of N bars: landscapes O(N log N + N min(k, N)) (a sweep
// over the births keeping the k largest deaths); silhouettes
// O(N log N + sum over breakpoints of the bars alive there).
#pragma once

#include <cstdint>
#include <memory>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

// Landscapes lambda_1 .. lambda_k of each of the n barcodes: n * k PLFs,
// function i * k + (j - 1) is lambda_j of barcode i (shape (n, k)).
// k >= 1, limited by the result's size alone (result_size.hpp: past 64 bits
// of bytes InvalidArgument, past the physical memory OutOfMemory; levels
// beyond the bars are zero functions). Checks k, then validates every bar;
// throws InvalidArgument.
template <typename T>
std::shared_ptr<const PcfCollection<T>> landscapes(std::uint64_t n, const std::uint64_t* offsets,
                                                   const double* bars, std::uint64_t k,
                                                   double clip);

// The silhouette of weight exponent q of each of the n barcodes: n PLFs.
template <typename T>
std::shared_ptr<const PcfCollection<T>> silhouettes(std::uint64_t n, const std::uint64_t* offsets,
                                                    const double* bars, double q, double clip);

}  // namespace mpcf
