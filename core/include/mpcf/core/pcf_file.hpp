// The mpcf file format (versions 1 and 2): a collection of PCFs or PLFs
// with its tensor shape, in one binary file. All integers and floats are
// little-endian.
//
//   offset        size              field
//   0             8                 magic 89 4D 50 43 46 0D 0A 1A ("\x89MPCF\r\n\x1a")
//   8             4                 uint32 format version (1 or 2)
//   12            4                 uint32 dtype: 1 = float32, 2 = float64
//   16            8                 version 1: uint64 ndim, 1..32 (the
//                                   functions are piecewise constant);
//                                   version 2: uint32 ndim, 1..32, then
//                                   uint32 function type: 1 = piecewise
//                                   constant, 2 = piecewise linear
//
// Collections of PCFs are written as version 1, so that every libmpcf reads
// them (a version-1 file is a version-2 file of type 1 read as one uint64);
// collections of PLFs as version 2. The rest of the layout is the same:
//
//   24            8                 uint64 n, the number of functions
//   32            8                 uint64 total, the number of breakpoints
//   40            8 * ndim          uint64 shape (row-major; product = n)
//   ...           8 * (n + 1)       uint64 CSR offsets (offsets[0] = 0,
//                                   offsets[n] = total; function i owns
//                                   breakpoints offsets[i] .. offsets[i+1]-1)
//   ...           e * total         times (e = 4 or 8 bytes, per dtype)
//   ...           e * total         values
//   ...           8                 uint64 FNV-1a 64-bit hash of every byte
//                                   before it (offset basis 0xcbf29ce484222325,
//                                   prime 0x100000001b3)
//
// The file is exactly that long. Everything before the times is a multiple
// of 8 bytes, so the arrays can be memory-mapped (numpy.memmap) in place.
// Readers check the magic, version, dtype, ndim, the shape against n, the
// length against the header, the hash, and then the data exactly as
// mpcf_pcfs_create does (offsets, finite strictly increasing times, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf::pcf_file {

inline constexpr unsigned char kMagic[8] = {0x89, 'M', 'P', 'C', 'F', '\r', '\n', 0x1a};
inline constexpr std::uint32_t kVersion = 2;  // the newest version read
inline constexpr std::uint32_t kPiecewiseConstant = 1;
inline constexpr std::uint32_t kPiecewiseLinear = 2;
inline constexpr std::uint32_t kFloat32 = 1;
inline constexpr std::uint32_t kFloat64 = 2;
inline constexpr std::uint64_t kHeaderBytes = 40;
inline constexpr std::uint64_t kMaxNdim = 32;

// Bytes of a file with this content; throws InvalidArgument on overflow.
std::uint64_t file_size(std::uint64_t ndim, std::uint64_t n, std::uint64_t total,
                        std::uint64_t element_bytes);

// Where the bytes of a file go / come from.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void* data, std::size_t bytes) = 0;  // throws on failure
};
class Source {
 public:
  virtual ~Source() = default;
  // Reads up to `bytes` bytes into `data` and returns how many it read:
  // fewer only at the end of the input. Throws InvalidArgument when the
  // input cannot be read.
  virtual std::size_t read(void* data, std::size_t bytes) = 0;
};

// The size to pass to read() for a pipe or device: known only from the
// header.
inline constexpr std::uint64_t kUnknownSize = std::numeric_limits<std::uint64_t>::max();

// functionType: kPiecewiseConstant (written as version 1) or
// kPiecewiseLinear (version 2).
template <typename T>
void write(Sink& sink, const std::vector<std::uint64_t>& shape, const PcfDataManager<T>& data,
           std::uint32_t functionType = kPiecewiseConstant);

struct Loaded {
  std::uint32_t dtype = 0;  // kFloat32 or kFloat64
  std::uint32_t functionType = kPiecewiseConstant;
  std::vector<std::uint64_t> shape;
  std::shared_ptr<const PcfCollection<float>> f32;
  std::shared_ptr<const PcfCollection<double>> f64;
};

// Reads a whole file of `size` bytes. `what` names it in messages ("file
// 'x.mpcf'", "the buffer"). Throws InvalidArgument for anything that is not
// a well-formed file, and InvalidPcf (message starting with `what`) for
// well-formed files whose PCFs break the rules.
//
// With size kUnknownSize (a pipe or device) it reads the header first,
// checks it, and then reads exactly the length the header declares and
// nothing beyond (so the bytes that follow, if any, are neither read nor
// checked); an input that ends sooner is "truncated: it ended early". The
// arrays then grow as their bytes arrive, so a header that declares a huge
// collection and then ends allocates only what arrived.
Loaded read(Source& source, std::uint64_t size, const std::string& what);

}  // namespace mpcf::pcf_file
