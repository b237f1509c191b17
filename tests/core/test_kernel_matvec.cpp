// The kernel mat-vec's consumer (kernel_matvec.hpp) against a plain
// reference written here, bit for bit, and against exact sums:
//  * the reference: for each output (i, c), the terms x = fl(K_ij * V_jc)
//    over every j, one by one in order of j (K: the L2 value itself, or the
//    Gaussian / Laplacian of the distance, formulas written out here; on the
//    symmetric plane of a distance kernel K_ii = 1 and the term is V_ic),
//    each split onto the three grids of its sum by pre-rounding (exact_sum.hpp:
//    q = (M + x) - M per level) and summed per level, the value
//    (S1 + S2) + S3, or NaN / +-inf from the non-finite terms. The grids are
//    the consumer's (grids(), ratio(): from the bounds, which this test
//    does not check);
//  * the exact sum of the same terms (Shewchuk's expansions, as Python's
//    math.fsum), within the grids' resolution: n times the finest grid
//    step, plus two units in the last place of the result;
//  * on every instruction set this machine runs and the scalar path, for
//    blocks of many shapes (1 element, small, 128 x 128, the whole plane),
//    fed in a shuffled order from 1 or 3 threads at once, row-major and
//    column-major, float32 and float64, r = 1, 3, 16, 17, symmetric planes
//    (L2: diagonal computed; Gaussian, Laplacian: diagonal 1) and cross
//    planes, on random values that stress the bound: ordinary; magnitudes
//    from subnormal to near the range's end (K underflowing to subnormals and
//    0); heavy cancellation (terms of +-A summing to nearly 0 or exactly 0);
//    non-finite values (+-inf and NaN kernel values: +-inf or NaN outputs);
//    V at the largest magnitude the bound admits; and a bound that does not
//    hold (the terms beyond it: finish() reports an internal error);
//  * the CPU executor (the walk feeding the consumer) on random functions
//    with 1, 2 and 3 threads, default and small blocks, against the
//    reference built from the matrix of the same pairs.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/simd_walk.hpp"
#include "mpcf/core/task.hpp"

using namespace mpcf;

namespace {

template <typename T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// The scalar path and every SIMD instruction set this machine runs.
std::vector<CpuSimd> instruction_sets() {
  std::vector<CpuSimd> out{CpuSimd::Scalar};
  for (int s = 1; s < kCpuSimdCount; ++s) {
    const auto c = static_cast<CpuSimd>(s);
    if (cpu_simd_supported(c)) out.push_back(c);
  }
  return out;
}

// A mat-vec: the value of every pair (the inner product or the distance),
// V and the norms the L2 grids come from.
template <typename T>
struct Case {
  KernelSpec spec;
  std::size_t nRows = 0, nCols = 0, r = 1;
  bool symmetric = false;   // Y = X: values symmetric, nRows = nCols
  std::vector<T> values;    // nRows x nCols
  std::vector<T> V;         // nCols x r
  std::vector<FunctionNorms> rowNorms, colNorms;

  TriangleSkipMode skip_mode() const {
    if (!symmetric) return TriangleSkipMode::None;
    return spec.kind == KernelKind::L2 ? TriangleSkipMode::LowerTriangle
                                       : TriangleSkipMode::LowerTriangleSkipDiag;
  }
  T value(std::size_t i, std::size_t j) const { return values[i * nCols + j]; }
};

// K of a pair value, as kernel_matvec.hpp documents it.
double kernel_of(const KernelSpec& spec, double v) {
  switch (spec.kind) {
    case KernelKind::Gaussian: {
      const double z = v / spec.scale;
      return std::exp(-0.5 * (z * z));
    }
    case KernelKind::Laplacian: return std::exp(-(v / spec.scale));
    default: return v;
  }
}

// The exact sum of doubles: Shewchuk's non-overlapping expansion (Python's
// math.fsum), its parts added from the smallest in long double.
long double exact_sum_of(const std::vector<double>& xs) {
  std::vector<double> parts;
  for (double x : xs) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      double y = parts[k];
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0) parts[n++] = lo;
      x = hi;
    }
    parts.resize(n);
    parts.push_back(x);
  }
  long double s = 0;
  for (double p : parts) s += p;
  return s;
}

