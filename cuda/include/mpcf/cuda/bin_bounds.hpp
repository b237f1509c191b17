// Bin lower bounds: the pairs a nearest-neighbour search need not walk at
// all (PcfBlockOp with a consumer that gives bounds, pair_bounds.hpp).
//
// Split the time axis into S adjacent bins I_s and give every function f its
// bin integrals F_s = integral of f over I_s. For any pair,
//
//     sum_s |F_s - G_s|  <=  sum_s integral over I_s of |f - g|  <=  L1(f, g),
//
// so a pair whose bin sum exceeds its bound (the larger k-th entry of its
// row's and its column's lists) can enter neither list, like a pair whose
// walk stops early (pair_bounds.hpp), but without any walk. The bin sums of
// a block are an L1 distance between vectors of S numbers: a dense kernel
// (pcf_bin_bound_kernel, bin_bounds.cuh) computes them at a fraction of the
// walks' cost, and the walks then run only for the rows of a tile with a pair
// left (a row list per thread block).
//
// Random functions of DESIGN §6 (m = 128, 2 bins per breakpoint): the bin
// sum is 0.91 of the distance on average (0.84 at least), while the 10th
// neighbour among 10^6 lies at 0.76 of the median distance; with the final
// lists 0.6% of the pairs are left and 9% of the (row, tile) walks (a NumPy
// estimate over 16 rows x 20,000 columns, RESULTS.md).
//
// The test must never drop a pair the walk would keep. The kernels compute
// the bin sum in float (bins rounded to float), the walk its value in T;
// with u = 2^-24, n = nf + ng + 3 terms of the walk (at most `steps`) and
// N_f = sum_s |F_s| (rounded up), standard error bounds give
//
//     L1(f, g) >= sum_s |F_s - G_s| >= binSum (1 - gamma_{S+2}) - u (N_f + N_g)
//     walk value >= L1(f, g) (1 - gamma_n(T)) - n * (T's smallest subnormal)
//
// (gamma_k = k u / (1 - k u)); so a pair is skipped only when
// binSum * c1 - c2 (N_f + N_g) - c3 > bound, evaluated in double, with c1,
// c2, c3 below (each with room to spare). A bin or a norm that is not
// finite makes the norm +inf: that function's pairs are never skipped.
// Plain C++ (no CUDA headers), so host tests can use it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mpcf::cuda {

struct BinSpec {
  std::uint32_t bins = 0;  // S (a multiple of kBinChunk); 0: no bin bounds
  double lo = 0;           // bin s is [lo + s * width, lo + (s + 1) * width)
  double width = 0;
  double c1 = 0;  // skip when binSum * c1 - c2 * (N_f + N_g) - c3 > bound
  double c2 = 0;
  double c3 = 0;
  bool enabled() const noexcept { return bins > 0; }
};

// Bins are staged kBinChunk at a time by the bound kernel.
constexpr std::uint32_t kBinChunk = 32;
constexpr std::uint32_t kMinBins = 64;
constexpr std::uint32_t kMaxBins = 512;

// gamma_k for unit roundoff u (+inf when k u >= 1/2).
inline double error_gamma(double k, double u) {
  const double ku = k * u;
  return ku < 0.5 ? ku / (1 - ku) : std::numeric_limits<double>::infinity();
}

// The bins of a computation whose functions span [lo, hi] (the first and
// last breakpoints over both collections, clipped to the window), hold
// `avgPoints` breakpoints on average and walk at most `steps` steps a pair
// in type T: about 2 bins per breakpoint, kMinBins..kMaxBins of them. No
// bins (bins = 0) when the span is empty or not finite or the margins are
// not small.
template <typename T>
BinSpec make_bin_spec(double lo, double hi, double avgPoints, std::uint64_t steps) {
  BinSpec s;
  if (!(std::isfinite(lo) && std::isfinite(hi) && hi > lo)) return s;
  const double want = std::ceil(2 * std::max(avgPoints, 1.0) / kBinChunk) * kBinChunk;
  const auto bins = static_cast<std::uint32_t>(
      std::clamp(want, double(kMinBins), double(kMaxBins)));
  const double width = (hi - lo) / bins;
  if (!(width > 0) || !std::isfinite(width)) return s;
  constexpr double uf = 0x1p-24;  // the bins and their sums are float
  const double uT = std::numeric_limits<T>::epsilon() / 2;
  const double gBins = error_gamma(bins + 4.0, uf);
  const double gWalk = error_gamma(static_cast<double>(steps) + 8.0, uT);
  if (!(gBins < 1e-3 && gWalk < 1e-3)) return s;
  s.bins = bins;
  s.lo = lo;
  s.width = width;
  // (1 - 2^-30): room for the double arithmetic of the test itself.
  s.c1 = (1 - gBins) * (1 - gWalk) * (1 - 0x1p-30);
  s.c2 = 2 * uf;
  s.c3 = (static_cast<double>(steps) + 8.0) *
         static_cast<double>(std::numeric_limits<T>::denorm_min()) * 2;
  return s;
}

}  // namespace mpcf::cuda
