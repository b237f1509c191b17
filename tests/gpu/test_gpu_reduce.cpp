// The reductions on the CUDA backend through the C API, against the CPU
// backend and the full distance matrix: k nearest neighbours (device top-k
// lists for k <= 32, the host fallback beyond), kernel mat-vec (device
// exact-sum partials), the block streams (diagonal blocks completed on the
// device); the same bits for any block shape and GPU stream overlap.
#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "gpu_test_support.hpp"

using namespace gputest;

namespace {

mpcf_options* gpu_options(std::uint64_t maxElements = 0) {
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  if (maxElements) check_ok(mpcf_options_set_block_hints(o, 1, 1, maxElements), "block hints");
  return o;
}

// The full distance matrix on backend `o`: X against Y (cdist), or X
// against itself (pdist, dense: the same plane and kernels as knn(X, k)).
std::vector<double> full_matrix(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype, double p,
                                std::size_t nx, std::size_t ny, mpcf_options* o) {
  std::vector<unsigned char> buf(nx * ny * dtype_size(dtype));
  if (Y) {
    check_ok(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, p, buf.data(), nx * ny, o), "cdist");
  } else {
    check_ok(mpcf_pdist(X, p, MPCF_LAYOUT_DENSE, buf.data(), nx * ny, o), "pdist");
  }
  std::vector<double> d(nx * ny);
  for (std::size_t e = 0; e < d.size(); ++e) d[e] = element(buf, dtype, e);
  return d;
}

struct KnnResult {
  std::vector<unsigned char> dist;
  std::vector<std::int64_t> idx;
};

KnnResult run_knn(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype, double p, std::size_t k,
                  std::size_t nx, mpcf_options* o) {
  KnnResult r;
  r.dist.assign(nx * k * dtype_size(dtype), 0);
  r.idx.assign(nx * k, -7);
  check_ok(mpcf_knn(X, Y, p, k, r.dist.data(), r.idx.data(), nx * k, o), "knn");
  return r;
}

// Each owner's k neighbours in r against a sort (by distance, then index)
// of its candidates in the full matrix D (ny columns): row i, or column i
// (columns), the owner itself left out (excludeSelf): the same distances,
// bit for bit, and the same neighbours.
void check_lists(const char* what, double p, const KnnResult& r, mpcf_dtype dtype,
                 const std::vector<double>& D, std::size_t ny, std::size_t owners,
                 std::size_t others, std::size_t k, bool columns, bool excludeSelf) {
  std::vector<std::pair<double, std::size_t>> row;
  for (std::size_t i = 0; i < owners; ++i) {
    row.clear();
    for (std::size_t j = 0; j < others; ++j) {
      if (excludeSelf && j == i) continue;
      row.emplace_back(columns ? D[j * ny + i] : D[i * ny + j], j);
    }
    std::sort(row.begin(), row.end());
    for (std::size_t q = 0; q < k; ++q) {
      const std::size_t e = i * k + q;
      const double got = element(r.dist, dtype, e);
      if (r.idx[e] != static_cast<std::int64_t>(row[q].second) || got != row[q].first) {
        std::printf("%s p=%g k=%zu %s %zu, neighbour %zu: GPU (%lld, %.17g), matrix (%zu, %.17g)\n",
                    what, p, k, columns ? "column" : "row", i, q, static_cast<long long>(r.idx[e]),
                    got, row[q].second, row[q].first);
        fail();
      }
    }
  }
}