// What a run gives: the outputs, or that finish() reported a term beyond
// its bound; and the consumer's grids.
template <typename T>
struct Result {
  std::vector<T> out;
  bool outOfRange = false;
  std::vector<double> grids;
  bool gridsPerRow = false;
  double ratio = 1;
};

// The reference (see the top of the file) on the grids of `run`.
template <typename T>
Result<T> reference(const Case<T>& k, const Result<T>& run) {
  Result<T> ref;
  ref.out.assign(k.nRows * k.r, T(0));
  for (std::size_t i = 0; i < k.nRows; ++i) {
    for (std::size_t c = 0; c < k.r; ++c) {
      const double m1 = run.grids[run.gridsPerRow ? i * k.r + c : c];
      const double m2 = m1 * run.ratio, m3 = m2 * run.ratio, limit = m1 / 3;
      double s1 = 0, s2 = 0, s3 = 0;
      bool nan = false, pos = false, neg = false;
      for (std::size_t j = 0; j < k.nCols; ++j) {
        const double v = static_cast<double>(k.V[j * k.r + c]);
        double x;
        if (k.symmetric && i == j && k.spec.kind != KernelKind::L2) {
          x = v;
        } else {
          const T value = k.symmetric ? k.value(std::max(i, j), std::min(i, j)) : k.value(i, j);
          x = kernel_of(k.spec, static_cast<double>(value)) * v;
        }
        if (std::isnan(x)) {
          nan = true;
        } else if (std::isinf(x)) {
          (x > 0 ? pos : neg) = true;
        } else if (std::fabs(x) >= limit) {
          ref.outOfRange = true;
        } else {
          const double q1 = (m1 + x) - m1;
          const double r1 = x - q1;
          const double q2 = (m2 + r1) - m2;
          const double r2 = r1 - q2;
          const double q3 = (m3 + r2) - m3;
          s1 += q1;
          s2 += q2;
          s3 += q3;
        }
      }
      double y = (s1 + s2) + s3;
      if (nan || (pos && neg)) {
        y = std::numeric_limits<double>::quiet_NaN();
      } else if (pos || neg) {
        y = pos ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
      }
      ref.out[i * k.r + c] = static_cast<T>(y);
    }
  }
  return ref;
}

// The finite outputs of `run` within the grids' resolution of the exact sum
// of their terms.
template <typename T>
void check_exact(const Case<T>& k, const Result<T>& run, const char* what) {
  for (std::size_t i = 0; i < k.nRows; ++i) {
    for (std::size_t c = 0; c < k.r; ++c) {
      const T got = run.out[i * k.r + c];
      if (!std::isfinite(got)) continue;
      std::vector<double> terms;
      for (std::size_t j = 0; j < k.nCols; ++j) {
        const double v = static_cast<double>(k.V[j * k.r + c]);
        if (k.symmetric && i == j && k.spec.kind != KernelKind::L2) {
          terms.push_back(v);
        } else {
          const T value = k.symmetric ? k.value(std::max(i, j), std::min(i, j)) : k.value(i, j);
          terms.push_back(kernel_of(k.spec, static_cast<double>(value)) * v);
        }
      }
      const long double exact = exact_sum_of(terms);
      const double m3 = run.grids[run.gridsPerRow ? i * k.r + c : c] * run.ratio * run.ratio;
      const long double step = std::max<long double>(std::ldexp(m3 / 1.5, -52),
                                                     std::numeric_limits<double>::denorm_min());
      const T near = static_cast<T>(exact);
      const long double ulp = std::fabs(static_cast<long double>(std::nextafter(
                                  near, std::numeric_limits<T>::infinity())) - near);
      const long double tol = static_cast<long double>(k.nCols) * step + 2 * ulp;
      if (!(std::fabs(static_cast<long double>(got) - exact) <= tol)) {
        fail_msg("%s: out[%zu][%zu] = %.17g, exact sum %.17Lg (tolerance %.3Lg)", what, i, c,
                 double(got), exact, tol);
      }
    }
  }
}

