#include "mpcf/core/plf_tda.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "mpcf/core/barcode_checks.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/number_text.hpp"
#include "mpcf/core/plf_builder.hpp"
#include "mpcf/core/result_size.hpp"

namespace mpcf {

namespace {

using detail::bad_bar;
using detail::representable;

// ---- validation (the messages of tda.cpp, plus clipping) ----

template <typename T>
void validate_clip(double clip) {
  if (std::isnan(clip) || clip == -std::numeric_limits<double>::infinity()) {
    throw InvalidArgument("clip is " + number_text(clip) +
                          "; give the time to cut infinite bars at, or +inf for no clipping");
  }
  if (std::isfinite(clip) && !representable<T>(clip)) {
    throw InvalidArgument("clip = " + number_text(clip) + " overflows " + dtype_name<T>());
  }
}

// The death a bar has in the functions: clip for an infinite one.
double clipped(double death, double clip) { return std::isinf(death) ? clip : death; }

template <typename T>
void validate_bar(std::uint64_t i, std::uint64_t j, double b, double d, double clip) {
  if (std::isnan(b)) bad_bar(i, j, b, d, "the birth is NaN");
  if (std::isnan(d)) bad_bar(i, j, b, d, "the death is NaN");
  if (std::isinf(b)) {
    bad_bar(i, j, b, d,
            "the birth is infinite; a bar must be born at a finite time (only deaths may be "
            "+inf)");
  }
  if (d < b) bad_bar(i, j, b, d, "the death is smaller than the birth; a bar needs birth <= death");
  if (std::isinf(d) && std::isinf(clip)) {
    bad_bar(i, j, b, d, "the death is infinite; give clip to cut infinite bars");
  }
  const double death = clipped(d, clip);
  if (!(b < death)) return;  // length 0, or clipped away: contributes nothing
  if (!std::isfinite(death - b)) {
    bad_bar(i, j, b, d,
            std::isinf(d) ? "its length clip - birth overflows double precision"
                          : "its length death - birth overflows double precision");
  }
  if (!representable<T>(b) || !representable<T>(death)) {
    bad_bar(i, j, b, d, std::string("an end point overflows ") + dtype_name<T>());
  }
}

template <typename T>
void validate(std::uint64_t n, const std::uint64_t* offsets, const double* bars, double clip) {
  detail::validate_barcode_offsets(n, offsets);
  validate_clip<T>(clip);
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      validate_bar<T>(i, k - offsets[i], bars[2 * k], bars[2 * k + 1], clip);
    }
  }
}

// ---- shared helpers ----

struct Bar {
  double birth, death;
};

struct Point {
  double t, v;
};

// The bars of one barcode that contribute (positive length once clipped),
// sorted by birth, then death: an order of the values alone, so results do
// not depend on the order of the bars in the barcode.
void contributing_bars(const double* bars, std::uint64_t count, double clip,
                       std::vector<Bar>& out) {
  out.clear();
  for (std::uint64_t k = 0; k < count; ++k) {
    const double b = bars[2 * k], d = clipped(bars[2 * k + 1], clip);
    if (b < d) out.push_back(Bar{b, d});
  }
  std::sort(out.begin(), out.end(), [](const Bar& x, const Bar& y) {
    return x.birth < y.birth || (x.birth == y.birth && x.death < y.death);
  });
}

// (b + d) / 2 and (d - b) / 2, each rounded once (0.5 * x is exact), and
// neither overflows where d - b would.
double midpoint(double b, double d) { return 0.5 * b + 0.5 * d; }
double half_gap(double b, double d) { return 0.5 * d - 0.5 * b; }

template <typename T>
[[noreturn]] void overflow(std::uint64_t barcode, const char* what) {
  throw InvalidArgument("barcode " + std::to_string(barcode) + ": the " + what +
                            " has a value that overflows " + dtype_name<T>(),
                        ErrorLocation::at_barcode(barcode));
}

// ---- landscapes ----
//
// D_j(x), the j-th largest death among the bars born at or before x, is a
// non-decreasing step function of x that changes only at births. At least j
// bars contain [t - h, t + h] iff D_j(t - h) >= t + h, so
//   lambda_j(t) = sup{h >= 0 : D_j(t - h) >= t + h}:
// lambda_j is the boundary of {(x, y) : x <= y <= D_j(x)} seen along the
// lines x + y = 2t (t = (x + y) / 2, h = (y - x) / 2). Going along that
// boundary, a vertical piece x = b is a rising edge t - b, a horizontal
// piece y = d a falling edge d - t; its corners are the breakpoints.

