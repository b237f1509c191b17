// The CUDA backend against hand-computed values, the independent long double
// reference and the CPU backend, through the public C API: every operation,
// both dtypes, every layout, windows, infinite tails, cdist tensor shapes,
// sizes from 0 to thousands and uneven breakpoint counts.
#include "gpu_test_support.hpp"

using namespace gputest;

namespace {

const mpcf_dtype kDtypes[] = {MPCF_FLOAT32, MPCF_FLOAT64};
const Op kOps[] = {Op::L1, Op::Lp, Op::Linf, Op::Kernel};

mpcf_options* cuda_options() { return options_for(MPCF_BACKEND_CUDA); }
mpcf_options* cpu_options() { return options_for(MPCF_BACKEND_CPU); }

// Dense n x n result of X on the GPU and on the CPU, compared entry by entry
// (within tolerance) and, for `samples` random pairs, with the reference.
void check_symmetric(const Pcfs& P, mpcf_dtype dtype, Op op, double a, double b,
                     std::size_t samples, Rng& rng) {
  mpcf_pcfs* X = make_handle(P, dtype);
  mpcf_options* gpu = cuda_options();
  mpcf_options* cpu = cpu_options();
  if (a != -INFINITY || b != INFINITY) {
    check_ok(mpcf_options_set_window(gpu, a, b), "set_window");
    check_ok(mpcf_options_set_window(cpu, a, b), "set_window");
  }
  const double p = p_of(op);
  const auto g = dense_symmetric(X, dtype, op, p, gpu);
  const auto c = dense_symmetric(X, dtype, op, p, cpu);
  const std::size_t n = P.n();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const double gv = element(g, dtype, i * n + j);
      const double cv = element(c, dtype, i * n + j);
      // Every pair against the CPU; the reference supplies the error scale
      // only where the two differ (it is sampled on its own below).
      bool ok = gv == cv;
      if (!ok) {
        const Reference r = reference(P, i, P, j, op, p, a, b);
        ok = close_enough(gv, cv, r.magnitude, r.rectangles, dtype, op);
      }
      if (!ok) {
        std::printf("GPU %s (dtype %d, window [%g, %g)) pair (%zu, %zu): GPU %.17g, CPU %.17g\n",
                    op_name(op).c_str(), static_cast<int>(dtype), a, b, i, j, gv, cv);
        fail();
      }
      if (op != Op::Kernel && i == j && gv != 0.0) {
        std::printf("d(f, f) = %.17g, not 0, for function %zu\n", gv, i);
        fail();
      }
      if (gv != element(g, dtype, j * n + i)) {
        std::printf("GPU result not exactly symmetric at (%zu, %zu)\n", i, j);
        fail();
      }
    }
  }
  for (std::size_t s = 0; s < samples && n > 0; ++s) {
    const std::size_t i = rng.below(n), j = rng.below(n);
    const Reference r = reference(P, i, P, j, op, p, a, b);
    const double gv = element(g, dtype, i * n + j);
    if (!close_enough(gv, r.value, r.magnitude, r.rectangles, dtype, op)) {
      std::printf("GPU %s (dtype %d, window [%g, %g)) pair (%zu, %zu): GPU %.17g, reference %.17Lg\n",
                  op_name(op).c_str(), static_cast<int>(dtype), a, b, i, j, gv, r.value);
      fail();
    }
  }
  mpcf_options_destroy(gpu);
  mpcf_options_destroy(cpu);
  mpcf_pcfs_destroy(X);
}

// ---- hand-computed values ----

void test_known_values(void**) {
  for (mpcf_dtype dtype : kDtypes) {
    mpcf_options* o = cuda_options();
    Pcfs A;
    A.add({0, 1}, {3, 0});  // f
    A.add({0, 2}, {1, 0});  // g
    mpcf_pcfs* X = make_handle(A, dtype);
    // |f - g| = 2 on [0,1), 1 on [1,2): L1 3, L2 sqrt(5), Linf 2.
    auto d1 = dense_symmetric(X, dtype, Op::L1, 1.0, o);
    assert_true(element(d1, dtype, 1) == 3.0 && element(d1, dtype, 2) == 3.0);
    assert_true(element(d1, dtype, 0) == 0.0 && element(d1, dtype, 3) == 0.0);
    auto d2 = dense_symmetric(X, dtype, Op::Lp, 2.0, o);
    assert_true(std::fabs(element(d2, dtype, 1) - std::sqrt(5.0)) <= 1e-6);
    auto dinf = dense_symmetric(X, dtype, Op::Linf, INFINITY, o);
    assert_true(element(dinf, dtype, 1) == 2.0);
    // Window [0.5, 1.5): 0.5 * 2 + 0.5 * 1 = 1.5.
    check_ok(mpcf_options_set_window(o, 0.5, 1.5), "set_window");
    auto dw = dense_symmetric(X, dtype, Op::L1, 1.0, o);
    assert_true(element(dw, dtype, 1) == 1.5);
    mpcf_pcfs_destroy(X);

    Pcfs B;
    B.add({0, 2, 3}, {10, 5, 0});
    B.add({0, 6}, {5, 0});
    X = make_handle(B, dtype);
    check_ok(mpcf_options_set_window(o, -INFINITY, INFINITY), "set_window");
    auto d = dense_symmetric(X, dtype, Op::L1, 1.0, o);  // 10 + 0 + 15 = 25
    assert_true(element(d, dtype, 1) == 25.0);
    mpcf_pcfs_destroy(X);

    Pcfs K;
    K.add({0, 3}, {4, 0});
    K.add({0, 3}, {2, 0});
    X = make_handle(K, dtype);
    auto k = dense_symmetric(X, dtype, Op::Kernel, 2.0, o);
    assert_true(element(k, dtype, 0) == 48.0 && element(k, dtype, 1) == 24.0);
    assert_true(element(k, dtype, 2) == 24.0 && element(k, dtype, 3) == 12.0);
    mpcf_pcfs_destroy(X);
    mpcf_options_destroy(o);
  }
}

