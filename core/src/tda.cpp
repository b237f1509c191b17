#include "mpcf/core/tda.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "mpcf/core/barcode_checks.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/number_text.hpp"
#include "mpcf/core/pcf_builder.hpp"

namespace mpcf {

namespace detail {

std::string bar_prefix(std::uint64_t barcode, std::uint64_t bar, double birth, double death) {
  return "barcode " + std::to_string(barcode) + ", bar " + std::to_string(bar) + " (birth " +
         number_text(birth) + ", death " + number_text(death) + "): ";
}

[[noreturn]] void bad_bar(std::uint64_t barcode, std::uint64_t bar, double birth, double death,
                          const std::string& what) {
  throw InvalidArgument(bar_prefix(barcode, bar, birth, death) + what,
                        ErrorLocation::at_barcode(barcode, static_cast<std::int64_t>(bar)));
}

void validate_barcode_offsets(std::uint64_t n, const std::uint64_t* offsets) {
  if (offsets[0] != 0) {
    throw InvalidArgument("barcode offsets[0] is " + std::to_string(offsets[0]) +
                          "; it must be 0");
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i]) {
      throw InvalidArgument("barcode offsets[" + std::to_string(i + 1) + "] = " +
                            std::to_string(offsets[i + 1]) + " is smaller than offsets[" +
                            std::to_string(i) + "] = " + std::to_string(offsets[i]) +
                            "; offsets must be non-decreasing");
    }
  }
  if (offsets[n] > std::numeric_limits<std::uint64_t>::max() / 2) {
    throw InvalidArgument("barcode offsets[" + std::to_string(n) + "] = " +
                          std::to_string(offsets[n]) + " is too large");
  }
}

}  // namespace detail

namespace {

using detail::bad_bar;
using detail::representable;
using detail::validate_barcode_offsets;

double meanage(double birth, double death) { return 0.5 * birth + 0.5 * death; }


template <typename T>
void validate_bar(BarcodeSummary kind, std::uint64_t i, std::uint64_t j, double b, double d) {
  if (std::isnan(b)) bad_bar(i, j, b, d, "the birth is NaN");
  if (std::isnan(d)) bad_bar(i, j, b, d, "the death is NaN");
  if (std::isinf(b)) {
    bad_bar(i, j, b, d,
            "the birth is infinite; a bar must be born at a finite time (only deaths may be "
            "+inf)");
  }
  if (d < b) bad_bar(i, j, b, d, "the death is smaller than the birth; a bar needs birth <= death");
  if (b == d || std::isinf(d)) {
    // Length 0 contributes nothing; an infinite bar only its birth (Betti)
    // or nothing finite (stable rank: a count; APF: no finite meanage).
    if (kind == BarcodeSummary::BettiCurve && b < d && !representable<T>(b)) {
      bad_bar(i, j, b, d, std::string("the birth overflows ") + dtype_name<T>());
    }
    return;
  }
  if (kind == BarcodeSummary::BettiCurve) {
    // A Betti curve needs the ends alone: a length beyond double (ends of
    // opposite signs near the range) is no reason to refuse (found by
    // fuzzing).
    if (!representable<T>(b) || !representable<T>(d)) {
      bad_bar(i, j, b, d, std::string("an end point overflows ") + dtype_name<T>());
    }
    return;
  }
  const double length = d - b;
  if (!std::isfinite(length)) {
    bad_bar(i, j, b, d, "its length death - birth overflows double precision");
  }
  switch (kind) {
    case BarcodeSummary::BettiCurve:
      break;
    case BarcodeSummary::StableRank:
      if (!representable<T>(length)) {
        bad_bar(i, j, b, d, std::string("its length overflows ") + dtype_name<T>());
      }
      break;
    case BarcodeSummary::AccumulatedPersistence:
      if (!representable<T>(meanage(b, d)) || !representable<T>(length)) {
        bad_bar(i, j, b, d, std::string("its meanage or length overflows ") + dtype_name<T>());
      }
      break;
  }
}

// A running sum of doubles, correctly rounded at every read: Shewchuk's
// non-overlapping partials, read out as CPython's math.fsum does (round half
// to even across partials). So the accumulated persistence at each meanage is
// the exact sum of the lengths, rounded once, whatever their order.
class ExactSum {
 public:
  void add(double x) {
    std::size_t kept = 0;
    for (double y : partials_) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials_[kept++] = lo;
      x = hi;
    }
    partials_.resize(kept);
    partials_.push_back(x);
  }

  double value() const {
    std::size_t n = partials_.size();
    if (n == 0) return 0.0;
    double hi = partials_[--n];
    double lo = 0.0;
    while (n > 0) {
      const double x = hi;
      const double y = partials_[--n];
      hi = x + y;
      lo = y - (hi - x);
      if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0.0 && partials_[n - 1] < 0.0) || (lo > 0.0 && partials_[n - 1] > 0.0))) {
      const double y = lo * 2.0;
      const double x = hi + y;
      if (y == x - hi) hi = x;
    }
    return hi;
  }

 private:
  std::vector<double> partials_;
};

[[noreturn]] void overflow(std::uint64_t barcode, BarcodeSummary kind, const char* dtype) {
  throw InvalidArgument("barcode " + std::to_string(barcode) + ": the " +
                            barcode_summary_name(kind) + " has a value that overflows " + dtype,
                        ErrorLocation::at_barcode(barcode));
}

