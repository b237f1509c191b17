// How large a collection a call may build when its size comes from a count
// argument rather than from data the caller holds: the landscapes of k
// levels (mpcf_plfs_landscapes), the sum of an empty collection along an
// axis beside huge other dimensions (mpcf_pcfs_reduce). One rule for both,
// applied before anything is allocated, so that a huge request is refused
// by name instead of being attempted until memory runs out:
//   * every function takes at least one breakpoint (t, v) and one 64-bit
//     offset (the zero function is the single breakpoint (0, 0));
//   * a result whose least size in bytes passes 64 bits exists on no
//     machine: an invalid argument (mpcf.h, MPCF_ERROR_INVALID_ARGUMENT:
//     "a result too large for 64-bit sizes");
//   * one whose least size passes this machine's physical memory is out of
//     memory (MPCF_ERROR_OUT_OF_MEMORY).
// The callers name their own argument and its largest value in the message.
#pragma once

#include <cstdint>
#include <string>

namespace mpcf {

// The least bytes a function of a collection of dtype T takes.
template <typename T>
constexpr std::uint64_t kLeastBytesPerFunction = 2 * sizeof(T) + sizeof(std::uint64_t);

struct ResultLimits {
  // The most functions whose least size fits 64 bits.
  std::uint64_t in_64_bits = 0;
  // The most functions whose least size fits this machine's physical memory
  // (in_64_bits when the memory is unknown).
  std::uint64_t in_memory = 0;
  // The physical memory in bytes; 0 when unknown.
  std::uint64_t memory_bytes = 0;
};

// The limits for functions of bytes_per_function (> 0) bytes each.
ResultLimits result_limits(std::uint64_t bytes_per_function);

// A size for messages: "24 bytes" below a gigabyte, else "26388.3 GB".
std::string bytes_text(std::uint64_t bytes);

}  // namespace mpcf