// Non-vanishing functions: +inf distances, -inf kernels, exact zeros for
// equal tails, and finite answers inside a finite window.
void test_infinite_tails(void**) {
  for (mpcf_dtype dtype : kDtypes) {
    Pcfs T;
    T.add({0}, {1});       // f = 1 on [0, inf)
    T.add({0}, {-2});      // g = -2 on [0, inf)
    T.add({-1, 0}, {7, 1});  // h = 7 on [-1, 0), then 1 for ever
    mpcf_pcfs* X = make_handle(T, dtype);
    mpcf_options* o = cuda_options();
    const double inf = INFINITY;
    auto d = dense_symmetric(X, dtype, Op::L1, 1.0, o);
    assert_true(element(d, dtype, 0 * 3 + 1) == inf);
    // f and h share the tail 1: only [-1, 0) counts, |0 - 7| * 1 = 7.
    assert_true(element(d, dtype, 0 * 3 + 2) == 7.0);
    auto dinf = dense_symmetric(X, dtype, Op::Linf, inf, o);
    assert_true(element(dinf, dtype, 1) == 3.0);
    auto k = dense_symmetric(X, dtype, Op::Kernel, 2.0, o);
    assert_true(element(k, dtype, 0 * 3 + 1) == -inf);  // 1 * -2 for ever
    assert_true(element(k, dtype, 0) == inf);
    check_ok(mpcf_options_set_window(o, 0.0, 3.0), "set_window");
    auto kw = dense_symmetric(X, dtype, Op::Kernel, 2.0, o);
    assert_true(element(kw, dtype, 1) == -6.0);  // 1 * -2 * 3
    auto dw = dense_symmetric(X, dtype, Op::L1, 1.0, o);
    assert_true(element(dw, dtype, 1) == 9.0);  // 3 * 3
    check_ok(mpcf_options_set_window(o, -0.5, INFINITY), "set_window");
    auto dh = dense_symmetric(X, dtype, Op::L1, 1.0, o);
    assert_true(element(dh, dtype, 0 * 3 + 2) == 3.5);  // 7 * 0.5
    mpcf_options_destroy(o);
    mpcf_pcfs_destroy(X);
  }
}

// ---- random inputs against the CPU backend and the reference ----

void test_random_ops_windows_tails(void**) {
  Rng rng(20240611);
  const double windows[][2] = {{-INFINITY, INFINITY}, {-1.0, 3.5}, {0.25, INFINITY}, {-INFINITY, 2.0}};
  const std::size_t n = small_mode() ? 40 : 150;
  for (mpcf_dtype dtype : kDtypes) {
    for (Op op : kOps) {
      for (const auto& w : windows) {
        for (bool zeroTail : {true, false}) {
          RandomSpec spec;
          spec.n = n;
          spec.maxM = 40;
          spec.zeroTail = zeroTail;
          spec.nonNegative = rng.below(2) == 0;
          const Pcfs P = random_pcfs(rng, spec);
          check_symmetric(P, dtype, op, w[0], w[1], 40, rng);
        }
      }
    }
  }
}

void test_sizes(void**) {
  Rng rng(7);
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 31, 32, 33, 65, 400};
  if (!small_mode()) sizes.push_back(2500);
  for (std::size_t n : sizes) {
    for (mpcf_dtype dtype : kDtypes) {
      RandomSpec spec;
      spec.n = n;
      spec.maxM = 12;
      const Pcfs P = random_pcfs(rng, spec);
      check_symmetric(P, dtype, n > 1000 ? Op::L1 : Op::Kernel, -INFINITY, INFINITY, 20, rng);
    }
  }
}

