// C API entry points for persistence barcodes, pointwise operations
// (reductions, linear combinations, evaluation), the read-out of a
// collection's breakpoints and PCF files. Like api.cpp, every entry point
// runs through api_entry() and checks every argument before writing anything.

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "api_support.hpp"
#include "handles.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/pcf_file.hpp"
#include "mpcf/core/pcf_file_io.hpp"
#include "mpcf/core/plf_pointwise.hpp"
#include "mpcf/core/plf_tda.hpp"
#include "mpcf/core/pointwise.hpp"
#include "mpcf/core/result_size.hpp"
#include "mpcf/core/shape.hpp"
#include "mpcf/core/tda.hpp"
#include "mpcf/mpcf.h"

using mpcf::InvalidArgument;

namespace {

using namespace mpcf::capi;

// A new handle around a collection built here, with the given shape.
template <typename T>
mpcf_pcfs* new_handle(std::shared_ptr<const mpcf::PcfCollection<T>> c,
                      std::vector<std::uint64_t> shape,
                      mpcf_function_type type = MPCF_PIECEWISE_CONSTANT) {
  auto handle = std::make_unique<mpcf_pcfs>();
  handle->dtype = sizeof(T) == 4 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  handle->type = type;
  handle->shape = std::move(shape);
  if constexpr (sizeof(T) == 4) {
    handle->f32 = std::move(c);
  } else {
    handle->f64 = std::move(c);
  }
  return handle.release();
}

mpcf::BarcodeSummary barcode_summary(const mpcf_barcode_summary& kind) {
  switch (raw_enum(kind)) {
    case MPCF_BETTI_CURVE: return mpcf::BarcodeSummary::BettiCurve;
    case MPCF_STABLE_RANK: return mpcf::BarcodeSummary::StableRank;
    case MPCF_ACCUMULATED_PERSISTENCE: return mpcf::BarcodeSummary::AccumulatedPersistence;
  }
  throw InvalidArgument("kind " + std::to_string(raw_enum(kind)) +
                        " is not an mpcf_barcode_summary value (MPCF_BETTI_CURVE, "
                        "MPCF_STABLE_RANK or MPCF_ACCUMULATED_PERSISTENCE)");
}

// The argument checks of a barcode conversion to PLFs and its handle of the
// given shape; make(T{}) builds the collection in the dtype T.
template <typename Make>
void plfs_of_barcodes(const mpcf_dtype& dtype, std::uint64_t n, const std::uint64_t* offsets,
                      const double* bars, std::vector<std::uint64_t> shape, mpcf_pcfs** out,
                      Make make) {
  require(out, "out");
  check_dtype(dtype);
  require(offsets, "offsets");
  if (offsets[n] > 0) require(bars, "bars");
  if (raw_enum(dtype) == MPCF_FLOAT32) {
    *out = new_handle<float>(make(float{}), std::move(shape), MPCF_PIECEWISE_LINEAR);
  } else {
    *out = new_handle<double>(make(double{}), std::move(shape), MPCF_PIECEWISE_LINEAR);
  }
}

mpcf::Reduction reduction(const mpcf_reduction& op) {
  switch (raw_enum(op)) {
    case MPCF_REDUCE_SUM: return mpcf::Reduction::Sum;
    case MPCF_REDUCE_MEAN: return mpcf::Reduction::Mean;
  }
  throw InvalidArgument("op " + std::to_string(raw_enum(op)) +
                        " is not an mpcf_reduction value (MPCF_REDUCE_SUM or MPCF_REDUCE_MEAN)");
}

template <typename T>
mpcf_pcfs* reduce_typed(const mpcf_pcfs* X, mpcf::Reduction op, std::size_t axis) {
  const auto& data = X->get<T>()->data();
  const std::vector<std::uint64_t>& shape = X->shape;
  // The reduction of the collection's kind, and a handle of that kind.
  auto reduce = [&](std::uint64_t groups, std::uint64_t len, std::uint64_t inner) {
    return X->linear() ? mpcf::plf_reduce(data, op, groups, len, inner)
                       : mpcf::reduce(data, op, groups, len, inner);
  };
  if (axis == MPCF_ALL_AXES) {
    return new_handle<T>(reduce(1, X->count(), 1), {1}, X->type);
  }
  // The result's count is the product of the other dimensions. With a 0
  // along the axis (an empty collection) they can be anything: check the
  // product for overflow and the result's size by the rule of
  // result_size.hpp before anything is allocated (sum of none: one zero
  // function per result element; a mean of none is an error of its own,
  // raised by mpcf::reduce).
  std::vector<std::uint64_t> rest(shape.begin(), shape.end());
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(axis));
  const std::string what = "reducing shape " + mpcf::shape_text(shape.data(), shape.size()) +
                           " along axis " + std::to_string(axis);
  const mpcf::ShapeCount result = mpcf::shape_count(rest.data(), rest.size());
  if (result.overflow) throw InvalidArgument(what + " gives a result of more than 2^64 functions");
  const std::uint64_t count = result.count;
  // Functions per step along the axis (the dimensions after it); any value
  // when there are no groups.
  const std::uint64_t inner =
      count == 0 ? 0 : mpcf::shape_count(shape.data() + axis + 1, shape.size() - axis - 1).count;
  if (op == mpcf::Reduction::Sum) {
    const std::uint64_t each = mpcf::kLeastBytesPerFunction<T>;
    const mpcf::ResultLimits limits = mpcf::result_limits(each);
    const std::string result = what + " gives a result of " + std::to_string(count) + " functions";
    if (count > limits.in_64_bits) {
      throw InvalidArgument(result + " of at least " + std::to_string(each) +
                            " bytes each, more bytes than 64 bits can count");
    }
    if (count > limits.in_memory) {
      throw mpcf::OutOfMemory(result + " (" + mpcf::bytes_text(count * each) +
                              " at least), more than this machine's memory (" +
                              mpcf::bytes_text(limits.memory_bytes) + ")");
    }
  }
  if (rest.empty()) rest.push_back(1);
  return new_handle<T>(reduce(count, shape[axis], inner), rest, X->type);
}

