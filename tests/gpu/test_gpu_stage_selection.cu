// Which GPU block stage a consumer gets (make_stage, gpu_block_stage.cuh):
// the matrix writer and the block stream the IdentityStage (the stream's
// with complete pieces), kNN the KnnStage while k and the plane fit it and
// the IdentityStage beyond, the kernel mat-vec the MatvecStage; a consumer
// whose kind() names another kind's class, or a kind without a stage, is a
// logic_error. Making a stage touches no device, so this runs in every CUDA
// build, GPU or not.
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "mpcf/core/block_stream.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/gpu_block_stages.cuh"

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

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matrix_writer_and_stream_get_the_identity_stage),
      cmocka_unit_test(test_knn_gets_the_knn_stage_while_k_fits),
      cmocka_unit_test(test_matvec_gets_the_matvec_stage),
      cmocka_unit_test(test_wrong_class_or_unknown_kind_is_a_logic_error),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
