// Kernel matrix-vector products as a block consumer (DESIGN §8): y = K V,
// V row-major (|Y|, r), y row-major (|X|, r), with K_ij = k(f_i, g_j):
//
//   L2:        the L2 inner product (the blocks hold K itself);
//   Gaussian:  exp(-d_p^2 / (2 s^2)), computed as exp(-(d/s)^2 / 2);
//   Laplacian: exp(-d_p / s)
//
// (the blocks hold d_p). On the symmetric plane (Y = X) each pair i > j is
// computed once and serves K_ij V_j (row i) and K_ji V_i (row j); the
// diagonal is computed for L2 and is exactly 1 for the other kernels.
//
// Reproducible bits: y_ic is the exact-sum value (exact_sum.hpp) of the
// terms fl(K_ij * V_jc) over j, so any blocks, threads or GPUs give the same
// bits. The grids come from a bound on |K_ij V_jc| over j: max_j |V_jc| for
// the Gaussian and Laplacian kernels (0 <= K <= 1); for L2 the Hölder bounds
// |<f, g>| <= ||f||_inf ||g||_1 and <= ||f||_1 ||g||_inf over the window
// (an infinite norm arises only from a non-vanishing tail on an unbounded
// window, and a pair of two such functions has an infinite inner product,
// which the sum handles as a flag: IEEE rules, inf * 0 = NaN).
//
// On the CPU a block's terms are rounded and added in SIMD lanes
// (simd_exact_sum.hpp): the terms of a block row's sums in lanes along the
// row, and on the symmetric plane the sums of the block's columns one per
// lane. Sums of terms on fixed grids are exact in any order, so the lanes,
// like the blocks, change no bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpcf/core/plf_operations.hpp"

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/exact_sum.hpp"
#include "mpcf/core/host_device.hpp"
#include "mpcf/core/simd_exact_sum.hpp"