// GPU kNN against a sort (by distance, then index) of the GPU's own full
// matrix: the same distances, bit for bit, and the same neighbours; the
// CPU's kNN within tolerance (the GPU contracts multiply-adds); the same
// bits for any block shape (many small blocks, streams overlapping).
void check_knn(const Pcfs& P, const Pcfs* Q, mpcf_dtype dtype, double p, std::size_t k) {
  mpcf_pcfs* X = make_handle(P, dtype);
  mpcf_pcfs* Y = Q ? make_handle(*Q, dtype) : nullptr;
  const std::size_t nx = P.n(), ny = Q ? Q->n() : P.n();
  mpcf_options* cpu = options_for(MPCF_BACKEND_CPU);
  mpcf_options* gpu = gpu_options();
  const KnnResult g = run_knn(X, Y, dtype, p, k, nx, gpu);
  const KnnResult c = run_knn(X, Y, dtype, p, k, nx, cpu);
  const auto D = full_matrix(X, Y, dtype, p, nx, ny, gpu);
  check_lists("knn", p, g, dtype, D, ny, nx, ny, k, false, !Q);
  for (std::size_t e = 0; e < nx * k; ++e) {
    const double gd = element(g.dist, dtype, e), cd = element(c.dist, dtype, e);
    assert_true(std::fabs(gd - cd) <= (dtype == MPCF_FLOAT32 ? 1e-4 : 1e-10) * std::max(1.0, cd));
  }
  for (std::uint64_t side : {48u, 200u}) {
    mpcf_options* small = gpu_options(side * side);
    const KnnResult s = run_knn(X, Y, dtype, p, k, nx, small);
    assert_true(s.dist == g.dist && s.idx == g.idx);
    mpcf_options_destroy(small);
  }
  mpcf_options_destroy(cpu);
  mpcf_options_destroy(gpu);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

void test_knn_gpu_matches_cpu(void**) {
  Rng rng(31);
  RandomSpec spec;
  spec.n = small_mode() ? 150 : 700;
  spec.maxM = 40;
  const Pcfs P = random_pcfs(rng, spec);
  spec.n = small_mode() ? 60 : 300;
  const Pcfs Q = random_pcfs(rng, spec);
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    for (std::size_t k : {1, 7, 16, 32}) check_knn(P, nullptr, dtype, 1.0, k);
    check_knn(P, nullptr, dtype, 2.0, 10);
    check_knn(P, nullptr, dtype, INFINITY, 5);
    check_knn(P, nullptr, dtype, 3.0, 9);
    check_knn(P, &Q, dtype, 1.0, 12);
    check_knn(P, nullptr, dtype, 1.0, 40);  // beyond the device lists: host top-k
  }
}

// GPU kNN both ways (mpcf_knn_both): X's lists among Y and Y's among X from
// one pass, against sorts of the rows and columns of the GPU's own cdist
// matrix, bit for bit the GPU's mpcf_knn(X, Y, kx) and mpcf_knn(Y, X, ky),
// and the same bits for any block shape (device lists for k <= 32 on both
// sides, the host's beyond).
void check_knn_both(const Pcfs& P, const Pcfs& Q, mpcf_dtype dtype, double p, std::size_t kx,
                    std::size_t ky) {
  mpcf_pcfs* X = make_handle(P, dtype);
  mpcf_pcfs* Y = make_handle(Q, dtype);
  const std::size_t nx = P.n(), ny = Q.n();
  mpcf_options* gpu = gpu_options();
  auto both = [&](mpcf_options* o) {
    KnnResult x, y;
    x.dist.assign(nx * kx * dtype_size(dtype), 0);
    x.idx.assign(nx * kx, -7);
    y.dist.assign(ny * ky * dtype_size(dtype), 0);
    y.idx.assign(ny * ky, -7);
    check_ok(mpcf_knn_both(X, Y, p, kx, ky, x.dist.data(), x.idx.data(), nx * kx, y.dist.data(),
                           y.idx.data(), ny * ky, o),
             "knn_both");
    return std::make_pair(x, y);
  };
  const auto [gx, gy] = both(gpu);
  const auto D = full_matrix(X, Y, dtype, p, nx, ny, gpu);
  check_lists("knn_both", p, gx, dtype, D, ny, nx, ny, kx, false, false);
  check_lists("knn_both", p, gy, dtype, D, ny, ny, nx, ky, true, false);
  const KnnResult one = run_knn(X, Y, dtype, p, kx, nx, gpu);
  const KnnResult other = run_knn(Y, X, dtype, p, ky, ny, gpu);
  assert_true(one.dist == gx.dist && one.idx == gx.idx);
  assert_true(other.dist == gy.dist && other.idx == gy.idx);
  for (std::uint64_t side : {48u, 200u}) {
    mpcf_options* small = gpu_options(side * side);
    const auto [sx, sy] = both(small);
    assert_true(sx.dist == gx.dist && sx.idx == gx.idx);
    assert_true(sy.dist == gy.dist && sy.idx == gy.idx);
    mpcf_options_destroy(small);
  }
  mpcf_options_destroy(gpu);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

void test_knn_both_ways_gpu(void**) {
  Rng rng(37);
  RandomSpec spec;
  spec.n = small_mode() ? 130 : 500;
  spec.maxM = 40;
  const Pcfs P = random_pcfs(rng, spec);
  spec.n = small_mode() ? 70 : 330;
  const Pcfs Q = random_pcfs(rng, spec);
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    check_knn_both(P, Q, dtype, 1.0, 10, 10);
    check_knn_both(P, Q, dtype, 2.0, 1, 32);
    check_knn_both(P, Q, dtype, 1.0, 5, 40);   // Y's lists beyond the device's: host top-k
    check_knn_both(P, Q, dtype, INFINITY, 33, 3);
  }
}

