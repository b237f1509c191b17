// Piecewise linear functions (DESIGN §10) and objects of several functions
// (DESIGN §11) on the CUDA backend, through the public C API:
//  * every PLF operation (L1, L2, Lp, L-inf, the inner product), float32 and
//    float64, whole line and windows, against a long double reference
//    written here (closed forms on the union of breakpoints; no libmpcf
//    code) and against the CPU backend (the same bits for L1, L2, L-inf and
//    the kernel);
//  * objects of K components (PCFs and PLFs) against the components'
//    reference values combined by hand (sum of p-th powers, max, sum);
//  * the same bits for every block shape and GPU count;
//  * kNN against a sort of the GPU's own matrix (ties by smaller index) and
//    kernel mat-vec against the GPU's kernel matrix times V.
#include "gpu_test_support.hpp"

using namespace gputest;

namespace {

// MPCF_GPU_TEST_ON_CPU=1 runs the "GPU" side on the CPU backend: a check of
// this test's own references on a machine without a GPU (the CPU backend
// is checked against exact rationals elsewhere).
bool on_cpu() {
  const char* s = std::getenv("MPCF_GPU_TEST_ON_CPU");
  return s != nullptr && s[0] == '1';
}
mpcf_options* gpu_options() { return options_for(on_cpu() ? MPCF_BACKEND_CPU : MPCF_BACKEND_CUDA); }

const mpcf_dtype kDtypes[] = {MPCF_FLOAT32, MPCF_FLOAT64};

// A PLF collection of `p` in `dtype`, with shape (n / K, K) and a component
// axis when K > 1.
mpcf_pcfs* make_collection(const Pcfs& p, mpcf_dtype dtype, bool linear, std::uint64_t K = 1) {
  mpcf_pcfs* h = nullptr;
  mpcf_status st;
  auto create = linear ? mpcf_plfs_create : mpcf_pcfs_create;
  if (dtype == MPCF_FLOAT32) {
    std::vector<float> t(p.t.begin(), p.t.end()), v(p.v.begin(), p.v.end());
    st = create(dtype, p.n(), p.offsets.data(), t.data(), v.data(), &h);
  } else {
    st = create(dtype, p.n(), p.offsets.data(), p.t.data(), p.v.data(), &h);
  }
  check_ok(st, "create");
  if (K > 1) {
    const std::uint64_t shape[2] = {p.n() / K, K};
    check_ok(mpcf_pcfs_reshape(h, 2, shape), "reshape");
    check_ok(mpcf_pcfs_set_component_axis(h, 1), "set_component_axis");
  }
  return h;
}

// The line of f on the open piece (l, r) (no breakpoint of f inside),
// evaluated at x: 0 left of the first breakpoint, the last value right of
// the last one, else the segment's line through its two breakpoints.
// `scale`, when given, receives the segment's largest |v| (the scale of the
// rounding of an interpolated value).
long double plf_line_at(const Pcfs& P, std::size_t f, long double l, long double r, long double x,
                        long double* scale = nullptr) {
  const std::uint64_t b = P.offsets[f], e = P.offsets[f + 1];
  const long double inf = std::numeric_limits<long double>::infinity();
  const long double mid = r == inf ? l + 1 : (l + r) / 2;
  if (scale) *scale = 0;
  if (mid < P.t[b]) return 0;
  if (mid >= P.t[e - 1]) {
    if (scale) *scale = std::fabs(P.v[e - 1]);
    return P.v[e - 1];
  }
  std::uint64_t k = b;
  while (!(P.t[k] <= mid && mid < P.t[k + 1])) ++k;
  const long double t0 = P.t[k], t1 = P.t[k + 1], v0 = P.v[k], v1 = P.v[k + 1];
  if (scale) *scale = std::max(std::fabs(v0), std::fabs(v1));
  return v0 + (v1 - v0) * ((x - t0) / (t1 - t0));
}

// Brute force for a PLF pair over the window [a, b): on each piece between
// consecutive merged breakpoints (and the unbounded last one) f - g is
// linear; its integrals in closed form in long double.
Reference plf_reference(const Pcfs& X, std::size_t i, const Pcfs& Y, std::size_t j, Op op,
                        double p, double a, double b) {
  std::vector<long double> times;
  for (auto k = X.offsets[i]; k < X.offsets[i + 1]; ++k) times.push_back(X.t[k]);
  for (auto k = Y.offsets[j]; k < Y.offsets[j + 1]; ++k) times.push_back(Y.t[k]);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const long double inf = std::numeric_limits<long double>::infinity();
  long double sum = 0, mag = 0, sup = 0;
  long double supScale = 0;  // of the rounding of interpolated values
  for (std::size_t k = 0; k < times.size(); ++k) {
    const long double L = times[k];
    const long double R = k + 1 < times.size() ? times[k + 1] : inf;
    const long double l = std::max<long double>(L, a);
    const long double r = std::min<long double>(R, b);
    if (!(r > l)) continue;
    long double fs = 0, gs = 0;
    const long double fl = plf_line_at(X, i, L, R, l, &fs), gl = plf_line_at(Y, j, L, R, l, &gs);
    const long double fr = r == inf ? fl : plf_line_at(X, i, L, R, r);
    const long double gr = r == inf ? gl : plf_line_at(Y, j, L, R, r);
    const long double hl = fl - gl, hr = fr - gr;
    const long double A = std::min(std::fabs(hl), std::fabs(hr));
    const long double B = std::max(std::fabs(hl), std::fabs(hr));
    const bool opposite = (hl < 0 && hr > 0) || (hl > 0 && hr < 0);
    long double mean = 0;  // of the integrand over the piece
    long double absMean = 0;
    switch (op) {
      case Op::Linf:
        sup = std::max(sup, B);
        supScale = std::max(supScale, 2 * (fs + gs));
        continue;
      case Op::L1:
        mean = opposite ? (A * A + B * B) / (2 * (A + B)) : (A + B) / 2;
        absMean = mean;
        break;
      case Op::Lp: {
        const long double q = p + 1.0L;
        if (B == 0) {
          mean = 0;
        } else if (opposite) {
          mean = (std::pow(A, q) + std::pow(B, q)) / (q * (A + B));
        } else if (A == B) {
          mean = std::pow(B, static_cast<long double>(p));
        } else {
          mean = (std::pow(B, q) - std::pow(A, q)) / (q * (B - A));
        }
        absMean = mean;
        break;
      }
      case Op::Kernel:
        mean = (2 * fl * gl + fl * gr + fr * gl + 2 * fr * gr) / 6;
        // Interpolated values are rounded relative to their segment's
        // vertices, so the error scale is theirs, not the piece's ends'.
        absMean = fs * gs;
        break;
    }
    if (mean == 0) continue;
    if (r == inf || l == -inf) {
      sum += mean > 0 ? inf : -inf;
      mag = inf;
      continue;
    }
    sum += (r - l) * mean;
    mag += (r - l) * absMean;
  }
  Reference ref{sum, mag, times.size() + 1};
  if (op == Op::Linf) ref = {sup, std::max(sup, supScale), times.size() + 1};
  if (op == Op::Lp) {
    ref.value = std::pow(sum, 1.0L / p);
    ref.magnitude = ref.value;
  }
  return ref;
}

// Random PLFs: the PCF generator's breakpoints (floats: exact in both
// dtypes), values of both signs so that pieces cross zero, some functions
// with a non-zero tail.
Pcfs random_plfs(Rng& rng, std::size_t n, std::size_t maxM, bool zeroTail) {
  RandomSpec spec;
  spec.n = n;
  spec.minM = 1;
  spec.maxM = maxM;
  spec.zeroTail = zeroTail;
  return random_pcfs(rng, spec);
}

struct Case {
  Op op;
  double p;
  const char* name;
};
const Case kCases[] = {{Op::L1, 1, "L1"},
                       {Op::Lp, 2, "L2"},
                       {Op::Lp, 2.5, "L2.5"},
                       {Op::Lp, 3, "L3"},
                       {Op::Linf, INFINITY, "Linf"},
                       {Op::Kernel, 2, "L2 kernel"}};

// Every pair of the GPU's dense pdist / l2_kernel of PLFs against the
// reference, the CPU and the symmetry; windows included.
void test_plf_pdist_against_reference(void**) {
  Rng rng(2026'11'26);
  const std::size_t n = small_mode() ? 24 : 90;
  const double windows[][2] = {{-INFINITY, INFINITY}, {-0.7, 1.3}, {0.25, INFINITY}};
  for (int w = 0; w < 3; ++w) {
    // Whole line: zero tails (else every distance is +inf); bounded windows
    // also see the non-zero tails.
    const Pcfs P = random_plfs(rng, n, 24, w != 2 ? w == 0 : false);
    for (const mpcf_dtype dtype : kDtypes) {
      // The window as the computation sees it (rounded to float32 for
      // float32 collections, mpcf_options_set_window).
      const double a = dtype == MPCF_FLOAT32 ? static_cast<float>(windows[w][0]) : windows[w][0];
      const double b = dtype == MPCF_FLOAT32 ? static_cast<float>(windows[w][1]) : windows[w][1];
      mpcf_pcfs* X = make_collection(P, dtype, true);
      mpcf_options* gpu = gpu_options();
      mpcf_options* cpu = options_for(MPCF_BACKEND_CPU);
      if (w != 0) {
        check_ok(mpcf_options_set_window(gpu, a, b), "window");
        check_ok(mpcf_options_set_window(cpu, a, b), "window");
      }
      for (const Case& c : kCases) {
        const auto g = dense_symmetric(X, dtype, c.op, c.p, gpu);
        const auto h = dense_symmetric(X, dtype, c.op, c.p, cpu);
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            const double gv = element(g, dtype, i * n + j);
            const Reference r = plf_reference(P, i, P, j, c.op, c.p, a, b);
            const Op tolOp = c.op == Op::Linf ? Op::Linf : Op::L1;
            if (!close_enough(gv, r.value, r.magnitude, r.rectangles, dtype, tolOp) ||
                !close_enough(element(h, dtype, i * n + j), r.value, r.magnitude, r.rectangles,
                              dtype, tolOp)) {
              std::printf("PLF %s dtype %d window [%g, %g) pair (%zu, %zu): GPU %.17g CPU %.17g "
                          "reference %.17Lg\n",
                          c.name, static_cast<int>(dtype), a, b, i, j, gv,
                          element(h, dtype, i * n + j), r.value);
              fail();
            }
            // L1, L2, L-inf and the kernel take only +, -, *, / and sqrt,
            // which both backends round the same way (no fused
            // multiply-adds in either): the CPU's bits (Lp takes pow).
            if ((c.op != Op::Lp || c.p == 2) && gv != element(h, dtype, i * n + j)) {
              std::printf("PLF %s dtype %d window [%g, %g) pair (%zu, %zu): GPU %.17g differs "
                          "from the CPU's %.17g\n",
                          c.name, static_cast<int>(dtype), a, b, i, j, gv,
                          element(h, dtype, i * n + j));
              fail();
            }
            if (gv != element(g, dtype, j * n + i)) {
              std::printf("PLF %s: GPU matrix not symmetric at (%zu, %zu)\n",
                          c.name, i, j);
              fail();
            }
            if (c.op != Op::Kernel && i == j && gv != 0.0) {
              std::printf("PLF %s: d(f, f) = %.17g for function %zu\n", c.name, gv,
                          i);
              fail();
            }
          }
        }
      }
      mpcf_options_destroy(gpu);
      mpcf_options_destroy(cpu);
      mpcf_pcfs_destroy(X);
    }
  }
}