// The path of one level: its breakpoints, in increasing t.
struct LevelPath {
  std::vector<Point> points;
  bool open = false;  // lambda_j > 0 just before the current birth
  double y = 0;       // while open: lambda_j follows the falling edge y - t

  // D_j rises to `ny` at birth x.
  void step(double x, double ny) {
    if (open && y > x) {
      // Valley: the falling edge y - t meets the new rising edge t - x.
      points.push_back(Point{midpoint(x, y), half_gap(x, y)});
    } else {
      close();  // the falling edge reached 0 at t = y <= x
      if (!(ny > x)) return;  // no j bars contain x: lambda_j stays 0
      points.push_back(Point{x, 0.0});
    }
    points.push_back(Point{midpoint(x, ny), half_gap(x, ny)});  // peak
    open = true;
    y = ny;
  }

  void reset() {
    points.clear();  // keeps the capacity, for the next barcode
    open = false;
  }

  // The falling edge runs down to 0 at t = y.
  void close() {
    if (open) points.push_back(Point{y, 0.0});
    open = false;
  }
};

// Adds death d to `top`, the (at most `levels`) largest deaths, descending.
void keep_largest(std::vector<double>& top, std::size_t levels, double d) {
  if (top.size() == levels) {
    if (!(d > top.back())) return;
    top.pop_back();
  }
  top.insert(std::upper_bound(top.begin(), top.end(), d, std::greater<double>()), d);
}

// The paths of levels 1 .. min(k, bars) of bars sorted by birth.
void landscape_paths(const std::vector<Bar>& bars, std::size_t levels, std::vector<double>& top,
                     std::vector<double>& before, std::vector<LevelPath>& paths) {
  if (paths.size() < levels) paths.resize(levels);
  for (std::size_t j = 0; j < levels; ++j) paths[j].reset();
  top.clear();
  for (std::size_t i = 0; i < bars.size();) {
    const double x = bars[i].birth;
    before = top;
    for (; i < bars.size() && bars[i].birth == x; ++i) keep_largest(top, levels, bars[i].death);
    for (std::size_t j = 0; j < top.size(); ++j) {
      if (j >= before.size() || top[j] != before[j]) paths[j].step(x, top[j]);
    }
  }
  for (std::size_t j = 0; j < levels; ++j) paths[j].close();
}

// ---- silhouettes ----

// phi at every distinct birth, peak and death of `bars` (sorted by birth).
template <typename T>
void silhouette(const std::vector<Bar>& bars, double q, std::uint64_t index,
                std::vector<double>& weights, std::vector<double>& times,
                std::vector<std::size_t>& alive, PlfBuilder<T>& out) {
  if (bars.empty()) return out.end_function();
  double longest = 0.0;
  for (const Bar& bar : bars) longest = std::max(longest, bar.death - bar.birth);
  // Weights relative to the longest bar (the largest is 1, none overflows);
  // tents scaled by a power of two, exactly, so no sum overflows either.
  weights.clear();
  double total = 0.0;
  for (const Bar& bar : bars) {
    weights.push_back(std::pow((bar.death - bar.birth) / longest, q));
    total += weights.back();
  }
  int exponent = 0;
  std::frexp(longest, &exponent);
  // Scaled down only when the tents could be large: a longest bar below 1
  // (down to a subnormal length, found by fuzzing: 2^1062 is inf) needs no
  // scaling, as no tent or sum then exceeds 1.
  exponent = std::max(exponent, 0);
  const double down = std::ldexp(1.0, -exponent);  // a longest bar from 2^1023: 2^-1024
  times.clear();
  for (const Bar& bar : bars) {
    times.push_back(bar.birth);
    times.push_back(midpoint(bar.birth, bar.death));
    times.push_back(bar.death);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  alive.clear();
  std::size_t next = 0;
  for (const double t : times) {
    for (; next < bars.size() && bars[next].birth < t; ++next) alive.push_back(next);
    // Sum over the bars alive at t (b < t < d), in birth order; drop the dead.
    double sum = 0.0;
    std::size_t kept = 0;
    for (const std::size_t j : alive) {
      if (!(t < bars[j].death)) continue;
      alive[kept++] = j;
      const double tent = std::min(t - bars[j].birth, bars[j].death - t);
      sum += weights[j] * (tent * down);
    }
    alive.resize(kept);
    // Scaled back by ldexp, not by 2^exponent (inf for a longest bar of
    // 2^1023 or more, found by fuzzing: (39019.5, 1.7e308) was refused).
    if (!out.add(t, std::ldexp(sum / total, exponent))) overflow<T>(index, "silhouette");
  }
  out.end_function();
}

// k is limited by the size of the result alone (result_size.hpp): levels
// beyond a barcode's bars are zero functions, which keeps the shape (n, k)
// for every k, but each still takes a breakpoint and an offset. No barcode:
// an empty result, whatever k.
template <typename T>
void check_landscape_count(std::uint64_t n, std::uint64_t k) {
  if (n == 0) return;
  const std::uint64_t each = kLeastBytesPerFunction<T>;
  const ResultLimits limits = result_limits(each);
  const std::string barcodes = std::to_string(n) + (n == 1 ? " barcode" : " barcodes");
  const std::string what = "k = " + std::to_string(k) + " is too large: the landscapes of " + barcodes +
                           " take at least " + std::to_string(each) + " bytes each (a " +
                           dtype_name<T>() + " breakpoint and an offset), ";
  if (k > limits.in_64_bits / n) {
    throw InvalidArgument(what + "n * k * " + std::to_string(each) +
                          " bytes in all, more than 64 bits can count; k can be at most " +
                          std::to_string(limits.in_64_bits / n) + " for " + barcodes);
  }
  if (k > limits.in_memory / n) {
    throw OutOfMemory(what + bytes_text(n * k * each) + " in all, more than this machine's memory (" +
                      bytes_text(limits.memory_bytes) + "); k can be at most " +
                      std::to_string(limits.in_memory / n) + " here");
  }
}

}  // namespace

