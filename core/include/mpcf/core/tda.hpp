// Persistence barcodes to PCFs: Betti curves, stable ranks and accumulated
// persistence functions, with exact breakpoints.
//
// A barcode is a list of bars (birth, death) with birth finite and
// birth <= death <= +inf. Barcodes cross in CSR form: offsets[n + 1]
// (barcode i owns bars offsets[i] .. offsets[i+1]-1, possibly none) and the
// bars interleaved, birth and death, in double precision.
//
//   Betti curve          beta(t) = #{bars: birth <= t < death}
//   stable rank          sr(t)   = #{bars: death - birth > t}, t >= 0
//                        (the standard contour; sr is 0 for t < 0)
//   accumulated          apf(t)  = sum of (death - birth) over the bars with
//   persistence                    (birth + death) / 2 <= t
//                        (Biscio & Moller, "The accumulated persistence
//                        function, a new useful functional summary statistic
//                        for topological data analysis, with a view to brain
//                        artery trees and spatial point process applications",
//                        J. Comput. Graph. Statist. 28(3), 2019,
//                        arXiv:1611.00630; lifetime summed by meanage)
//
// Infinite bars give constant tails (Betti curves, stable ranks). In the
// accumulated persistence function an infinite bar has meanage +inf, so it
// never enters the sum at a finite t and leaves the function unchanged.
// Bars of length 0 contribute nothing to any of the three. Every result is in
// the canonical form of pcf_builder.hpp, so an empty barcode (or one whose
// bars all have length 0) gives the zero function, the single breakpoint
// (0, 0). Lengths and meanages are computed in double ((b + d) / 2 as
// 0.5 * b + 0.5 * d); each accumulated persistence value is the exact sum of
// its lengths, rounded once. For float32 results the breakpoints are then rounded to
// float32, and breakpoints that meet after rounding collapse into the later
// value (for Betti curves: the Betti curve of the rounded barcode).
#pragma once

#include <cstdint>
#include <memory>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

enum class BarcodeSummary { BettiCurve, StableRank, AccumulatedPersistence };

// Checks the CSR offsets and every bar; throws InvalidArgument naming the
// barcode and the bar ("barcode 2, bar 5: death 1 is smaller than birth 3").
// T is the dtype of the result: a time or value that overflows it is an error.
template <typename T>
void validate_barcodes(BarcodeSummary kind, std::uint64_t n, const std::uint64_t* offsets,
                       const double* bars);

// One PCF per barcode (validates first).
template <typename T>
std::shared_ptr<const PcfCollection<T>> pcfs_from_barcodes(BarcodeSummary kind, std::uint64_t n,
                                                           const std::uint64_t* offsets,
                                                           const double* bars);

const char* barcode_summary_name(BarcodeSummary kind) noexcept;

}  // namespace mpcf