// How the consumer is fed.
struct Feed {
  CpuSimd simd = CpuSimd::Scalar;
  std::uint64_t blockElements = 0;  // 0: 128 x 128
  BlockOrder order = BlockOrder::RowMajor;
  int threads = 1;
  unsigned shuffle = 0;             // 0: the scheduler's order
};

template <typename T>
Result<T> run_consumer(const Case<T>& k, const Feed& feed) {
  Result<T> res;
  res.out.assign(k.nRows * k.r, T(-7));
  MatvecConsumer<T> consumer(k.spec, k.V.data(), k.r, res.out.data(), k.nRows, k.nCols,
                             k.rowNorms, k.colNorms);
  consumer.set_simd(feed.simd);
  PairPlane plane;
  plane.nRows = k.nRows;
  plane.nCols = k.nCols;
  plane.skip = k.skip_mode();
  consumer.prepare(plane);
  res.grids = consumer.grids();
  res.gridsPerRow = consumer.grids_per_row();
  res.ratio = consumer.ratio();
  BlockScheduler::Config c;
  c.nRows = k.nRows;
  c.nCols = k.nCols;
  c.mode = k.symmetric ? BlockMode::LowerTriangle : BlockMode::Full;
  c.maxOutputElements = feed.blockElements ? feed.blockElements : 128 * 128;
  const BlockScheduler scheduler(c);
  std::vector<BlockInfo> blocks = scheduler.blocks();
  if (feed.shuffle) std::shuffle(blocks.begin(), blocks.end(), std::mt19937(feed.shuffle));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    std::vector<T> buf;
    for (;;) {
      const std::size_t q = next.fetch_add(1);
      if (q >= blocks.size()) return;
      const BlockInfo& b = blocks[q];
      const std::size_t nr = b.n_rows(), nc = b.n_cols();
      buf.assign(nr * nc, T(0));
      for (std::size_t rr = 0; rr < nr; ++rr) {
        for (std::size_t cc = 0; cc < nc; ++cc) {
          const std::size_t i = b.rows.first + rr, j = b.cols.first + cc;
          if (!pair_kept(i, j, plane.skip)) continue;
          buf[block_slot(feed.order, rr, cc, nr, nc)] = k.value(i, j);
        }
      }
      consumer.consume(BlockPiece<T>{b, buf.data(), feed.order});
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < feed.threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  try {
    consumer.finish();
  } catch (const std::logic_error&) {
    res.outOfRange = true;
  }
  return res;
}

// Random inputs of a family (see the top of the file).
enum Family { Ordinary, Wide, Cancel, NonFinite, BoundEdge, BoundBroken };

template <typename T>
Case<T> make_case(std::mt19937_64& rng, Family family, KernelKind kind, bool symmetric,
                  std::size_t nRows, std::size_t nCols, std::size_t r) {
  constexpr bool f32 = sizeof(T) == 4;
  Case<T> k;
  k.spec.kind = kind;
  k.spec.p = 1;
  k.spec.scale = kind == KernelKind::Gaussian ? 20.0 : 7.0;
  k.symmetric = symmetric;
  k.nRows = nRows;
  k.nCols = symmetric ? nRows : nCols;
  k.r = r;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto chance = [&](double p) { return u(rng) < p; };
  auto pow10 = [&](double lo, double hi) { return std::pow(10.0, lo + (hi - lo) * u(rng)); };
  auto sign = [&] { return chance(0.5) ? -1.0 : 1.0; };
  const bool l2 = kind == KernelKind::L2;
  double maxValue = 0;
  // Pair values.
  k.values.assign(k.nRows * k.nCols, T(0));
  const double cancelBase = 1.0 + u(rng);
  for (std::size_t i = 0; i < k.nRows; ++i) {
    for (std::size_t j = 0; j < k.nCols; ++j) {
      if (symmetric && j > i) {
        k.values[i * k.nCols + j] = k.values[j * k.nCols + i];
        continue;
      }
      double v = 0;
      switch (family) {
        case Ordinary: v = l2 ? 50 * u(rng) - 25 : 40 * u(rng); break;
        case Wide:
          if (chance(0.05)) {
            v = 0;
          } else if (l2) {
            v = sign() * (f32 ? pow10(-40, 30) : pow10(-300, 150));
          } else if (chance(0.15)) {
            // K from about 1e-304 through the subnormals to 0.
            const double z = 700 + 50 * u(rng);
            v = k.spec.scale * (kind == KernelKind::Laplacian ? z : std::sqrt(2 * z));
          } else {
            v = f32 ? pow10(-40, 4.2) : pow10(-300, 4.2);
          }
          break;
        case Cancel:
          // Nearly equal kernel values; distance 0 (K = 1 exactly) now and then.
          v = chance(0.2) ? (l2 ? 1.0 : 0.0) : cancelBase * (1 + 1e-6 * u(rng));
          if (l2) v *= f32 ? 1e10 : 1e100;
          break;
        case NonFinite:
          v = l2 ? 50 * u(rng) - 25 : 40 * u(rng);
          if (chance(0.04)) v = std::numeric_limits<double>::infinity();
          if (chance(0.02)) v = -std::numeric_limits<double>::infinity();
          if (chance(0.01)) v = std::numeric_limits<double>::quiet_NaN();
          if (!l2 && v < 0) v = -v;
          break;
        case BoundEdge:
          v = l2 ? sign() * (f32 ? pow10(25, 30) : pow10(140, 150)) : 40 * u(rng);
          break;
        case BoundBroken: v = l2 ? sign() * pow10(5, 10) : 40 * u(rng); break;
      }
      const T t = static_cast<T>(v);
      k.values[i * k.nCols + j] = t;
      if (std::isfinite(t)) maxValue = std::max(maxValue, std::fabs(static_cast<double>(t)));
    }
  }
  // V.
  k.V.assign(k.nCols * r, T(0));
  const double edge = f32 ? static_cast<double>(std::numeric_limits<float>::max())
                          : std::ldexp(1.0, 1019) / static_cast<double>(k.nCols);
  for (std::size_t j = 0; j < k.nCols; ++j) {
    for (std::size_t c = 0; c < r; ++c) {
      double v = 0;
      switch (family) {
        case Ordinary:
        case NonFinite:
        case BoundBroken: v = 2 * u(rng) - 1; break;
        case Wide:
          if (chance(0.05)) {
            v = chance(0.5) ? 0.0 : -0.0;
          } else {
            v = sign() * (f32 ? pow10(-45, 30) : pow10(-310, 150));
          }
          break;
        case Cancel: {
          // Column c % 2 == 0: exactly +-A alternating; else A (1 + small).
          const double A = f32 ? 1e30 : 1e150;
          v = (j % 2 ? -A : A) * (c % 2 ? 1 + 1e-7 * u(rng) : 1.0);
          break;
        }
        case BoundEdge:
          v = l2 ? sign() * (f32 ? pow10(-5, 5) : pow10(100, 150))
                 : sign() * edge * (0.5 + 0.5 * u(rng));
          break;
      }
      k.V[j * r + c] = static_cast<T>(v);
    }
  }
  // Norms whose bound ||f||_inf L1(g) + L1(f) ||g||_inf = 2 A^2 holds
  // every |value| (not so for BoundBroken).
  if (l2) {
    const double A = family == BoundBroken ? 1.0 : std::sqrt(maxValue / 2) * 1.001 + 1e-300;
    k.rowNorms.assign(k.nRows, FunctionNorms{A, A});
    k.colNorms.assign(k.nCols, FunctionNorms{A, A});
  }
  return k;
}

const char* family_name(Family f) {
  switch (f) {
    case Ordinary: return "ordinary";
    case Wide: return "wide";
    case Cancel: return "cancel";
    case NonFinite: return "non-finite";
    case BoundEdge: return "bound edge";
    default: return "bound broken";
  }
}

template <typename T>
void check_consumer() {
  std::mt19937_64 rng(sizeof(T) == 4 ? 31 : 37);
  const std::vector<CpuSimd> sets = instruction_sets();
  const Family families[] = {Ordinary, Wide, Cancel, NonFinite, BoundEdge, BoundBroken};
  const KernelKind kinds[] = {KernelKind::L2, KernelKind::Gaussian, KernelKind::Laplacian};
  // Feeds: blocks of 1 element, 6 x 6, 7 x 7 (not a multiple of any lane
  // count), 128 x 128 and the whole plane; shuffled, 3 threads, column-major.
  const Feed feeds[] = {
      {CpuSimd::Scalar, 0, BlockOrder::RowMajor, 1, 0},
      {CpuSimd::Scalar, 1, BlockOrder::ColumnMajor, 3, 5},
      {CpuSimd::Scalar, 36, BlockOrder::RowMajor, 3, 6},
      {CpuSimd::Scalar, 49, BlockOrder::ColumnMajor, 1, 7},
      {CpuSimd::Scalar, 400 * 400, BlockOrder::RowMajor, 1, 0},
  };
  int round = 0;
  for (Family family : families) {
    for (KernelKind kind : kinds) {
      if (family == BoundBroken && kind != KernelKind::L2) continue;  // only L2 has such a bound
      for (int symmetric = 0; symmetric < 2; ++symmetric) {
        for (std::size_t r : {std::size_t(1), std::size_t(3), std::size_t(16), std::size_t(17)}) {
          // 150 rows: a 128-wide block and a 22-wide one (lanes left over).
          const std::size_t nRows = (round % 3 == 0) ? 150 : 45, nCols = round % 2 ? 29 : 133;
          ++round;
          const Case<T> k = make_case<T>(rng, family, kind, symmetric, nRows, nCols, r);
          char what[200];
          Result<T> want;
          for (CpuSimd s : sets) {
            for (std::size_t f = 0; f < std::size(feeds); ++f) {
              // Every feed on the scalar path and the best set; two on the others.
              if (s != CpuSimd::Scalar && s != sets.back() && f % 2) continue;
              Feed feed = feeds[f];
              feed.simd = s;
              std::snprintf(what, sizeof what,
                            "float%d, %s, kernel %d, %s, r = %zu, %zu x %zu, %s, blocks of %llu, "
                            "%s, %d threads",
                            int(sizeof(T) * 8), family_name(family), int(kind),
                            symmetric ? "symmetric" : "cross", r, k.nRows, k.nCols,
                            cpu_simd_name(s), (unsigned long long)feed.blockElements,
                            feed.order == BlockOrder::RowMajor ? "row-major" : "column-major",
                            feed.threads);
              const Result<T> got = run_consumer(k, feed);
              if (want.out.empty()) want = reference(k, got);
              if (got.outOfRange != want.outOfRange) {
                fail_msg("%s: out of range %d, the reference says %d", what, int(got.outOfRange),
                         int(want.outOfRange));
              }
              if (family == BoundBroken && !got.outOfRange) {
                fail_msg("%s: the broken bound was not reported", what);
              }
              if (got.outOfRange) continue;
              for (std::size_t e = 0; e < got.out.size(); ++e) {
                if (!same_bits(got.out[e], want.out[e])) {
                  fail_msg("%s: out[%zu][%zu] = %.17g, the reference %.17g", what, e / r, e % r,
                           double(got.out[e]), double(want.out[e]));
                }
              }
              if (f == 0 && s == CpuSimd::Scalar) check_exact(k, got, what);
            }
          }
        }
      }
    }
  }
}

void test_consumer_against_reference(void**) {
  check_consumer<float>();
  check_consumer<double>();
}

// ---- the CPU executor ----

template <typename T>
std::shared_ptr<const PcfCollection<T>> random_collection(std::mt19937_64& rng, std::size_t n) {
  std::uniform_int_distribution<int> len(1, 30);
  std::uniform_real_distribution<double> gap(0.05, 1.0), val(-5.0, 10.0);
  std::vector<std::uint64_t> offsets{0};
  std::vector<T> t, v;
  for (std::size_t i = 0; i < n; ++i) {
    const int m = len(rng);
    double x = 0;
    for (int e = 0; e < m; ++e) {
      t.push_back(static_cast<T>(x));
      v.push_back(e + 1 == m ? T(0) : static_cast<T>(val(rng)));
      x += gap(rng);
    }
    offsets.push_back(t.size());
  }
  return std::make_shared<const PcfCollection<T>>(n, offsets.data(), t.data(), v.data(), 1);
}

template <typename T>
void run_request(PairRequest<T> req, const CpuExecutionConfig& cfg) {
  Task task(make_cpu_work<T>(std::move(req), cfg));
  task.run_here();
  if (task.error()) std::rethrow_exception(task.error());
}

template <typename T>
void check_executor() {
  std::mt19937_64 rng(41);
  const auto X = random_collection<T>(rng, 70), Y = random_collection<T>(rng, 45);
  for (KernelKind kind : {KernelKind::L2, KernelKind::Laplacian, KernelKind::Gaussian}) {
    for (int cross = 0; cross < 2; ++cross) {
      for (std::size_t r : {std::size_t(1), std::size_t(16), std::size_t(17)}) {
        Case<T> k;
        k.spec.kind = kind;
        k.spec.p = 1;
        k.spec.scale = 3.0;
        k.symmetric = !cross;
        k.nRows = 70;
        k.nCols = cross ? 45 : 70;
        k.r = r;
        const auto& cols = cross ? Y : X;
        // The pair values: the full matrix of the same operation.
        OperationSpec op = kind == KernelKind::L2 ? OperationSpec::l2_kernel() : OperationSpec::distance(1);
        k.values.assign(k.nRows * k.nCols, T(-1));
        {
          PairRequest<T> req;
          req.x = X;
          req.y = cols;
          req.op = op;
          req.consumer = std::make_shared<MatrixWriter<T>>(
              MatrixWriter<T>::dense(k.values.data(), k.nRows, k.nCols));
          CpuExecutionConfig cfg;
          cfg.threads = 1;
          run_request(std::move(req), cfg);
        }
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        k.V.resize(k.nCols * r);
        for (auto& v : k.V) v = static_cast<T>(u(rng));
        if (kind == KernelKind::L2) {
          for (std::size_t i = 0; i < k.nRows; ++i) {
            k.rowNorms.push_back(function_norms(X->data().data_of(i), X->data().size_of(i),
                                                -HUGE_VAL, HUGE_VAL));
          }
          for (std::size_t j = 0; j < k.nCols; ++j) {
            k.colNorms.push_back(function_norms(cols->data().data_of(j), cols->data().size_of(j),
                                                -HUGE_VAL, HUGE_VAL));
          }
        }
        Result<T> want;
        for (CpuSimd s : instruction_sets()) {
          for (int threads : {1, 2, 3}) {
            for (std::uint64_t blockElements : {std::uint64_t(0), std::uint64_t(100)}) {
              std::vector<T> out(k.nRows * r, T(-7));
              auto consumer = std::make_shared<MatvecConsumer<T>>(
                  k.spec, k.V.data(), r, out.data(), k.nRows, k.nCols, k.rowNorms, k.colNorms);
              consumer->set_simd(s);
              PairRequest<T> req;
              req.x = X;
              req.y = cols;
              req.symmetric = !cross;
              req.op = op;
              req.consumer = consumer;
              CpuExecutionConfig cfg;
              cfg.threads = threads;
              cfg.maxBlockElements = blockElements;
              run_request(std::move(req), cfg);
              if (want.out.empty()) {
                Result<T> grids;
                grids.grids = consumer->grids();
                grids.gridsPerRow = consumer->grids_per_row();
                grids.ratio = consumer->ratio();
                want = reference(k, grids);
                assert_false(want.outOfRange);
              }
              for (std::size_t e = 0; e < out.size(); ++e) {
                if (!same_bits(out[e], want.out[e])) {
                  fail_msg("executor, float%d, kernel %d, %s, r = %zu, %s, %d threads, blocks "
                           "of %llu: out[%zu][%zu] = %.17g, the reference %.17g",
                           int(sizeof(T) * 8), int(kind), cross ? "cross" : "symmetric", r,
                           cpu_simd_name(s), threads, (unsigned long long)blockElements, e / r,
                           e % r, double(out[e]), double(want.out[e]));
                }
              }
            }
          }
        }
      }
    }
  }
}

void test_executor_against_reference(void**) {
  check_executor<float>();
  check_executor<double>();
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_consumer_against_reference),
      cmocka_unit_test(test_executor_against_reference),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