// beta(t) = #{birth <= t < death}: +1 at each birth, -1 at each finite death.
template <typename T>
void betti_curve(const double* bars, std::uint64_t count, std::uint64_t index,
                 std::vector<std::pair<double, std::int64_t>>& events, PcfBuilder<T>& out) {
  events.clear();
  for (std::uint64_t k = 0; k < count; ++k) {
    const double b = bars[2 * k], d = bars[2 * k + 1];
    if (!(b < d)) continue;
    events.emplace_back(b, 1);
    if (std::isfinite(d)) events.emplace_back(d, -1);
  }
  std::sort(events.begin(), events.end());
  std::int64_t alive = 0;
  for (std::size_t k = 0; k < events.size();) {
    const double t = events[k].first;
    for (; k < events.size() && events[k].first == t; ++k) alive += events[k].second;
    if (!out.add(t, static_cast<double>(alive))) overflow(index, BarcodeSummary::BettiCurve, dtype_name<T>());
  }
  out.end_function();
}

// sr(t) = #{length > t} for t >= 0: starts at the number of bars of positive
// length and drops at each finite length.
template <typename T>
void stable_rank(const double* bars, std::uint64_t count, std::uint64_t index,
                 std::vector<double>& lengths, PcfBuilder<T>& out) {
  lengths.clear();
  std::int64_t positive = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const double b = bars[2 * k], d = bars[2 * k + 1];
    if (!(b < d)) continue;
    ++positive;
    if (std::isfinite(d)) lengths.push_back(d - b);
  }
  std::sort(lengths.begin(), lengths.end());
  std::int64_t remaining = positive;
  if (!out.add(0.0, static_cast<double>(remaining))) overflow(index, BarcodeSummary::StableRank, dtype_name<T>());
  for (std::size_t k = 0; k < lengths.size();) {
    const double t = lengths[k];
    for (; k < lengths.size() && lengths[k] == t; ++k) --remaining;
    if (!out.add(t, static_cast<double>(remaining))) overflow(index, BarcodeSummary::StableRank, dtype_name<T>());
  }
  out.end_function();
}

// apf(t) = sum of the lengths of the finite bars whose meanage is <= t,
// each value the exact sum rounded once.
template <typename T>
void accumulated_persistence(const double* bars, std::uint64_t count, std::uint64_t index,
                             std::vector<std::pair<double, double>>& bars_by_meanage,
                             PcfBuilder<T>& out) {
  bars_by_meanage.clear();
  for (std::uint64_t k = 0; k < count; ++k) {
    const double b = bars[2 * k], d = bars[2 * k + 1];
    if (!(b < d) || !std::isfinite(d)) continue;
    bars_by_meanage.emplace_back(meanage(b, d), d - b);
  }
  std::sort(bars_by_meanage.begin(), bars_by_meanage.end());
  ExactSum sum;
  for (std::size_t k = 0; k < bars_by_meanage.size();) {
    const double t = bars_by_meanage[k].first;
    for (; k < bars_by_meanage.size() && bars_by_meanage[k].first == t; ++k) {
      sum.add(bars_by_meanage[k].second);
    }
    if (!out.add(t, sum.value())) overflow(index, BarcodeSummary::AccumulatedPersistence, dtype_name<T>());
  }
  out.end_function();
}

}  // namespace

const char* barcode_summary_name(BarcodeSummary kind) noexcept {
  switch (kind) {
    case BarcodeSummary::BettiCurve: return "Betti curve";
    case BarcodeSummary::StableRank: return "stable rank";
    case BarcodeSummary::AccumulatedPersistence: return "accumulated persistence function";
  }
  return "barcode summary";
}

template <typename T>
void validate_barcodes(BarcodeSummary kind, std::uint64_t n, const std::uint64_t* offsets,
                       const double* bars) {
  validate_barcode_offsets(n, offsets);
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      validate_bar<T>(kind, i, k - offsets[i], bars[2 * k], bars[2 * k + 1]);
    }
  }
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> pcfs_from_barcodes(BarcodeSummary kind, std::uint64_t n,
                                                           const std::uint64_t* offsets,
                                                           const double* bars) {
  validate_barcodes<T>(kind, n, offsets, bars);
  PcfBuilder<T> out;
  out.reserve(n, 2 * offsets[n] + n);
  std::vector<std::pair<double, std::int64_t>> events;
  std::vector<double> lengths;
  std::vector<std::pair<double, double>> by_meanage;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double* first = bars + 2 * offsets[i];
    const std::uint64_t count = offsets[i + 1] - offsets[i];
    switch (kind) {
      case BarcodeSummary::BettiCurve: betti_curve<T>(first, count, i, events, out); break;
      case BarcodeSummary::StableRank: stable_rank<T>(first, count, i, lengths, out); break;
      case BarcodeSummary::AccumulatedPersistence:
        accumulated_persistence<T>(first, count, i, by_meanage, out);
        break;
    }
  }
  return out.build();
}

template void validate_barcodes<float>(BarcodeSummary, std::uint64_t, const std::uint64_t*,
                                       const double*);
template void validate_barcodes<double>(BarcodeSummary, std::uint64_t, const std::uint64_t*,
                                        const double*);
template std::shared_ptr<const PcfCollection<float>> pcfs_from_barcodes<float>(
    BarcodeSummary, std::uint64_t, const std::uint64_t*, const double*);
template std::shared_ptr<const PcfCollection<double>> pcfs_from_barcodes<double>(
    BarcodeSummary, std::uint64_t, const std::uint64_t*, const double*);

}  // namespace mpcf