// Breakpoint counts from 1 to 2000 in one collection (tiles whose column
// functions do and do not fit the shared-memory staging).
void test_uneven_lengths(void**) {
  Rng rng(99);
  for (mpcf_dtype dtype : kDtypes) {
    for (Op op : {Op::L1, Op::Kernel}) {
      RandomSpec spec;
      spec.n = small_mode() ? 40 : 300;
      spec.minM = 1;
      spec.maxM = small_mode() ? 300 : 2000;
      spec.nonNegative = true;
      const Pcfs P = random_pcfs(rng, spec);
      check_symmetric(P, dtype, op, -INFINITY, INFINITY, 15, rng);
    }
  }
}

// ---- layouts ----

// Index of (i, j), i != j, in each layout (hand-written from mpcf.h).
std::size_t condensed_index(std::size_t n, std::size_t i, std::size_t j) {
  const std::size_t r = std::min(i, j), c = std::max(i, j);
  return n * r - r * (r + 1) / 2 + (c - r - 1);
}
std::size_t packed_index(std::size_t i, std::size_t j, bool diagonal) {
  const std::size_t r = std::max(i, j), c = std::min(i, j);
  return diagonal ? r * (r + 1) / 2 + c : r * (r - 1) / 2 + c;
}

void test_layouts(void**) {
  Rng rng(3);
  RandomSpec spec;
  spec.n = 77;
  spec.maxM = 30;
  const Pcfs P = random_pcfs(rng, spec);
  for (mpcf_dtype dtype : kDtypes) {
    mpcf_pcfs* X = make_handle(P, dtype);
    mpcf_options* o = cuda_options();
    const std::size_t n = P.n();
    for (Op op : kOps) {
      const bool kernel = op == Op::Kernel;
      const auto dense = dense_symmetric(X, dtype, op, p_of(op), o);
      for (mpcf_layout layout : {MPCF_LAYOUT_CONDENSED, MPCF_LAYOUT_PACKED_LOWER}) {
        if (kernel && layout == MPCF_LAYOUT_CONDENSED) continue;
        std::uint64_t size = 0;
        check_ok(kernel ? mpcf_l2_kernel_size(X, layout, &size) : mpcf_pdist_size(X, layout, &size),
                 "size");
        assert_int_equal(size, kernel ? n * (n + 1) / 2 : n * (n - 1) / 2);
        std::vector<unsigned char> out(size * dtype_size(dtype));
        check_ok(kernel ? mpcf_l2_kernel(X, layout, out.data(), size, o)
                        : mpcf_pdist(X, p_of(op), layout, out.data(), size, o),
                 "compute");
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (i == j && !kernel) continue;
            const std::size_t k = layout == MPCF_LAYOUT_CONDENSED ? condensed_index(n, i, j)
                                                                  : packed_index(i, j, kernel);
            if (element(out, dtype, k) != element(dense, dtype, i * n + j)) {
              std::printf("layout %d, op %s: entry (%zu, %zu) differs from the dense result\n",
                          static_cast<int>(layout), op_name(op).c_str(), i, j);
              fail();
            }
          }
        }
      }
    }
    mpcf_options_destroy(o);
    mpcf_pcfs_destroy(X);
  }
}

// ---- cdist on tensors ----