void check_path(const char* path) {
  require(path, "path");
  if (*path == '\0') throw InvalidArgument("argument 'path' is an empty string");
}

class BufferSink final : public mpcf::pcf_file::Sink {
 public:
  explicit BufferSink(unsigned char* out) : out_(out) {}
  void write(const void* data, std::size_t bytes) override {
    std::memcpy(out_ + written_, data, bytes);
    written_ += bytes;
  }

 private:
  unsigned char* out_;
  std::size_t written_ = 0;
};

class BufferSource final : public mpcf::pcf_file::Source {
 public:
  BufferSource(const unsigned char* data, std::uint64_t size) : data_(data), size_(size) {}
  std::size_t read(void* data, std::size_t bytes) override {
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, size_ - position_));
    if (k > 0) std::memcpy(data, data_ + position_, k);
    position_ += k;
    return k;
  }

 private:
  const unsigned char* data_;
  std::uint64_t size_;
  std::uint64_t position_ = 0;
};

std::uint64_t serialized_size(const mpcf_pcfs* pcfs) {
  return mpcf::pcf_file::file_size(pcfs->shape.size(), pcfs->count(), pcfs->total_breakpoints(),
                                   pcfs->dtype == MPCF_FLOAT32 ? 4 : 8);
}

std::uint32_t file_type(const mpcf_pcfs* pcfs) {
  return pcfs->linear() ? mpcf::pcf_file::kPiecewiseLinear : mpcf::pcf_file::kPiecewiseConstant;
}

void write_file(mpcf::pcf_file::Sink& sink, const mpcf_pcfs* pcfs) {
  if (pcfs->dtype == MPCF_FLOAT32) {
    mpcf::pcf_file::write(sink, pcfs->shape, pcfs->f32->data(), file_type(pcfs));
  } else {
    mpcf::pcf_file::write(sink, pcfs->shape, pcfs->f64->data(), file_type(pcfs));
  }
}