namespace mpcf {

enum class KernelKind { L2 = 0, Gaussian = 1, Laplacian = 2 };

struct KernelSpec {
  KernelKind kind = KernelKind::L2;
  double p = 2.0;      // the distance's exponent (Gaussian, Laplacian)
  double scale = 1.0;  // s (Gaussian, Laplacian)
  bool uses_distance() const { return kind != KernelKind::L2; }
};

// K of a block value v (the inner product for L2, else the distance), in
// double. The same function on host and device.
MPCF_HD double kernel_value(KernelKind kind, double v, double scale) {
  switch (kind) {
    case KernelKind::Gaussian: {
      const double z = v / scale;
#if defined(__CUDA_ARCH__)
      return ::exp(-0.5 * (z * z));
#else
      return std::exp(-0.5 * (z * z));
#endif
    }
    case KernelKind::Laplacian:
#if defined(__CUDA_ARCH__)
      return ::exp(-(v / scale));
#else
      return std::exp(-(v / scale));
#endif
    case KernelKind::L2:
    default:
      return v;
  }
}

// Norms of one PCF over the window [a, b), in double: L-infinity, and L1
// over its bounded pieces (an unbounded last piece left out).
struct FunctionNorms {
  double l1 = 0;
  double linf = 0;
};
template <typename Point>
FunctionNorms function_norms(const Point* f, std::size_t m, double a, double b) {
  FunctionNorms n;
  for (std::size_t k = 0; k < m; ++k) {
    const double l = std::max(static_cast<double>(f[k].t), a);
    const double r = std::min(k + 1 < m ? static_cast<double>(f[k + 1].t)
                                        : std::numeric_limits<double>::infinity(),
                              b);
    const double v = std::fabs(static_cast<double>(f[k].v));
    if (!(r > l) || v == 0) continue;
    // A bounded piece (finite end) counts even when its width overflows:
    // L1b is then +inf, and the sum's bound with it.
    if (r < std::numeric_limits<double>::infinity()) n.l1 += (r - l) * v;
    n.linf = std::max(n.linf, v);
  }
  return n;
}

// The same norms of a PLF, its own: on each segment [t_k, t_{k+1}] cut to
// the window, f is linear between its values fl and fr at the cut ends
// (interpolated as the PLF walk interpolates), so its largest |f| is
// max(|fl|, |fr|) and the integral of |f| is the width times the mean of
// |f| (split at the root where f changes sign; no square or sum overflows);
// after the last breakpoint f is the constant v_{m-1} (unbounded: left out
// of L1).
template <typename Point>
FunctionNorms linear_function_norms(const Point* f, std::size_t m, double a, double b) {
  FunctionNorms n;
  auto value = [&](std::size_t k, double x) {
    const double t0 = static_cast<double>(f[k].t), t1 = static_cast<double>(f[k + 1].t);
    const double v0 = static_cast<double>(f[k].v), v1 = static_cast<double>(f[k + 1].v);
    return x <= t0 ? v0 : x >= t1 ? v1 : detail::plf_interpolate(t0, v0, t1, v1, x);
  };
  for (std::size_t k = 0; k < m; ++k) {
    const bool last = k + 1 == m;
    const double l = std::max(static_cast<double>(f[k].t), a);
    const double r = std::min(last ? std::numeric_limits<double>::infinity()
                                   : static_cast<double>(f[k + 1].t),
                              b);
    if (!(r > l)) continue;
    const double fl = last ? static_cast<double>(f[k].v) : value(k, l);
    const double fr = last ? fl : value(k, r);
    const double A = std::min(std::fabs(fl), std::fabs(fr)), B = std::max(std::fabs(fl), std::fabs(fr));
    if (B == 0) continue;
    n.linf = std::max(n.linf, B);
    if (r == std::numeric_limits<double>::infinity()) continue;
    // Same sign: (A + B) / 2; opposite signs: (A^2 + B^2) / (2 (A + B)),
    // written ((B - A) + A * A / ((A + B) / 2)) / 2.
    const double mean = (fl < 0) == (fr < 0) || A == 0
                            ? 0.5 * A + 0.5 * B
                            : 0.5 * ((B - A) + A * (A / (0.5 * A + 0.5 * B)));
    n.l1 += (r - l) * mean;
  }
  return n;
}

template <typename T>
class MatvecConsumer final : public BlockConsumer<T> {
 public:
  // V: nCols x r (row-major), out: nRows x r. rowNorms / colNorms: the
  // norms of X's and Y's functions over the window (only used for L2; the
  // same for the symmetric plane).
  // The consumer keeps its own copy of V (taken when the task starts), so
  // the caller may free or overwrite V as soon as the start call returns,
  // and the checks made at the start hold for the values used.
  MatvecConsumer(KernelSpec spec, std::vector<T> V, std::size_t r, T* out, std::size_t nRows,
                 std::size_t nCols, std::vector<FunctionNorms> rowNorms,
                 std::vector<FunctionNorms> colNorms)
      : spec_(spec),
        Vstore_(std::move(V)),
        V_(Vstore_.data()),
        r_(r),
        out_(out),
        nRows_(nRows),
        nCols_(nCols),
        rowNorms_(std::move(rowNorms)),
        colNorms_(std::move(colNorms)),
        locks_(kLockStripes) {}
  // V (nCols x r, row-major) copied.
  MatvecConsumer(KernelSpec spec, const T* V, std::size_t r, T* out, std::size_t nRows,
                 std::size_t nCols, std::vector<FunctionNorms> rowNorms,
                 std::vector<FunctionNorms> colNorms)
      : MatvecConsumer(spec, std::vector<T>(V, V + nCols * r), r, out, nRows, nCols,
                       std::move(rowNorms), std::move(colNorms)) {}

  ConsumerKind kind() const noexcept override { return ConsumerKind::Matvec; }
  const KernelSpec& spec() const noexcept { return spec_; }
  std::size_t r() const noexcept { return r_; }
  const T* V() const noexcept { return V_; }
  bool symmetric() const noexcept { return symmetric_; }
  // M1 of output (i, c): grids()[i * r + c] when grids_per_row(), else
  // grids()[c]; level ratio().
  const std::vector<double>& grids() const noexcept { return grids_; }
  bool grids_per_row() const noexcept { return spec_.kind == KernelKind::L2; }
  double ratio() const noexcept { return ratio_; }
  // The instruction set of consume()'s exact sums (unset: cpu_simd_default()
  // when the task starts; the same bits whichever).
  void set_simd(CpuSimd s) { simd_ = s; }

