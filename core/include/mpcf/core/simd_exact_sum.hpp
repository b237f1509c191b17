// The kernel mat-vec's exact sums (exact_sum.hpp) of a block's terms, in
// SIMD lanes. Plain C++ interface; the kernels (Google Highway, one copy per
// instruction set, chosen by the caller as for the walk) live in
// simd_exact_sum.cpp.
//
// A block of the pair plane gives each of its rows (and, on the symmetric
// plane, each of its columns) r sums of products K_ij * w: lanes run along a
// row of the block (the row side: one sum per (row, c), the lanes' partial
// sums added at the end) or across the columns of a band (the column side:
// one sum per lane). Each term is rounded onto its sum's three grids exactly
// as exact_sum_add rounds it, so the level sums, whatever lanes or order add
// them, are the bits of adding the terms one by one: the instruction set
// changes nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mpcf/core/exact_sum.hpp"
#include "mpcf/core/simd_walk.hpp"

namespace mpcf {

// The grids of the column side's sums, one array per level: M1, M2, M3 and
// the limit of sum (cc, c) at m1[c * ld + cc] and so on.
struct ExactSumLevelColumns {
  const double* m1 = nullptr;
  const double* m2 = nullptr;
  const double* m3 = nullptr;
  const double* limit = nullptr;
  std::size_t ld = 0;
};

// Whole vectors are read: every row of k, w and of the level columns may be
// read up to kExactSumReadSlack elements past the last one used (the
// lanes past it are left out of the sums).
constexpr std::size_t kExactSumReadSlack = 8;

// The terms of one block (nr rows, nc columns, r sums per row or column),
// K of pair (rr, cc) at k[rr * ldk + cc]:
//   row side: for rr < nr, c < r, the terms k(rr, cc) * w[c * ldw + cc]
//     for cc < rowCount[rr], added into rowSums[(rr * r + c) * 3 + level]
//     and rowFlags[rr * r + c] on the grids rowLevels[rr * rowLevelsStride + c];
//   column side (colCount not null): for cc < nc, c < r, the terms
//     k(rr, cc) * u[rr * ldu + c] for every rr with cc < colCount[rr], added
//     into colSums[(cc * r + c) * 3 + level] and colFlags[cc * r + c] on the
//     grids colLevels (sum (cc, c)), or, when colLevels.m1 is null, on
//     sharedLevels[c].
// Terms that are not finite or not below their limit set their flags, as
// exact_sum_add does, and add nothing.
struct ExactSumBlock {
  const double* k = nullptr;
  std::size_t ldk = 0;
  std::size_t nr = 0, nc = 0, r = 0;

  const std::uint32_t* rowCount = nullptr;
  const double* w = nullptr;
  std::size_t ldw = 0;
  const ExactSumLevels* rowLevels = nullptr;
  std::size_t rowLevelsStride = 0;
  double* rowSums = nullptr;
  std::uint32_t* rowFlags = nullptr;

  const std::uint32_t* colCount = nullptr;
  const double* u = nullptr;
  std::size_t ldu = 0;
  ExactSumLevelColumns colLevels;
  const ExactSumLevels* sharedLevels = nullptr;
  double* colSums = nullptr;
  std::uint32_t* colFlags = nullptr;
};

// Adds the block's terms with the instruction set s (simd_walk.hpp; the
// caller's supported set): its kernels where they are compiled (x86-64's
// SSE4, AVX2, AVX-512), else exact_sum_add term by term (Scalar, and NEON:
// on aarch64 the walks have NEON kernels, the exact sums none); the same
// bits either way.
void exact_sum_block(CpuSimd s, const ExactSumBlock& b);

}  // namespace mpcf