mpcf_pcfs* handle_of(mpcf::pcf_file::Loaded loaded) {
  const mpcf_function_type type = loaded.functionType == mpcf::pcf_file::kPiecewiseLinear
                                      ? MPCF_PIECEWISE_LINEAR
                                      : MPCF_PIECEWISE_CONSTANT;
  if (loaded.dtype == mpcf::pcf_file::kFloat32) {
    return new_handle<float>(std::move(loaded.f32), std::move(loaded.shape), type);
  }
  return new_handle<double>(std::move(loaded.f64), std::move(loaded.shape), type);
}

void save(const mpcf_pcfs* pcfs, const std::string& path) {
  mpcf::pcf_file::save_file(path, serialized_size(pcfs),
                            [&](mpcf::pcf_file::Sink& sink) { write_file(sink, pcfs); });
}

}  // namespace

extern "C" {

mpcf_status mpcf_pcfs_from_barcodes(mpcf_barcode_summary kind, mpcf_dtype dtype, uint64_t n,
                                    const uint64_t* offsets, const double* bars,
                                    mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_from_barcodes", [&] {
    require(out, "out");
    const mpcf::BarcodeSummary summary = barcode_summary(kind);
    check_dtype(dtype);
    require(offsets, "offsets");
    if (offsets[n] > 0) require(bars, "bars");
    if (raw_enum(dtype) == MPCF_FLOAT32) {
      *out = new_handle<float>(mpcf::pcfs_from_barcodes<float>(summary, n, offsets, bars), {n});
    } else {
      *out = new_handle<double>(mpcf::pcfs_from_barcodes<double>(summary, n, offsets, bars), {n});
    }
  });
}

mpcf_status mpcf_plfs_landscapes(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                                 const double* bars, uint64_t k, double clip, mpcf_pcfs** out) {
  return api_entry("mpcf_plfs_landscapes", [&] {
    plfs_of_barcodes(dtype, n, offsets, bars, {n, k}, out, [&](auto tag) {
      return mpcf::landscapes<decltype(tag)>(n, offsets, bars, k, clip);
    });
  });
}

mpcf_status mpcf_plfs_silhouettes(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                                  const double* bars, double q, double clip, mpcf_pcfs** out) {
  return api_entry("mpcf_plfs_silhouettes", [&] {
    plfs_of_barcodes(dtype, n, offsets, bars, {n}, out, [&](auto tag) {
      return mpcf::silhouettes<decltype(tag)>(n, offsets, bars, q, clip);
    });
  });
}

mpcf_status mpcf_pcfs_reduce(const mpcf_pcfs* X, mpcf_reduction op, size_t axis, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_reduce", [&] {
    require(X, "X");
    require(out, "out");
    const mpcf::Reduction r = reduction(op);
    if (axis != MPCF_ALL_AXES && axis >= X->shape.size()) {
      throw InvalidArgument("axis " + std::to_string(axis) + " is out of range for a shape of " +
                            std::to_string(X->shape.size()) +
                            " dimension(s); use 0 .. ndim-1 or MPCF_ALL_AXES");
    }
    *out = X->dtype == MPCF_FLOAT32 ? reduce_typed<float>(X, r, axis)
                                    : reduce_typed<double>(X, r, axis);
  });
}

mpcf_status mpcf_pcfs_combine(double a, const mpcf_pcfs* X, double b, const mpcf_pcfs* Y,
                              mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_combine", [&] {
    require(X, "X");
    require(Y, "Y");
    require(out, "out");
    check_same_dtype(X, Y);
    const bool from_y = X->count() == 1 && Y->count() != 1;
    std::vector<std::uint64_t> shape = from_y ? Y->shape : X->shape;
    auto combined = [&](const auto& x, const auto& y) {
      return X->linear() ? mpcf::plf_combine(a, x, b, y) : mpcf::combine(a, x, b, y);
    };
    if (X->dtype == MPCF_FLOAT32) {
      *out = new_handle<float>(combined(X->f32->data(), Y->f32->data()), shape, X->type);
    } else {
      *out = new_handle<double>(combined(X->f64->data(), Y->f64->data()), shape, X->type);
    }
  });
}