  void prepare(const PairPlane& plane) override {
    if (plane.nRows != nRows_ || plane.nCols != nCols_) {
      throw std::logic_error("MatvecConsumer: the plane has another size");
    }
    symmetric_ = plane.symmetric();
    skip_ = plane.skip;
    const std::uint64_t terms = symmetric_ ? nRows_ : nCols_;
    ratio_ = exact_sum_level_ratio(terms);
    if (grids_per_row()) {
      // A finite <f, g> is at most ||f||_inf L1b(g) + ||g||_inf L1b(f),
      // L1b the L1 norm over the bounded pieces: where both functions are
      // on their unbounded last pieces the integrand is exactly 0 (else
      // <f, g> is infinite, which the sums flag, not bound); elsewhere one
      // of them is on a bounded piece. So for output (i, c) the terms are at
      // most ||f_i||_inf max_j L1b(g_j) |V_jc| + L1b(f_i) max_j ||g_j||_inf |V_jc|.
      // A factor of 0 makes its product 0 even against +inf (a norm over no
      // bounded piece times an overflowing |V| bound: found by fuzzing,
      // 0 * inf gave a NaN bound and a refusal naming "-nan"). The products
      // are formed in long double (x86-64: 80 bits, exponent to 1e4932), so
      // that only a bound B itself beyond the double range is refused, not
      // one whose factors overflow double on the way (found by fuzzing:
      // ||g||_inf = 1.8e308 times |V| = 15 overflowed though B = 5e138).
      using Wide = long double;
      const auto times = [](Wide a, Wide b) { return a == 0 || b == 0 ? Wide(0) : a * b; };
      std::vector<Wide> byL1(r_, 0), byLinf(r_, 0);
      for (std::size_t j = 0; j < nCols_; ++j) {
        const FunctionNorms& g = colNorms_[j];
        for (std::size_t c = 0; c < r_; ++c) {
          const Wide v = std::fabs(static_cast<Wide>(V_[j * r_ + c]));
          byL1[c] = std::max(byL1[c], times(g.l1, v));
          byLinf[c] = std::max(byLinf[c], times(g.linf, v));
        }
      }
      grids_.resize(nRows_ * r_);
      for (std::size_t i = 0; i < nRows_; ++i) {
        const FunctionNorms& f = rowNorms_[i];
        for (std::size_t c = 0; c < r_; ++c) {
          const Wide bound = times(f.linf, byL1[c]) + times(f.l1, byLinf[c]);
          set_grid(grids_[i * r_ + c], static_cast<double>(bound), terms, i, c);
        }
      }
    } else {
      grids_.resize(r_);
      for (std::size_t c = 0; c < r_; ++c) {
        double bound = 0;
        for (std::size_t j = 0; j < nCols_; ++j) {
          bound = std::max(bound, std::fabs(static_cast<double>(V_[j * r_ + c])));
        }
        set_grid(grids_[c], bound, terms, 0, c);
      }
    }
    levels_.resize(grids_.size());
    for (std::size_t e = 0; e < grids_.size(); ++e) levels_[e] = ExactSumLevels::of(grids_[e], ratio_);
    // V in double, as the terms take it: row-major (the column side's
    // factors) and transposed, each column of V a row padded with the slack
    // the kernels read (the row side's factors).
    ldV_ = nCols_ + kExactSumReadSlack;
    Vd_.resize(nCols_ * r_);
    Vt_.assign(r_ * ldV_, 0.0);
    for (std::size_t j = 0; j < nCols_; ++j) {
      for (std::size_t c = 0; c < r_; ++c) {
        Vd_[j * r_ + c] = static_cast<double>(V_[j * r_ + c]);
        Vt_[c * ldV_ + j] = Vd_[j * r_ + c];
      }
    }
    // The column side's grids of the L2 kernel, per level, laid out as Vt_
    // (the slack: a grid of terms up to 0.5, for lanes read past the end).
    for (auto& a : colLevels_) a.clear();
    if (symmetric_ && grids_per_row()) {
      const ExactSumLevels pad = ExactSumLevels::of(1.5, ratio_);
      colLevels_[0].assign(r_ * ldV_, pad.m1);
      colLevels_[1].assign(r_ * ldV_, pad.m2);
      colLevels_[2].assign(r_ * ldV_, pad.m3);
      colLevels_[3].assign(r_ * ldV_, pad.limit);
      for (std::size_t j = 0; j < nRows_; ++j) {
        for (std::size_t c = 0; c < r_; ++c) {
          const ExactSumLevels& g = levels_[j * r_ + c];
          colLevels_[0][c * ldV_ + j] = g.m1;
          colLevels_[1][c * ldV_ + j] = g.m2;
          colLevels_[2][c * ldV_ + j] = g.m3;
          colLevels_[3][c * ldV_ + j] = g.limit;
        }
      }
    }
    if (!simd_ || !cpu_simd_supported(*simd_)) simd_ = cpu_simd_default();
    sums_.assign(nRows_ * r_ * ExactSum::kLevels, 0.0);
    flags_.assign(nRows_ * r_, 0u);
  }