template <typename T>
std::shared_ptr<const PcfCollection<T>> landscapes(std::uint64_t n, const std::uint64_t* offsets,
                                                   const double* bars, std::uint64_t k,
                                                   double clip) {
  if (k == 0) throw InvalidArgument("k = 0: ask for at least one landscape (k >= 1)");
  check_landscape_count<T>(n, k);
  validate<T>(n, offsets, bars, clip);
  PlfBuilder<T> out;
  // A hint only: k may be far beyond the number of bars (zero functions).
  const std::uint64_t functions = std::min<std::uint64_t>(n * k, 3 * offsets[n] + n);
  out.reserve(functions, 3 * offsets[n] + functions);
  std::vector<Bar> sorted;
  std::vector<double> top, before;
  std::vector<LevelPath> paths;
  for (std::uint64_t i = 0; i < n; ++i) {
    contributing_bars(bars + 2 * offsets[i], offsets[i + 1] - offsets[i], clip, sorted);
    const std::size_t levels = static_cast<std::size_t>(std::min<std::uint64_t>(k, sorted.size()));
    landscape_paths(sorted, levels, top, before, paths);
    for (std::uint64_t j = 0; j < k; ++j) {
      if (j < levels) {
        for (const Point& p : paths[j].points) {
          if (!out.add(p.t, p.v)) overflow<T>(i, "landscape");
        }
      }
      out.end_function();  // beyond `levels`: the zero function
    }
  }
  return out.build();
}

template <typename T>
std::shared_ptr<const PcfCollection<T>> silhouettes(std::uint64_t n, const std::uint64_t* offsets,
                                                    const double* bars, double q, double clip) {
  if (!std::isfinite(q) || q < 0) {
    throw InvalidArgument("q = " + number_text(q) +
                          ": the weight exponent of a silhouette must be finite and >= 0");
  }
  validate<T>(n, offsets, bars, clip);
  PlfBuilder<T> out;
  out.reserve(n, 3 * offsets[n] + n);
  std::vector<Bar> sorted;
  std::vector<double> weights, times;
  std::vector<std::size_t> alive;
  for (std::uint64_t i = 0; i < n; ++i) {
    contributing_bars(bars + 2 * offsets[i], offsets[i + 1] - offsets[i], clip, sorted);
    silhouette<T>(sorted, q, i, weights, times, alive, out);
  }
  return out.build();
}

template std::shared_ptr<const PcfCollection<float>> landscapes<float>(std::uint64_t,
                                                                       const std::uint64_t*,
                                                                       const double*,
                                                                       std::uint64_t, double);
template std::shared_ptr<const PcfCollection<double>> landscapes<double>(std::uint64_t,
                                                                         const std::uint64_t*,
                                                                         const double*,
                                                                         std::uint64_t, double);
template std::shared_ptr<const PcfCollection<float>> silhouettes<float>(std::uint64_t,
                                                                        const std::uint64_t*,
                                                                        const double*, double,
                                                                        double);
template std::shared_ptr<const PcfCollection<double>> silhouettes<double>(std::uint64_t,
                                                                          const std::uint64_t*,
                                                                          const double*, double,
                                                                          double);

}  // namespace mpcf
