// Which GPU block stage a consumer gets (make_stage, gpu_block_stage.cuh):
// the matrix writer and the block stream the IdentityStage (the stream's
// with complete pieces), kNN the KnnStage while k and the plane fit it and
// the IdentityStage beyond, the kernel mat-vec the MatvecStage; a consumer
// whose kind() names another kind's class, or a kind without a stage, is a
// logic_error. Making a stage touches no device, so this runs in every CUDA
// build, GPU or not; only the registered result (DirectMatrixStage, chosen
// for a matrix writer whose result lies in memory registered with
// register_host) needs a device, and skips without one. The direct stage's
// runs (direct_run, host code too) are checked here against the matrix
// writer's own stores for every layout, block by block.
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include <memory>
#include <stdexcept>
#include <vector>

#include "mpcf/core/block_stream.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/gpu_block_stages.cuh"
#include "mpcf/cuda/registered_host.hpp"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
}

using namespace mpcf;
using namespace mpcf::cuda;

namespace {

PairPlane plane_of(std::size_t n, TriangleSkipMode skip) {
  PairPlane p;
  p.nRows = p.nCols = n;
  p.skip = skip;
  return p;
}

template <typename Stage, typename T>
Stage* as(const std::unique_ptr<GpuBlockStage<T>>& stage) {
  return dynamic_cast<Stage*>(stage.get());
}

void test_matrix_writer_and_stream_get_the_identity_stage(void**) {
  const PairPlane plane = plane_of(10, TriangleSkipMode::LowerTriangleSkipDiag);
  std::vector<double> out(45);
  auto writer = MatrixWriter<double>::symmetric(out.data(), 10, SymmetricLayout::Condensed, false);
  auto w = make_stage<double>(writer, plane);
  assert_non_null(as<IdentityStage<double>>(w));
  assert_false(as<IdentityStage<double>>(w)->complete());
  assert_true(w->order() == BlockOrder::ColumnMajor);  // the condensed writer's order

  StreamConsumer<float> stream([](const BlockInfo&, const float*) { return 0; });
  auto s = make_stage<float>(stream, plane);
  assert_non_null(as<IdentityStage<float>>(s));
  assert_true(as<IdentityStage<float>>(s)->complete());
  assert_true(s->order() == BlockOrder::RowMajor);
}

void test_knn_gets_the_knn_stage_while_k_fits(void**) {
  const PairPlane plane = plane_of(100, TriangleSkipMode::LowerTriangleSkipDiag);
  std::vector<double> d(100 * 40);
  std::vector<std::int64_t> idx(100 * 40);
  KnnConsumer<double> small(d.data(), idx.data(), 100, KnnStage<double>::kMaxDeviceK);
  auto a = make_stage<double>(small, plane);
  assert_non_null(as<KnnStage<double>>(a));
  assert_false(a->needs_zeroed_block());
  KnnConsumer<double> large(d.data(), idx.data(), 100, KnnStage<double>::kMaxDeviceK + 1);
  auto b = make_stage<double>(large, plane);
  assert_non_null(as<IdentityStage<double>>(b));
  assert_false(as<IdentityStage<double>>(b)->complete());
}

void test_matvec_gets_the_matvec_stage(void**) {
  const PairPlane plane = plane_of(6, TriangleSkipMode::LowerTriangle);
  std::vector<float> V(6 * 2), out(6 * 2);
  MatvecConsumer<float> matvec(KernelSpec{}, V.data(), 2, out.data(), 6, 6, {}, {});
  auto s = make_stage<float>(matvec, plane);
  assert_non_null(as<MatvecStage<float>>(s));
  assert_true(s->order() == BlockOrder::RowMajor);
}

// A consumer that says it is of kind `kind` whatever its class.
template <typename T>
struct KindOnly final : BlockConsumer<T> {
  ConsumerKind k;
  explicit KindOnly(ConsumerKind kind) : k(kind) {}
  ConsumerKind kind() const noexcept override { return k; }
  void prepare(const PairPlane&) override {}
  void consume(const BlockPiece<T>&) override {}
  void finish() override {}
  void poison() noexcept override {}
};

void test_wrong_class_or_unknown_kind_is_a_logic_error(void**) {
  const PairPlane plane = plane_of(4, TriangleSkipMode::None);
  for (ConsumerKind kind : {ConsumerKind::Knn, ConsumerKind::Matvec, ConsumerKind::Stream}) {
    KindOnly<double> liar(kind);
    try {
      (void)make_stage<double>(liar, plane);
      fail_msg("a consumer of kind %d that is not of its class got a stage", static_cast<int>(kind));
    } catch (const std::logic_error& e) {
      assert_non_null(std::strstr(e.what(), "not of that kind's consumer class"));
    }
  }
  KindOnly<double> matrixLike(ConsumerKind::Matrix);  // any consumer may take whole blocks
  assert_non_null(as<IdentityStage<double>>(make_stage<double>(matrixLike, plane)));
  KindOnly<double> unknown(static_cast<ConsumerKind>(kConsumerKindCount));
  try {
    (void)make_stage<double>(unknown, plane);
    fail_msg("a consumer of an unknown kind got a stage");
  } catch (const std::logic_error& e) {
    assert_non_null(std::strstr(e.what(), "no GPU stage for consumer kind"));
  }
}

// Every block of an n x n plane (symmetric layouts) or an n x nCols one
// (dense), blocks of side 5 (edge blocks smaller): the values the writer's
// consume() stores and those the direct stage's runs copy must be the same
// output, entry for entry (both outputs start from the writer's prepare()).
template <typename T>
void check_runs_like_the_writer(bool symmetric, SymmetricLayout layout, bool withDiagonal,
                                std::size_t n, std::size_t nCols) {
  const TriangleSkipMode skip = !symmetric      ? TriangleSkipMode::None
                                : withDiagonal ? TriangleSkipMode::LowerTriangle
                                               : TriangleSkipMode::LowerTriangleSkipDiag;
  PairPlane plane;
  plane.nRows = n;
  plane.nCols = symmetric ? n : nCols;
  plane.skip = skip;
  auto make = [&](T* out) {
    return symmetric ? MatrixWriter<T>::symmetric(out, n, layout, withDiagonal)
                     : MatrixWriter<T>::dense(out, n, nCols);
  };
  std::vector<T> probe(1);
  const std::size_t size = make(probe.data()).size();
  std::vector<T> viaWriter(size, T(-1)), viaRuns(size, T(-1));
  auto writer = make(viaWriter.data());
  auto other = make(viaRuns.data());
  writer.prepare(plane);
  other.prepare(plane);
  const auto t = other.target();
  DirectTarget<T> target{viaRuns.data(), t.nRows, t.nCols,
                         !symmetric ? DirectLayout::Dense
                         : layout == SymmetricLayout::Condensed ? DirectLayout::Condensed
                         : layout == SymmetricLayout::PackedLower ? DirectLayout::PackedLower
                                                                  : DirectLayout::DenseSymmetric,
                         withDiagonal};
  BlockScheduler::Config c;
  c.nRows = plane.nRows;
  c.nCols = plane.nCols;
  c.mode = symmetric ? BlockMode::LowerTriangle : BlockMode::Full;
  c.maxOutputElements = 25;
  const BlockScheduler sched(c);
  const BlockOrder order = writer.preferred_order();
  for (const BlockInfo& b : sched.blocks()) {
    const std::size_t nr = b.n_rows(), nc = b.n_cols();
    std::vector<T> block(nr * nc);
    for (std::size_t r = 0; r < nr; ++r) {
      for (std::size_t col = 0; col < nc; ++col) {
        const std::size_t i = b.rows.first + r, j = b.cols.first + col;
        // Distinct values for kept pairs, 0 where the kernels write nothing.
        const T v = pair_kept(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j), skip)
                        ? T(1 + i * 1000 + j)
                        : T(0);
        block[order == BlockOrder::RowMajor ? r * nc + col : col * nr + r] = v;
      }
    }
    BlockPiece<T> piece{b, block.data(), order};
    writer.consume(piece);
    const std::uint64_t lines = direct_lines(target, nr, nc);
    for (std::uint64_t line = 0; line < lines; ++line) {
      const DirectRun run = direct_run(target, b.rows.first, nr, b.cols.first, nc, line);
      for (std::uint64_t k = 0; k < run.count; ++k) {
        viaRuns[run.dst + k] = block[run.src + k * run.srcStride];
      }
    }
  }
  for (std::size_t k = 0; k < size; ++k) {
    if (viaWriter[k] != viaRuns[k]) {
      fail_msg("layout %d symmetric %d diagonal %d: entry %zu is %g by the writer, %g by the runs",
               static_cast<int>(layout), symmetric, withDiagonal, k, double(viaWriter[k]),
               double(viaRuns[k]));
    }
    if (viaWriter[k] == T(-1)) fail_msg("entry %zu was written by neither", k);
  }
}