void check_cdist(const Pcfs& PX, const std::vector<std::uint64_t>& shapeX, const Pcfs& PY,
                 const std::vector<std::uint64_t>& shapeY, mpcf_dtype dtype, Rng& rng) {
  mpcf_pcfs* X = make_handle(PX, dtype);
  mpcf_pcfs* Y = make_handle(PY, dtype);
  check_ok(mpcf_pcfs_reshape(X, shapeX.size(), shapeX.data()), "reshape X");
  check_ok(mpcf_pcfs_reshape(Y, shapeY.size(), shapeY.data()), "reshape Y");
  const std::size_t nx = PX.n(), ny = PY.n();
  mpcf_options* gpu = cuda_options();
  mpcf_options* cpu = cpu_options();
  for (Op op : kOps) {
    const mpcf_metric metric = op == Op::Kernel ? MPCF_METRIC_L2_KERNEL : MPCF_METRIC_LP_DISTANCE;
    std::uint64_t size = 0;
    check_ok(mpcf_cdist_size(X, Y, &size), "cdist_size");
    assert_int_equal(size, nx * ny);
    std::vector<unsigned char> g(std::max<std::size_t>(size, 1) * dtype_size(dtype));
    std::vector<unsigned char> c(g.size());
    check_ok(mpcf_cdist(X, Y, metric, p_of(op), g.data(), size, gpu), "cdist GPU");
    check_ok(mpcf_cdist(X, Y, metric, p_of(op), c.data(), size, cpu), "cdist CPU");
    for (std::size_t i = 0; i < nx; ++i) {
      for (std::size_t j = 0; j < ny; ++j) {
        const double gv = element(g, dtype, i * ny + j), cv = element(c, dtype, i * ny + j);
        if (gv == cv) continue;
        const Reference r = reference(PX, i, PY, j, op, p_of(op), -INFINITY, INFINITY);
        if (!close_enough(gv, cv, r.magnitude, r.rectangles, dtype, op)) {
          std::printf("cdist %s (%zu, %zu): GPU %.17g CPU %.17g\n", op_name(op).c_str(), i, j, gv, cv);
          fail();
        }
      }
    }
    for (int s = 0; s < 30 && nx > 0 && ny > 0; ++s) {
      const std::size_t i = rng.below(nx), j = rng.below(ny);
      const Reference r = reference(PX, i, PY, j, op, p_of(op), -INFINITY, INFINITY);
      const double gv = element(g, dtype, i * ny + j);
      if (!close_enough(gv, r.value, r.magnitude, r.rectangles, dtype, op)) {
        std::printf("cdist %s (%zu, %zu): GPU %.17g reference %.17Lg\n", op_name(op).c_str(), i, j,
                    gv, r.value);
        fail();
      }
    }
  }
  mpcf_options_destroy(gpu);
  mpcf_options_destroy(cpu);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

void test_cdist_tensors(void**) {
  Rng rng(11);
  for (mpcf_dtype dtype : kDtypes) {
    RandomSpec sx, sy;
    sx.n = 3 * 4 * 5;
    sx.maxM = 25;
    sy.n = 7 * 11;
    sy.maxM = 60;
    sy.zeroTail = false;
    const Pcfs PX = random_pcfs(rng, sx), PY = random_pcfs(rng, sy);
    check_cdist(PX, {3, 4, 5}, PY, {7, 11}, dtype, rng);  // rank 3 x rank 2
    check_cdist(PY, {7, 11}, PX, {60}, dtype, rng);        // rank 2 x rank 1
    RandomSpec s1;
    s1.n = 1;
    const Pcfs P1 = random_pcfs(rng, s1);
    check_cdist(P1, {1, 1}, PX, {3, 20}, dtype, rng);  // a single row
    const Pcfs P0;                                     // no functions at all
    check_cdist(P0, {0}, PX, {60}, dtype, rng);
  }
}

// ---- backend selection and device list ----

void test_auto_backend_above_threshold(void**) {
  Rng rng(5);
  RandomSpec spec;
  spec.n = 120;
  const Pcfs P = random_pcfs(rng, spec);
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT64);
  mpcf_options* autoO = options_for(MPCF_BACKEND_AUTO);
  check_ok(mpcf_options_set_cuda_threshold(autoO, 0.0), "threshold");
  mpcf_options* gpu = cuda_options();
  const auto a = dense_symmetric(X, MPCF_FLOAT64, Op::L1, 1.0, autoO);
  const auto g = dense_symmetric(X, MPCF_FLOAT64, Op::L1, 1.0, gpu);
  // AUTO above the threshold runs the CUDA backend: the same bits.
  assert_memory_equal(a.data(), g.data(), a.size());
  mpcf_options_destroy(autoO);
  mpcf_options_destroy(gpu);
  mpcf_pcfs_destroy(X);
}

void test_missing_device_is_a_clear_error(void**) {
  Pcfs P;
  P.add({0, 1}, {1, 0});
  P.add({0, 2}, {1, 0});
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT64);
  mpcf_options* o = cuda_options();
  const int missing = mpcf_cuda_device_count();
  check_ok(mpcf_options_set_devices(o, 1, &missing), "set_devices");
  double out[1] = {42.0};
  const mpcf_status st = mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, o);
  assert_int_equal(st, MPCF_ERROR_CUDA_UNAVAILABLE);
  const std::string msg = mpcf_last_error_message();
  const std::string want = "device id " + std::to_string(missing) + " does not exist";
  if (msg.find(want) == std::string::npos) {
    std::printf("message '%s' does not say '%s'\n", msg.c_str(), want.c_str());
    fail();
  }
  assert_true(out[0] == 42.0);  // nothing written
  const int zero = 0;
  check_ok(mpcf_options_set_devices(o, 1, &zero), "set_devices");
  check_ok(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, o), "pdist on device 0");
  assert_true(out[0] == 1.0);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

}  // namespace

int main(int, char** argv) {
  skip_without_gpu(argv[0]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_values),
      cmocka_unit_test(test_infinite_tails),
      cmocka_unit_test(test_random_ops_windows_tails),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_uneven_lengths),
      cmocka_unit_test(test_layouts),
      cmocka_unit_test(test_cdist_tensors),
      cmocka_unit_test(test_auto_backend_above_threshold),
      cmocka_unit_test(test_missing_device_is_a_clear_error),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