  // A block's terms: K of its kept pairs (kernel_value, in double), then
  // exact_sum_block adds them, in SIMD lanes, into partial sums of its rows
  // (and, on the symmetric plane, of its columns), merged into the outputs
  // row by row.
  void consume(const BlockPiece<T>& piece) override {
    const BlockInfo& b = piece.block;
    const std::size_t L = ExactSum::kLevels;
    const std::size_t nr = b.n_rows(), nc = b.n_cols();
    BlockScratch& s = scratch();
    // Rows of K padded to whole vectors, and the slack the kernels read.
    const std::size_t ldk = (nc + kExactSumReadSlack - 1) / kExactSumReadSlack * kExactSumReadSlack;
    double* k = s.k.get(nr * ldk + kExactSumReadSlack);
    s.rowCount.resize(nr);
    s.colCount.resize(symmetric_ ? nr : 0);
    for (std::size_t rr = 0; rr < nr; ++rr) {
      const std::size_t i = b.rows.first + rr;
      // The kept pairs of a row are a prefix of its columns (pair_kept);
      // the column side takes those with j < i (the diagonal's term is the
      // row's).
      const std::size_t end = kept_column_end(i, skip_, b.cols.last + 1);
      const std::size_t count = end > b.cols.first ? end - b.cols.first : 0;
      s.rowCount[rr] = static_cast<std::uint32_t>(count);
      if (symmetric_) {
        s.colCount[rr] = static_cast<std::uint32_t>(std::min(count, i > b.cols.first ? i - b.cols.first : 0));
      }
      double* krow = k + rr * ldk;
      for (std::size_t cc = 0; cc < count; ++cc) {
        krow[cc] = kernel_value(spec_.kind, static_cast<double>(piece.at(rr, cc)), spec_.scale);
      }
    }
    s.rowSums.assign(nr * r_ * L, 0.0);
    s.rowFlags.assign(nr * r_, 0u);
    ExactSumBlock e;
    e.k = k;
    e.ldk = ldk;
    e.nr = nr;
    e.nc = nc;
    e.r = r_;
    e.rowCount = s.rowCount.data();
    e.w = Vt_.data() + b.cols.first;
    e.ldw = ldV_;
    e.rowLevels = levels_.data() + (grids_per_row() ? b.rows.first * r_ : 0);
    e.rowLevelsStride = grids_per_row() ? r_ : 0;
    e.rowSums = s.rowSums.data();
    e.rowFlags = s.rowFlags.data();
    if (symmetric_) {
      s.colSums.assign(nc * r_ * L, 0.0);
      s.colFlags.assign(nc * r_, 0u);
      e.colCount = s.colCount.data();
      e.u = Vd_.data() + b.rows.first * r_;
      e.ldu = r_;
      if (grids_per_row()) {
        const std::size_t at = b.cols.first;
        e.colLevels = {colLevels_[0].data() + at, colLevels_[1].data() + at,
                       colLevels_[2].data() + at, colLevels_[3].data() + at, ldV_};
      } else {
        e.sharedLevels = levels_.data();
      }
      e.colSums = s.colSums.data();
      e.colFlags = s.colFlags.data();
    }
    exact_sum_block(*simd_, e);
    for (std::size_t rr = 0; rr < nr; ++rr) {
      if (s.rowCount[rr]) merge_partials(b.rows.first + rr, &s.rowSums[rr * r_ * L], &s.rowFlags[rr * r_]);
    }
    if (symmetric_) {
      for (std::size_t cc = 0; cc < nc; ++cc) {
        merge_partials(b.cols.first + cc, &s.colSums[cc * r_ * L], &s.colFlags[cc * r_]);
      }
    }
  }

