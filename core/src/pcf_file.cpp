#include "mpcf/core/pcf_file.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "mpcf/core/errors.hpp"
#include "mpcf/core/shape.hpp"

namespace mpcf::pcf_file {

namespace {

constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

void fnv1a(std::uint64_t& h, const unsigned char* p, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= kFnvPrime;
  }
}

// Reverses the bytes of each `width`-byte element in place (big-endian hosts).
void swap_elements(unsigned char* p, std::size_t count, std::size_t width) {
  for (std::size_t k = 0; k < count; ++k) std::reverse(p + k * width, p + (k + 1) * width);
}

constexpr bool kLittle = std::endian::native == std::endian::little;

// Writes little-endian elements through the sink and the hash.
class Writer {
 public:
  explicit Writer(Sink& sink) : sink_(sink) {}

  void bytes(const void* data, std::size_t n) {
    fnv1a(hash_, static_cast<const unsigned char*>(data), n);
    sink_.write(data, n);
  }

  template <typename E>
  void elements(const E* data, std::size_t count) {
    if constexpr (kLittle) {
      bytes(data, count * sizeof(E));
    } else {
      unsigned char chunk[1 << 16];
      const std::size_t per = sizeof chunk / sizeof(E);
      for (std::size_t done = 0; done < count;) {
        const std::size_t k = std::min(per, count - done);
        std::memcpy(chunk, data + done, k * sizeof(E));
        swap_elements(chunk, k, sizeof(E));
        bytes(chunk, k * sizeof(E));
        done += k;
      }
    }
  }

  template <typename E>
  void scalar(E value) {
    elements(&value, 1);
  }

  std::uint64_t hash() const { return hash_; }

 private:
  Sink& sink_;
  std::uint64_t hash_ = kFnvBasis;
};

std::string count_text(std::uint64_t x, const char* unit) {
  return std::to_string(x) + " " + unit + (x == 1 ? "" : "s");
}

// Reads elements through the source and the hash, and says what a short
// read means: for an input of known size, that it changed while being read;
// for a stream, what `stream_end` (set per part of the file) says of the
// bytes it had.
class Reader {
 public:
  Reader(Source& source, std::uint64_t size, const std::string& what)
      : source_(source), size_(size), what_(what) {}

  bool size_known() const { return size_ != kUnknownSize; }

  // The message for a stream that ends after `got` bytes, from here on.
  void on_stream_end(std::function<std::string(std::uint64_t got)> message) {
    stream_end_ = std::move(message);
  }

  template <typename E>
  void elements(E* data, std::size_t count) {
    auto* p = reinterpret_cast<unsigned char*>(data);
    // In chunks, so that a huge count is read and hashed piecewise.
    const std::size_t total = count * sizeof(E);
    for (std::size_t done = 0; done < total;) {
      const std::size_t k = std::min<std::size_t>(std::size_t{1} << 24, total - done);
      fill(p + done, k);
      fnv1a(hash_, p + done, k);
      done += k;
    }
    if constexpr (!kLittle) swap_elements(p, count, sizeof(E));
  }

  // `count` elements into v. For an input of known size the count was
  // checked against it, so v is sized at once; for a stream the count is
  // only the header's word, so v grows as the bytes arrive (never beyond
  // `count`, at most doubling its capacity per step).
  template <typename E>
  void array(std::vector<E>& v, std::uint64_t count) {
    if (size_known()) {
      v.resize(count);
      elements(v.data(), v.size());
      return;
    }
    constexpr std::uint64_t kChunk = (std::uint64_t{1} << 24) / sizeof(E);
    v.clear();
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t k = std::min(kChunk, count - done);
      if (done + k > v.capacity()) {
        v.reserve(std::min(count, std::max<std::uint64_t>(done + k, 2 * std::uint64_t{v.capacity()})));
      }
      v.resize(done + k);
      elements(v.data() + done, k);
      done += k;
    }
  }

  template <typename E>
  E scalar() {
    E value;
    elements(&value, 1);
    return value;
  }

  std::uint64_t hash() const { return hash_; }

