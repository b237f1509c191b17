// The block-consumer seam: what every computation does with its blocks.
//
// The engine (the CPU executor or the GPU pipeline) cuts the pair plane
// into blocks (BlockScheduler), computes each block's values and hands them,
// as pieces, to one BlockConsumer:
//
//   prepare(plane)   once, before any piece
//   consume(piece)   a finished piece: a rectangle of the plane (a whole
//                    block, or some of its rows or columns) and its values;
//                    called concurrently for disjoint pieces, each pair of
//                    the plane in exactly one piece
//   pair_bounds(b)   optional, before a block is computed: the values above
//                    which the consumer needs no exact value (a kNN's k-th
//                    entries), so a walk may stop there (MonotoneFold)
//   finish()         once, after every piece, when everything succeeded
//   poison()         instead of finish() after a failure or cancellation:
//                    no partial result may remain in the caller's buffers
//
// The consumers: MatrixWriter (result_writers.hpp: the matrix in any layout),
// KnnConsumer (knn.hpp), MatvecConsumer (kernel_matvec.hpp) and
// StreamConsumer (block_stream.hpp: a caller's callback). The GPU engine may
// reduce a block on the device first and hand the consumer the reduced form
// (KnnConsumer::merge_row, MatvecConsumer::merge_partials); kind() says which
// consumer it is for that purpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"

namespace mpcf {

// How a block's values lie in memory: (r, c) at values[r * n_cols + c]
// (RowMajor) or values[c * n_rows + r] (ColumnMajor).
enum class BlockOrder { RowMajor, ColumnMajor };

// The pairs a computation covers: rows of X against columns of Y (or of X
// itself), restricted by `skip` (pair_kept).
struct PairPlane {
  std::size_t nRows = 0;
  std::size_t nCols = 0;
  TriangleSkipMode skip = TriangleSkipMode::None;
  // Rows and columns are the same functions and only one triangle is
  // computed: pair (i, j) also stands for (j, i).
  bool symmetric() const { return skip != TriangleSkipMode::None; }
};

// A finished rectangle of the plane. Entries that pair_kept rejects hold 0,
// unless `complete`: then every entry holds its pair's value (on the
// symmetric plane the mirrored value above the diagonal, and 0 on the
// diagonal of a distance matrix).
template <typename T>
struct BlockPiece {
  BlockInfo block;  // rows and columns, global indices
  const T* values;
  BlockOrder order;
  bool complete = false;
  T at(std::size_t r, std::size_t c) const {
    return order == BlockOrder::RowMajor ? values[r * block.n_cols() + c]
                                         : values[c * block.n_rows() + r];
  }
};

// Which consumer it is, for an engine that treats some specially: the GPU
// engine finds a consumer's device stage by its kind (cuda/
// gpu_block_stage.cuh), without core knowing anything of CUDA.
enum class ConsumerKind { Matrix, Knn, Matvec, Stream };
// The number of kinds (the last one + 1; a new kind goes last).
inline constexpr int kConsumerKindCount = static_cast<int>(ConsumerKind::Stream) + 1;

template <typename T>
class BlockConsumer {
 public:
  virtual ~BlockConsumer() = default;
  virtual ConsumerKind kind() const noexcept = 0;
  // The order in which pieces are best handed to consume().
  virtual BlockOrder preferred_order() const noexcept { return BlockOrder::RowMajor; }
  virtual void prepare(const PairPlane& plane) = 0;
  virtual void consume(const BlockPiece<T>& piece) = 0;
  // Bounds for block b: a pair (r, c) of the block whose value exceeds
  // rows[r] and cols[c] (cols left empty: rows[r] alone; a NaN bound: none)
  // may be handed to consume() as any value above them, at most its own.
  // false (the default): every value exact. Called concurrently with
  // consume() for other blocks.
  virtual bool pair_bounds(const BlockInfo& b, std::vector<T>& rows, std::vector<T>& cols) {
    (void)b;
    (void)rows;
    (void)cols;
    return false;
  }
  virtual void finish() = 0;
  virtual void poison() noexcept = 0;
};

}  // namespace mpcf