// Integer-grid functions: many equal distances, ties by the smaller index.
void test_knn_gpu_ties(void**) {
  Pcfs P;
  Rng rng(32);
  for (std::size_t i = 0; i < (small_mode() ? 120u : 400u); ++i) {
    const std::size_t m = 1 + rng.below(4);
    std::vector<double> t, v;
    for (std::size_t k = 0; k < m; ++k) {
      t.push_back(static_cast<double>(k));
      v.push_back(k + 1 == m ? 0.0 : static_cast<double>(rng.below(3)));
    }
    P.add(t, v);
  }
  check_knn(P, nullptr, MPCF_FLOAT64, 1.0, 20);
  check_knn(P, &P, MPCF_FLOAT32, 1.0, 8);  // itself among Y: distance 0 first
}

std::vector<unsigned char> run_matvec(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype,
                                      mpcf_kernel kernel, double p, double s,
                                      const std::vector<unsigned char>& V, std::size_t r,
                                      std::size_t nx, mpcf_options* o) {
  std::vector<unsigned char> out(nx * r * dtype_size(dtype));
  check_ok(mpcf_kernel_matvec(X, Y, kernel, p, s, V.data(), V.size() / dtype_size(dtype), r,
                              out.data(), nx * r, o),
           "kernel_matvec");
  return out;
}

void test_matvec_gpu_matches_cpu(void**) {
  Rng rng(33);
  RandomSpec spec;
  spec.n = small_mode() ? 120 : 600;
  spec.maxM = 30;
  const Pcfs P = random_pcfs(rng, spec);
  spec.n = small_mode() ? 50 : 200;
  const Pcfs Q = random_pcfs(rng, spec);
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(P, dtype);
    mpcf_pcfs* Y = make_handle(Q, dtype);
    for (const Pcfs* cols : {static_cast<const Pcfs*>(nullptr), &Q}) {
      const std::size_t ny = cols ? cols->n() : P.n();
      for (std::size_t r : {1, 5, 16}) {
        std::vector<unsigned char> V(ny * r * dtype_size(dtype));
        for (std::size_t e = 0; e < ny * r; ++e) {
          const double x = rng.uniform() * 2 - 1;
          if (dtype == MPCF_FLOAT32) {
            const float f = static_cast<float>(x);
            std::memcpy(V.data() + e * 4, &f, 4);
          } else {
            std::memcpy(V.data() + e * 8, &x, 8);
          }
        }
        using K = std::tuple<mpcf_kernel, double, double>;
        for (const K& k : {K{MPCF_KERNEL_L2, 2.0, 1.0}, K{MPCF_KERNEL_GAUSSIAN, 2.0, 3.0},
                           K{MPCF_KERNEL_LAPLACIAN, 1.0, 5.0}}) {
          const auto [kernel, p, s] = k;
          mpcf_options* cpu = options_for(MPCF_BACKEND_CPU);
          mpcf_options* gpu = gpu_options();
          mpcf_pcfs* Yh = cols ? Y : nullptr;
          const auto c = run_matvec(X, Yh, dtype, kernel, p, s, V, r, P.n(), cpu);
          const auto g = run_matvec(X, Yh, dtype, kernel, p, s, V, r, P.n(), gpu);
          // CPU and GPU within tolerance (the GPU contracts multiply-adds
          // and has its own exp); each backend reproducible to the bit.
          for (std::size_t e = 0; e < P.n() * r; ++e) {
            const double cv = element(c, dtype, e), gv = element(g, dtype, e);
            double scale = 1.0;
            for (std::size_t j = 0; j < ny; ++j) scale += std::fabs(element(V, dtype, j * r + e % r));
            if (kernel == MPCF_KERNEL_L2) scale *= 1e3;  // |K| up to ~1e3 here
            if (!(std::fabs(cv - gv) <= (dtype == MPCF_FLOAT32 ? 1e-5 : 1e-12) * scale)) {
              std::printf("matvec kernel %d r %zu entry %zu: GPU %.17g, CPU %.17g\n",
                          static_cast<int>(kernel), r, e, gv, cv);
              fail();
            }
          }
          for (std::uint64_t side : {40u, 130u}) {
            mpcf_options* small = gpu_options(side * side);
            assert_true(run_matvec(X, Yh, dtype, kernel, p, s, V, r, P.n(), small) == g);
            mpcf_options_destroy(small);
          }
          mpcf_options_destroy(cpu);
          mpcf_options_destroy(gpu);
        }
      }
    }
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
}

struct Collected {
  std::size_t nr, nc;
  bool symmetric;
  mpcf_dtype dtype;
  std::vector<double> m;
  std::vector<int> seen;
};