// Hand-worked values: f the tent (0, 0), (1, 1), (2, 0); g the negative
// tent (0, 0), (1, -1), (2, 0); e = 1 on [0, inf) (a jump at 0, a non-zero
// tail). L1(f, g) = 2 (h = 2 tent), L2(f, g)^2 = 4 * 2/3, <f, g> = -2/3,
// Linf = 2, Linf(f, e) = 1 (the jump of e at 0), L1(f, e) = inf (e's tail);
// on the window [0.5, 1.5): L1(f, g) = 2 * 3/4, L1(g, e) = 1 + 3/4,
// <f, g> = -2 * (1/3 - 1/24) = -7/12; on [0, 4): <f, e> = 1, <e, e> = 4.
void test_plf_hand_values(void**) {
  Pcfs P;
  P.add({0, 1, 2}, {0, 1, 0});
  P.add({0, 1, 2}, {0, -1, 0});
  P.add({0}, {1});
  for (const mpcf_dtype dtype : kDtypes) {
    const double tol = dtype == MPCF_FLOAT32 ? 1e-6 : 1e-15;
    mpcf_pcfs* X = make_collection(P, dtype, true);
    mpcf_options* gpu = gpu_options();
    auto near = [&](double got, double want, const char* what) {
      const bool ok = std::isinf(want) ? got == want
                                       : std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
      if (!ok) {
        std::printf("%s: GPU %.17g, want %.17g (dtype %d)\n", what, got, want,
                    static_cast<int>(dtype));
        fail();
      }
    };
    auto d = dense_symmetric(X, dtype, Op::L1, 1, gpu);
    near(element(d, dtype, 1), 2, "L1(f, g)");
    near(element(d, dtype, 2), INFINITY, "L1(f, e)");
    d = dense_symmetric(X, dtype, Op::Lp, 2, gpu);
    near(element(d, dtype, 1), std::sqrt(8.0 / 3.0), "L2(f, g)");
    d = dense_symmetric(X, dtype, Op::Linf, INFINITY, gpu);
    near(element(d, dtype, 1), 2, "Linf(f, g)");
    near(element(d, dtype, 2), 1, "Linf(f, e)");
    d = dense_symmetric(X, dtype, Op::Kernel, 2, gpu);
    near(element(d, dtype, 1), -2.0 / 3.0, "<f, g>");
    near(element(d, dtype, 0), 2.0 / 3.0, "<f, f>");
    check_ok(mpcf_options_set_window(gpu, 0.5, 1.5), "window");
    d = dense_symmetric(X, dtype, Op::L1, 1, gpu);
    near(element(d, dtype, 1), 1.5, "L1(f, g) on [0.5, 1.5)");
    near(element(d, dtype, 5), 1.75, "L1(g, e) on [0.5, 1.5)");
    d = dense_symmetric(X, dtype, Op::Kernel, 2, gpu);
    near(element(d, dtype, 1), -7.0 / 12.0, "<f, g> on [0.5, 1.5)");
    check_ok(mpcf_options_set_window(gpu, 0, 4), "window");
    d = dense_symmetric(X, dtype, Op::Kernel, 2, gpu);
    near(element(d, dtype, 2), 1, "<f, e> on [0, 4)");
    near(element(d, dtype, 8), 4, "<e, e> on [0, 4)");
    mpcf_options_destroy(gpu);
    mpcf_pcfs_destroy(X);
  }
}