void test_direct_runs_store_what_the_writer_stores(void**) {
  for (std::size_t n : {1, 4, 5, 13, 23}) {
    check_runs_like_the_writer<double>(false, SymmetricLayout::Dense, false, n, 17);
    check_runs_like_the_writer<float>(false, SymmetricLayout::Dense, false, n, 3);
    check_runs_like_the_writer<double>(true, SymmetricLayout::Condensed, false, n, 0);
    check_runs_like_the_writer<float>(true, SymmetricLayout::Dense, false, n, 0);
    check_runs_like_the_writer<double>(true, SymmetricLayout::Dense, true, n, 0);
    check_runs_like_the_writer<float>(true, SymmetricLayout::PackedLower, false, n, 0);
    check_runs_like_the_writer<double>(true, SymmetricLayout::PackedLower, true, n, 0);
  }
}

bool have_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

// A matrix writer whose whole result lies in one registered range gets the
// direct stage, which holds the range while it lives; one whose result
// reaches past the range gets the IdentityStage.
void test_registered_result_gets_the_direct_stage(void**) {
  if (!have_device()) {
    skip();
    return;
  }
  const PairPlane plane = plane_of(10, TriangleSkipMode::LowerTriangleSkipDiag);
  std::vector<double> out(100);
  register_host(out.data(), 60 * sizeof(double));
  {
    auto inside = MatrixWriter<double>::symmetric(out.data() + 10, 10, SymmetricLayout::Condensed, false);
    auto w = make_stage<double>(inside, plane);
    assert_non_null(as<DirectMatrixStage<double>>(w));
    assert_false(w->needs_zeroed_block());
    assert_true(w->order() == BlockOrder::ColumnMajor);
    try {
      unregister_host(out.data());
      fail_msg("a range in use was unregistered");
    } catch (const InvalidArgument& e) {
      assert_non_null(std::strstr(e.what(), "in use by 1 running computation"));
    }
    // 45 values from out + 16 end past the 60 registered ones.
    auto past = MatrixWriter<double>::symmetric(out.data() + 16, 10, SymmetricLayout::Condensed, false);
    assert_non_null(as<IdentityStage<double>>(make_stage<double>(past, plane)));
  }
  unregister_host(out.data());  // the stage is gone
  auto after = MatrixWriter<double>::symmetric(out.data(), 10, SymmetricLayout::Condensed, false);
  assert_non_null(as<IdentityStage<double>>(make_stage<double>(after, plane)));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matrix_writer_and_stream_get_the_identity_stage),
      cmocka_unit_test(test_knn_gets_the_knn_stage_while_k_fits),
      cmocka_unit_test(test_matvec_gets_the_matvec_stage),
      cmocka_unit_test(test_wrong_class_or_unknown_kind_is_a_logic_error),
      cmocka_unit_test(test_direct_runs_store_what_the_writer_stores),
      cmocka_unit_test(test_registered_result_gets_the_direct_stage),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