int collect(const mpcf_block* b, void* user) {
  auto* c = static_cast<Collected*>(user);
  if (b->dtype != c->dtype || (c->symmetric && b->row_begin < b->col_begin)) return 1;
  const std::size_t w = b->col_end - b->col_begin;
  for (std::uint64_t i = b->row_begin; i < b->row_end; ++i) {
    for (std::uint64_t j = b->col_begin; j < b->col_end; ++j) {
      const std::size_t e = (i - b->row_begin) * w + (j - b->col_begin);
      const double v = c->dtype == MPCF_FLOAT32 ? static_cast<const float*>(b->values)[e]
                                                : static_cast<const double*>(b->values)[e];
      c->m[i * c->nc + j] = v;
      ++c->seen[i * c->nc + j];
      if (c->symmetric && i != j) {
        c->m[j * c->nc + i] = v;
        ++c->seen[j * c->nc + i];
      }
    }
  }
  return 0;
}

void test_streams_gpu(void**) {
  Rng rng(34);
  RandomSpec spec;
  spec.n = small_mode() ? 130 : 500;
  spec.maxM = 25;
  const Pcfs P = random_pcfs(rng, spec);
  spec.n = 77;
  const Pcfs Q = random_pcfs(rng, spec);
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(P, dtype);
    mpcf_pcfs* Y = make_handle(Q, dtype);
    for (bool cross : {false, true}) {
      const std::size_t nx = P.n(), ny = cross ? Q.n() : P.n();
      mpcf_options* gpu = gpu_options();
      const auto D = full_matrix(X, cross ? Y : nullptr, dtype, 1.0, nx, ny, gpu);
      mpcf_options_destroy(gpu);
      for (std::uint64_t side : {0u, 64u}) {
        mpcf_options* o = gpu_options(side * side);
        Collected c{nx, ny, !cross, dtype, std::vector<double>(nx * ny, NAN),
                    std::vector<int>(nx * ny, 0)};
        if (cross) {
          check_ok(mpcf_cdist_stream(X, Y, MPCF_METRIC_LP_DISTANCE, 1.0, collect, &c, o), "stream");
        } else {
          check_ok(mpcf_pdist_stream(X, 1.0, collect, &c, o), "stream");
        }
        for (std::size_t e = 0; e < nx * ny; ++e) {
          if (c.m[e] != D[e] || c.seen[e] < 1 || c.seen[e] > 2 || (cross && c.seen[e] != 1)) {
            std::printf("stream (cross %d, side %llu): entry %zu = %.17g (seen %d), want %.17g\n",
                        cross, static_cast<unsigned long long>(side), e, c.m[e], c.seen[e], D[e]);
            fail();
          }
        }
        mpcf_options_destroy(o);
      }
    }
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
}

// float32 inner products whose float sums overflow are computed again in
// double on the GPU (overflowing_inner_product_pcfs: <f, g> = 0, not
// inf - inf = NaN; <f, f> = +inf). Many pairs, so that some share a warp
// with ordinary ones; the same in a window.
void test_float32_inner_products_on_the_gpu(void**) {
  const Pcfs P = overflowing_inner_product_pcfs(300);
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT32);
  const std::size_t n = P.n();
  std::vector<float> K(n * n);
  for (bool windowed : {false, true}) {
    mpcf_options* o = gpu_options();
    if (windowed) check_ok(mpcf_options_set_window(o, -1.0, 5.0), "window");
    check_ok(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, K.data(), K.size(), o), "l2_kernel");
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const float got = K[i * n + j];
        const float want = overflowing_inner_product(i, j);
        if (!(got == want)) {
          std::printf("K[%zu][%zu] (kinds %zu, %zu) = %g, want %g\n", i, j, i % 3, j % 3, got,
                      want);
          fail();
        }
      }
    }
    mpcf_options_destroy(o);
  }
  mpcf_pcfs_destroy(X);
}

}  // namespace

int main(int, char** argv) {
  skip_without_gpu(argv[0]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_knn_gpu_matches_cpu),
      cmocka_unit_test(test_knn_gpu_ties),
      cmocka_unit_test(test_knn_both_ways_gpu),
      cmocka_unit_test(test_matvec_gpu_matches_cpu),
      cmocka_unit_test(test_streams_gpu),
      cmocka_unit_test(test_float32_inner_products_on_the_gpu),
  };
  // MPCF_TEST_FILTER: run only the matching tests (e.g. under racecheck,
  // which is slow).
  if (const char* f = std::getenv("MPCF_TEST_FILTER")) cmocka_set_test_filter(f);
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