  // Adds partial level sums (r x kLevels) and flags (r) into output row i.
  // Exact, so any order gives the same bits. Thread-safe.
  void merge_partials(std::size_t i, const double* sums, const std::uint32_t* flags) {
    std::lock_guard<std::mutex> lock(locks_[i % kLockStripes]);
    double* s = &sums_[i * r_ * ExactSum::kLevels];
    for (std::size_t e = 0; e < r_ * ExactSum::kLevels; ++e) s[e] += sums[e];
    for (std::size_t c = 0; c < r_; ++c) flags_[i * r_ + c] |= flags[c];
  }

  void finish() override {
    const std::size_t L = ExactSum::kLevels;
    // K_ii = exp(0) = 1 for the kernels of a distance (the diagonal is not
    // computed on their plane).
    if (symmetric_ && !pair_kept(std::int64_t(0), skip_)) {
      for (std::size_t i = 0; i < nRows_; ++i) {
        for (std::size_t c = 0; c < r_; ++c) {
          exact_sum_add(static_cast<double>(V_[i * r_ + c]), levels(i, c),
                        &sums_[(i * r_ + c) * L], flags_[i * r_ + c]);
        }
      }
    }
    for (std::size_t e = 0; e < nRows_ * r_; ++e) {
      if (flags_[e] & ExactSum::kOutOfRange) {
        throw std::logic_error("kernel_matvec: a term of output (" + std::to_string(e / r_) + ", " +
                               std::to_string(e % r_) + ") exceeds its bound");
      }
    }
    for (std::size_t e = 0; e < nRows_ * r_; ++e) {
      out_[e] = static_cast<T>(exact_sum_value(&sums_[e * L], flags_[e]));
    }
  }

  void poison() noexcept override {
    for (std::size_t e = 0; e < nRows_ * r_; ++e) out_[e] = std::numeric_limits<T>::quiet_NaN();
  }

 private:
  static constexpr std::size_t kLockStripes = 1024;

  const ExactSumLevels& levels(std::size_t i, std::size_t c) const {
    return levels_[grids_per_row() ? i * r_ + c : c];
  }

  // A buffer of doubles aligned to 64 bytes (whole cache lines per row of K).
  class AlignedDoubles {
   public:
    double* get(std::size_t n) {
      if (n + 8 > store_.size()) store_.assign(n + 8, 0.0);
      void* p = store_.data();
      std::size_t space = store_.size() * sizeof(double);
      return static_cast<double*>(std::align(64, n * sizeof(double), p, space));
    }

   private:
    std::vector<double> store_;
  };
  // One thread's buffers for consume().
  struct BlockScratch {
    AlignedDoubles k;
    std::vector<std::uint32_t> rowCount, colCount, rowFlags, colFlags;
    std::vector<double> rowSums, colSums;
  };
  static BlockScratch& scratch() {
    thread_local BlockScratch s;
    return s;
  }

  void set_grid(double& m1, double bound, std::uint64_t terms, std::size_t i, std::size_t c) {
    ExactSumGrid g;
    if (!std::isfinite(bound) || !ExactSumGrid::for_bound(bound, terms, g)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", bound);
      throw InvalidArgument(
          "kernel_matvec: the terms of output (" + std::to_string(i) + ", " + std::to_string(c) +
          ") may reach " + text +
          ", beyond the range of a reproducible sum (about 1e300 / n); scale V or the data down");
    }
    m1 = g.m1;
  }

  KernelSpec spec_;
  std::vector<T> Vstore_;
  const T* V_;
  std::size_t r_;
  T* out_;
  std::size_t nRows_;
  std::size_t nCols_;
  std::vector<FunctionNorms> rowNorms_;
  std::vector<FunctionNorms> colNorms_;
  bool symmetric_ = false;
  TriangleSkipMode skip_ = TriangleSkipMode::None;
  double ratio_ = 1.0;
  std::vector<double> grids_;
  std::vector<ExactSumLevels> levels_;  // of grids_
  std::size_t ldV_ = 0;
  std::vector<double> Vd_, Vt_;
  std::vector<double> colLevels_[4];
  std::optional<CpuSimd> simd_;
  std::vector<double> sums_;
  std::vector<std::uint32_t> flags_;
  std::vector<std::mutex> locks_;
};

}  // namespace mpcf