mpcf_status mpcf_pcfs_evaluate(const mpcf_pcfs* X, const double* t, uint64_t nt, void* out,
                               uint64_t capacity) {
  return api_entry("mpcf_pcfs_evaluate", [&] {
    require(X, "X");
    if (nt > 0) require(t, "t");
    const std::uint64_t n = X->count();
    if (nt > 0 && n > std::numeric_limits<std::uint64_t>::max() / nt) {
      throw InvalidArgument("count(X) * nt overflows 64 bits");
    }
    check_capacity(n * nt, capacity, out);
    if (X->dtype == MPCF_FLOAT32) {
      if (X->linear()) {
        mpcf::plf_evaluate(X->f32->data(), t, nt, static_cast<float*>(out));
      } else {
        mpcf::evaluate(X->f32->data(), t, nt, static_cast<float*>(out));
      }
    } else if (X->linear()) {
      mpcf::plf_evaluate(X->f64->data(), t, nt, static_cast<double*>(out));
    } else {
      mpcf::evaluate(X->f64->data(), t, nt, static_cast<double*>(out));
    }
  });
}

mpcf_status mpcf_pcfs_offsets(const mpcf_pcfs* pcfs, uint64_t* offsets, uint64_t capacity) {
  return api_entry("mpcf_pcfs_offsets", [&] {
    require(pcfs, "pcfs");
    check_capacity(pcfs->count() + 1, capacity, offsets, "offsets");
    const std::uint64_t n = pcfs->count();
    for (std::uint64_t k = 0; k <= n; ++k) {
      offsets[k] = pcfs->dtype == MPCF_FLOAT32 ? pcfs->f32->data().offset(k)
                                               : pcfs->f64->data().offset(k);
    }
  });
}

mpcf_status mpcf_pcfs_breakpoints(const mpcf_pcfs* pcfs, void* times, void* values,
                                  uint64_t capacity) {
  return api_entry("mpcf_pcfs_breakpoints", [&] {
    require(pcfs, "pcfs");
    const std::uint64_t total = pcfs->total_breakpoints();
    check_capacity(total, capacity, times, "times");
    check_capacity(total, capacity, values, "values");
    auto copy = [&](const auto& points, auto* t, auto* v) {
      for (std::size_t k = 0; k < points.size(); ++k) {
        t[k] = points[k].t;
        v[k] = points[k].v;
      }
    };
    if (pcfs->dtype == MPCF_FLOAT32) {
      copy(pcfs->f32->data().elements(), static_cast<float*>(times), static_cast<float*>(values));
    } else {
      copy(pcfs->f64->data().elements(), static_cast<double*>(times), static_cast<double*>(values));
    }
  });
}

mpcf_status mpcf_pcfs_save(const mpcf_pcfs* pcfs, const char* path) {
  return api_entry("mpcf_pcfs_save", [&] {
    require(pcfs, "pcfs");
    check_path(path);
    save(pcfs, path);
  });
}

mpcf_status mpcf_pcfs_load(const char* path, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_load", [&] {
    require(out, "out");
    check_path(path);
    *out = handle_of(mpcf::pcf_file::load_file(path));
  });
}

mpcf_status mpcf_pcfs_serialized_size(const mpcf_pcfs* pcfs, uint64_t* out) {
  return api_entry("mpcf_pcfs_serialized_size", [&] {
    require(pcfs, "pcfs");
    require(out, "out");
    *out = serialized_size(pcfs);
  });
}

mpcf_status mpcf_pcfs_serialize(const mpcf_pcfs* pcfs, void* out, uint64_t capacity) {
  return api_entry("mpcf_pcfs_serialize", [&] {
    require(pcfs, "pcfs");
    check_capacity(serialized_size(pcfs), capacity, out);
    BufferSink sink(static_cast<unsigned char*>(out));
    write_file(sink, pcfs);
  });
}

mpcf_status mpcf_pcfs_deserialize(const void* data, uint64_t size, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_deserialize", [&] {
    require(out, "out");
    if (size > 0) require(data, "data");
    BufferSource source(static_cast<const unsigned char*>(data), size);
    *out = handle_of(mpcf::pcf_file::read(source, size, "the buffer"));
  });
}

}  // extern "C"