 private:
  void fill(unsigned char* p, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes) {
      const std::size_t got = source_.read(p + done, bytes - done);
      if (got == 0) break;
      done += got;
    }
    position_ += done;
    if (done == bytes) return;
    if (size_known()) {
      throw InvalidArgument(what_ + " ended early, after " + count_text(position_, "byte") +
                            " of " + std::to_string(size_) +
                            " (it was changed while being read)");
    }
    throw InvalidArgument(stream_end_(position_));
  }

  Source& source_;
  std::uint64_t size_;
  const std::string& what_;
  std::function<std::string(std::uint64_t)> stream_end_;
  std::uint64_t position_ = 0;
  std::uint64_t hash_ = kFnvBasis;
};

}  // namespace

std::uint64_t file_size(std::uint64_t ndim, std::uint64_t n, std::uint64_t total,
                        std::uint64_t element_bytes) {
  // Each term is bounded before it is added, so nothing wraps around.
  constexpr std::uint64_t kLimit = std::numeric_limits<std::uint64_t>::max() / 64;
  if (ndim > kLimit || n >= kLimit || total > kLimit / 2) {
    throw InvalidArgument("the header describes a collection too large to exist (n = " +
                          std::to_string(n) + ", total = " + std::to_string(total) + ")");
  }
  return kHeaderBytes + 8 * ndim + 8 * (n + 1) + 2 * element_bytes * total + 8;
}

template <typename T>
void write(Sink& sink, const std::vector<std::uint64_t>& shape, const PcfDataManager<T>& data,
           std::uint32_t functionType) {
  Writer w(sink);
  w.bytes(kMagic, sizeof kMagic);
  const bool linear = functionType == kPiecewiseLinear;
  w.scalar<std::uint32_t>(linear ? 2 : 1);
  w.scalar<std::uint32_t>(sizeof(T) == 4 ? kFloat32 : kFloat64);
  if (linear) {
    w.scalar<std::uint32_t>(static_cast<std::uint32_t>(shape.size()));
    w.scalar<std::uint32_t>(kPiecewiseLinear);
  } else {
    w.scalar<std::uint64_t>(shape.size());
  }
  w.scalar<std::uint64_t>(data.count());
  w.scalar<std::uint64_t>(data.total_elements());
  w.elements(shape.data(), shape.size());
  // Offsets counted from the collection's first breakpoint (a slice of a
  // larger collection starts at 0 too), a chunk at a time.
  std::vector<std::uint64_t> offsets(std::min<std::size_t>(data.count() + 1, std::size_t{1} << 16));
  for (std::size_t done = 0; done < data.count() + 1;) {
    const std::size_t k = std::min(offsets.size(), data.count() + 1 - done);
    for (std::size_t j = 0; j < k; ++j) offsets[j] = data.offset(done + j);
    w.elements(offsets.data(), k);
    done += k;
  }
  // Times, then values, from the interleaved points, a chunk at a time.
  const auto points = data.elements();
  std::vector<T> chunk(std::min<std::size_t>(points.size(), std::size_t{1} << 16));
  for (const bool times : {true, false}) {
    for (std::size_t done = 0; done < points.size();) {
      const std::size_t k = std::min(chunk.size(), points.size() - done);
      for (std::size_t j = 0; j < k; ++j) chunk[j] = times ? points[done + j].t : points[done + j].v;
      w.elements(chunk.data(), k);
      done += k;
    }
  }
  const std::uint64_t hash = w.hash();
  w.scalar<std::uint64_t>(hash);
}

template void write<float>(Sink&, const std::vector<std::uint64_t>&, const PcfDataManager<float>&,
                           std::uint32_t);
template void write<double>(Sink&, const std::vector<std::uint64_t>&,
                            const PcfDataManager<double>&, std::uint32_t);