// The values of pdist (Kernel: l2_kernel) and cdist on `o`.
std::vector<unsigned char> values(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype, const Case& c,
                                  const mpcf_options* o) {
  if (!Y) return dense_symmetric(X, dtype, c.op, c.p, o);
  std::uint64_t size = 0;
  check_ok(mpcf_cdist_size(X, Y, &size), "cdist_size");
  std::vector<unsigned char> out(std::max<std::uint64_t>(size, 1) * dtype_size(dtype));
  const mpcf_metric metric = c.op == Op::Kernel ? MPCF_METRIC_L2_KERNEL
                                                : MPCF_METRIC_LP_DISTANCE;
  check_ok(mpcf_cdist(X, Y, metric, c.p, out.data(), size, o), "cdist");
  return out;
}

// Objects of K components: the GPU's pdist and cdist against the
// components' references combined as DESIGN §11 says, and the same bits
// for tiny blocks (many blocks, both streams, block edges inside the
// triangle), one GPU and all GPUs.
void test_objects_and_same_bits(void**) {
  Rng rng(11'26);
  const std::size_t nObj = small_mode() ? 14 : 70, K = 3;
  for (const bool linear : {false, true}) {
    const Pcfs P = random_plfs(rng, nObj * K, 16, true);
    const Pcfs Q = random_plfs(rng, (nObj / 2 + 3) * K, 30, true);
    int devices = mpcf_cuda_device_count();
    for (const mpcf_dtype dtype : kDtypes) {
      mpcf_pcfs* X = make_collection(P, dtype, linear, K);
      mpcf_pcfs* Y = make_collection(Q, dtype, linear, K);
      mpcf_options* gpu = gpu_options();
      mpcf_options* tiny = gpu_options();
      check_ok(mpcf_options_set_block_hints(tiny, 0, 1, 7 * 5), "block hints");
      mpcf_options* one = gpu_options();
      const int first = 0;
      check_ok(mpcf_options_set_devices(one, 1, &first), "devices");
      check_ok(mpcf_options_set_block_hints(one, 0, 1, 16 * 16), "block hints");
      for (const Case& c : kCases) {
        for (mpcf_pcfs* Z : {static_cast<mpcf_pcfs*>(nullptr), Y}) {
          const Pcfs& C = Z ? Q : P;
          const std::size_t nc = C.n() / K;
          const auto g = values(X, Z, dtype, c, gpu);
          if (g != values(X, Z, dtype, c, tiny) || g != values(X, Z, dtype, c, one)) {
            std::printf("objects (%s, %s, dtype %d, %s): bits differ across blocks or GPUs "
                        "(%d GPUs)\n",
                        linear ? "PLF" : "PCF", c.name, static_cast<int>(dtype),
                        Z ? "cdist" : "pdist", devices);
            fail();
          }
          // Objects of PLFs: the CPU's bits where only +, -, *, / and sqrt
          // are taken (see test_plf_pdist_against_reference).
          if (linear && (c.op != Op::Lp || c.p == 2)) {
            mpcf_options* cpu = options_for(MPCF_BACKEND_CPU);
            if (g != values(X, Z, dtype, c, cpu)) {
              std::printf("objects (PLF, %s, dtype %d, %s): GPU bits differ from the CPU's\n",
                          c.name, static_cast<int>(dtype), Z ? "cdist" : "pdist");
              fail();
            }
            mpcf_options_destroy(cpu);
          }
          for (std::size_t i = 0; i < nObj; ++i) {
            for (std::size_t j = 0; j < nc; ++j) {
              long double want = 0, mag = 0;
              std::size_t pieces = 0;
              for (std::size_t k = 0; k < K; ++k) {
                const Reference r =
                    linear ? plf_reference(P, i * K + k, C, j * K + k, c.op, c.p, -INFINITY,
                                           INFINITY)
                           : reference(P, i * K + k, C, j * K + k, c.op, c.p, -INFINITY,
                                       INFINITY);
                pieces += r.rectangles;
                if (c.op == Op::Linf) {
                  want = std::max(want, r.value);
                  mag = std::max(mag, r.magnitude);
                } else if (c.op == Op::Lp) {
                  want += std::pow(r.value, static_cast<long double>(c.p));
                } else {
                  want += r.value;
                  mag += r.magnitude;
                }
              }
              if (c.op == Op::Lp) want = std::pow(want, 1.0L / c.p);
              if (c.op == Op::Lp) mag = want;
              const double got = element(g, dtype, i * nc + j);
              const Op tolOp = c.op == Op::Linf ? Op::Linf : Op::L1;
              if (!close_enough(got, want, mag, pieces, dtype, tolOp)) {
                std::printf("objects (%s, %s, dtype %d, %s) pair (%zu, %zu): GPU %.17g, "
                            "reference %.17Lg\n",
                            linear ? "PLF" : "PCF", c.name,
                            static_cast<int>(dtype), Z ? "cdist" : "pdist", i, j, got, want);
                fail();
              }
            }
          }
        }
      }
      mpcf_options_destroy(gpu);
      mpcf_options_destroy(tiny);
      mpcf_options_destroy(one);
      mpcf_pcfs_destroy(X);
      mpcf_pcfs_destroy(Y);
    }
  }
}

// kNN of PLFs and of objects on the GPU: the k smallest of the GPU's own
// matrix rows (the diagonal excluded for Y = NULL), by distance then index,
// the same distances bit for bit; the same bits with tiny blocks.
void test_knn_and_matvec(void**) {
  Rng rng(2611);
  const std::size_t nObj = small_mode() ? 30 : 150, k = 7;
  for (const std::size_t K : {std::size_t(1), std::size_t(2)}) {
    for (const bool linear : {true, false}) {
      if (!linear && K == 1) continue;  // single PCFs: test_gpu_reduce
      Pcfs P = random_plfs(rng, nObj * K, 12, true);
      // Equal objects: ties broken by the smaller index.
      for (std::size_t q = 0; q < K; ++q) {
        const std::size_t src = 3 * K + q, dst = 9 * K + q;
        Pcfs R;
        for (std::size_t f = 0; f < P.n(); ++f) {
          const std::size_t from = f == dst ? src : f;
          std::vector<double> ts(P.t.begin() + P.offsets[from], P.t.begin() + P.offsets[from + 1]);
          std::vector<double> vs(P.v.begin() + P.offsets[from], P.v.begin() + P.offsets[from + 1]);
          R.add(ts, vs);
        }
        P = R;
      }
      for (const mpcf_dtype dtype : kDtypes) {
        mpcf_pcfs* X = make_collection(P, dtype, linear, K);
        mpcf_options* gpu = gpu_options();
        mpcf_options* tiny = gpu_options();
        check_ok(mpcf_options_set_block_hints(tiny, 0, 1, 9 * 9), "block hints");
        for (const double p : {1.0, 2.0, double(INFINITY)}) {
          const auto D = dense_symmetric(X, dtype, p == 1 ? Op::L1 : p == 2 ? Op::Lp : Op::Linf, p,
                                         gpu);
          std::vector<unsigned char> dist(nObj * k * dtype_size(dtype)), dist2(dist.size());
          std::vector<std::int64_t> idx(nObj * k), idx2(nObj * k);
          check_ok(mpcf_knn(X, nullptr, p, k, dist.data(), idx.data(), nObj * k, gpu), "knn");
          check_ok(mpcf_knn(X, nullptr, p, k, dist2.data(), idx2.data(), nObj * k, tiny), "knn");
          if (dist != dist2 || idx != idx2) {
            std::printf("knn (%s K=%zu p=%g dtype %d): bits differ with tiny blocks\n",
                        linear ? "PLF" : "PCF", K, p, static_cast<int>(dtype));
            fail();
          }
          for (std::size_t i = 0; i < nObj; ++i) {
            std::vector<std::size_t> order;
            for (std::size_t j = 0; j < nObj; ++j) {
              if (j != i) order.push_back(j);
            }
            std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
              return element(D, dtype, i * nObj + x) < element(D, dtype, i * nObj + y);
            });
            for (std::size_t q = 0; q < k; ++q) {
              if (idx[i * k + q] != static_cast<std::int64_t>(order[q]) ||
                  element(dist, dtype, i * k + q) != element(D, dtype, i * nObj + order[q])) {
                std::printf("knn (%s K=%zu p=%g dtype %d) row %zu rank %zu: index %lld "
                            "distance %.17g, the matrix says %zu at %.17g\n",
                            linear ? "PLF" : "PCF", K, p, static_cast<int>(dtype), i, q,
                            static_cast<long long>(idx[i * k + q]),
                            element(dist, dtype, i * k + q), order[q],
                            element(D, dtype, i * nObj + order[q]));
                fail();
              }
            }
          }
        }
        // Kernel mat-vec (L2): K V against the GPU's kernel matrix times V
        // in long double (within the tolerance of the kernel values).
        const std::size_t r = 3;
        std::vector<double> V(nObj * r);
        for (auto& x : V) x = static_cast<float>(rng.uniform() * 2 - 1);
        std::vector<float> V32(V.begin(), V.end());
        const void* vp = dtype == MPCF_FLOAT32 ? static_cast<const void*>(V32.data()) : V.data();
        std::vector<unsigned char> out(nObj * r * dtype_size(dtype)), out2(out.size());
        check_ok(mpcf_kernel_matvec(X, nullptr, MPCF_KERNEL_L2, 2, 1, vp, nObj * r, r, out.data(),
                                    nObj * r, gpu),
                 "kernel_matvec");
        check_ok(mpcf_kernel_matvec(X, nullptr, MPCF_KERNEL_L2, 2, 1, vp, nObj * r, r,
                                    out2.data(), nObj * r, tiny),
                 "kernel_matvec");
        if (out != out2) {
          std::printf("matvec (%s K=%zu dtype %d): bits differ with tiny blocks\n",
                      linear ? "PLF" : "PCF", K, static_cast<int>(dtype));
          fail();
        }
        const auto G = dense_symmetric(X, dtype, Op::Kernel, 2, gpu);
        for (std::size_t i = 0; i < nObj; ++i) {
          for (std::size_t c = 0; c < r; ++c) {
            long double want = 0, mag = 0;
            for (std::size_t j = 0; j < nObj; ++j) {
              const long double term = static_cast<long double>(element(G, dtype, i * nObj + j)) *
                                       static_cast<long double>(dtype == MPCF_FLOAT32
                                                                    ? V32[j * r + c]
                                                                    : V[j * r + c]);
              want += term;
              mag += std::fabs(term);
            }
            const double got = element(out, dtype, i * r + c);
            if (!(std::fabs(got - want) <= 4 * base_tolerance(dtype) * (mag + 1e-30L))) {
              std::printf("matvec (%s K=%zu dtype %d) out[%zu][%zu] = %.17g, K V = %.17Lg\n",
                          linear ? "PLF" : "PCF", K, static_cast<int>(dtype), i, c, got, want);
              fail();
            }
          }
        }
        mpcf_options_destroy(gpu);
        mpcf_options_destroy(tiny);
        mpcf_pcfs_destroy(X);
      }
    }
  }
}

}  // namespace

int main() {
  if (!on_cpu()) skip_without_gpu("test_gpu_plf");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plf_hand_values),
      cmocka_unit_test(test_plf_pdist_against_reference),
      cmocka_unit_test(test_objects_and_same_bits),
      cmocka_unit_test(test_knn_and_matvec),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