Loaded read(Source& source, std::uint64_t size, const std::string& what) {
  static const std::string kMagicText = "89 4D 50 43 46 0D 0A 1A";
  auto too_short_for_magic = [&](std::uint64_t got) {
    return what + " is not an mpcf PCF file: it has only " + count_text(got, "byte") +
           " (a PCF file starts with the 8-byte magic " + kMagicText + ")";
  };
  auto too_short_for_header = [&](std::uint64_t got) {
    return what + " is truncated: it has " + count_text(got, "byte") + ", fewer than the " +
           std::to_string(kHeaderBytes) + "-byte header";
  };
  Reader r(source, size, what);
  if (r.size_known() && size < sizeof kMagic) throw InvalidArgument(too_short_for_magic(size));
  r.on_stream_end(too_short_for_magic);
  unsigned char magic[sizeof kMagic];
  r.elements(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    throw InvalidArgument(what + " is not an mpcf PCF file: it does not start with the magic " +
                          kMagicText);
  }
  if (r.size_known() && size < kHeaderBytes) throw InvalidArgument(too_short_for_header(size));
  r.on_stream_end(too_short_for_header);
  const auto version = r.scalar<std::uint32_t>();
  if (version != 1 && version != 2) {
    throw InvalidArgument(what + " has format version " + std::to_string(version) +
                          "; this libmpcf reads versions 1 and 2" +
                          (version > kVersion ? " (the file was written by a newer libmpcf)" : ""));
  }
  Loaded out;
  out.dtype = r.scalar<std::uint32_t>();
  if (out.dtype != kFloat32 && out.dtype != kFloat64) {
    throw InvalidArgument(what + " is corrupt: its dtype code is " + std::to_string(out.dtype) +
                          " (1 = float32, 2 = float64)");
  }
  // Version 1: a uint64 ndim; version 2: a uint32 ndim and the function type.
  std::uint64_t ndim = r.scalar<std::uint64_t>();
  if (version == 2) {
    out.functionType = static_cast<std::uint32_t>(ndim >> 32);
    ndim &= 0xffffffffu;
    if (out.functionType != kPiecewiseConstant && out.functionType != kPiecewiseLinear) {
      throw InvalidArgument(what + " is corrupt: its function type code is " +
                            std::to_string(out.functionType) +
                            " (1 = piecewise constant, 2 = piecewise linear)");
    }
  }
  const auto n = r.scalar<std::uint64_t>();
  const auto total = r.scalar<std::uint64_t>();
  if (ndim < 1 || ndim > kMaxNdim) {
    throw InvalidArgument(what + " is corrupt: its ndim is " + std::to_string(ndim) +
                          " (1 .. 32 allowed)");
  }
  const std::uint64_t element = out.dtype == kFloat32 ? 4 : 8;
  std::uint64_t expected = 0;
  try {
    expected = file_size(ndim, n, total, element);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(what + " is corrupt: " + e.what());
  }
  const std::string described = "its header describes " + count_text(n, "function") + " with " +
                                count_text(total, "breakpoint") + " (" +
                                std::to_string(expected) + " bytes)";
  if (r.size_known() && size != expected) {
    throw InvalidArgument(what + (size < expected ? " is truncated" : " is corrupt") + ": " +
                          described + " but it has " + count_text(size, "byte"));
  }
  r.on_stream_end([&](std::uint64_t got) {
    return what + " is truncated: it ended early, after " + count_text(got, "byte") + ", but " +
           described;
  });
  out.shape.resize(ndim);
  r.elements(out.shape.data(), out.shape.size());
  // Counted as mpcf_pcfs_reshape counts (found by fuzzing: the reader
  // refused the shape (2^63, 2, 0) of an empty collection that the writer
  // had written).
  const ShapeCount c = shape_count(out.shape.data(), out.shape.size());
  if (c.overflow || c.count != n) {
    throw InvalidArgument(what + " is corrupt: its shape does not hold the " +
                          count_text(n, "function") + " its header announces");
  }
  std::vector<std::uint64_t> offsets;
  r.array(offsets, n + 1);
  std::vector<float> t32, v32;
  std::vector<double> t64, v64;
  if (out.dtype == kFloat32) {
    r.array(t32, total);
    r.array(v32, total);
  } else {
    r.array(t64, total);
    r.array(v64, total);
  }
  const std::uint64_t computed = r.hash();
  const auto stored = r.scalar<std::uint64_t>();
  if (stored != computed) {
    throw InvalidArgument(what + " is corrupt: its checksum does not match its content");
  }
  if (offsets[n] != total) {
    throw InvalidArgument(what + " is corrupt: its last offset is " + std::to_string(offsets[n]) +
                          " but its header announces " + count_text(total, "breakpoint"));
  }
  try {
    if (out.dtype == kFloat32) {
      out.f32 = std::make_shared<const PcfCollection<float>>(n, offsets.data(), t32.data(),
                                                             v32.data(), 1);
    } else {
      out.f64 = std::make_shared<const PcfCollection<double>>(n, offsets.data(), t64.data(),
                                                              v64.data(), 1);
    }
  } catch (const Error& e) {
    throw Error(e.kind(), what + ": " + e.what());
  }
  return out;
}

}  // namespace mpcf::pcf_file
