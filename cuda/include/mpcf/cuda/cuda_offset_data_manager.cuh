// CudaOffsetDataManager<ElementT>: the core OffsetDataManager (host-side CSR
// storage of variable-length objects) extended with the two ways its data
// reaches a GPU:
//  * upload_subset(), which copies the objects of one block's row or column
//    range, offsets re-indexed from 0, into device arrays that are allocated
//    once per GPU at the largest size any block needs (streamed input);
//  * upload_whole(), the whole collection with 32-bit offsets, to one GPU or
//    to several at once, each pinned chunk filled once and copied to every
//    GPU (resident input; upload_bytes of pinned_staging.cuh).
// Nothing here is PCF-specific: PcfBlockOp uses it through PlaneCollections
// (plane_collections.cuh), and a second BlockOp (piecewise linear
// functions, DESIGN §10) with its own point type shares it.
//
// It extends the core manager by composition: it shares (never copies) the
// host data, because a validated collection's data is immutable and may be
// gigabytes; copying it for every computation would double host memory.
// CudaPcfDataManager<T> is the PCF case (cuda_data_of in
// cuda_integration_tasks.cuh shares a PcfCollection's data).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mpcf/core/errors.hpp"
#include "mpcf/core/offset_data_manager.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/pinned_staging.cuh"

namespace mpcf::cuda {

template <typename ElementT>
class CudaOffsetDataManager {
 public:
  using element_type = ElementT;
  using HostManager = OffsetDataManager<ElementT>;

  // One GPU's copy of the current subset: 32-bit offsets (count + 1, from 0)
  // and the elements, plus the pinned staging buffers the upload goes
  // through. Sized at allocation for the largest subset; reused per block.
  struct DeviceSubset {
    DeviceArray<std::uint32_t> offsets;
    DeviceArray<ElementT> elements;
    PinnedHostBuffer<std::uint32_t> stagingOffsets;
    PinnedHostBuffer<ElementT> stagingElements;
    CudaEvent uploaded;  // the last upload has left the staging buffers
    bool uploadPending = false;
    std::size_t first = 0;  // objects [first, first + count) are on the device
    std::size_t count = 0;
    std::size_t capacityObjects = 0;
    std::size_t capacityElements = 0;
  };

  // The whole collection on one GPU: 32-bit offsets (count + 1) and the
  // elements.
  struct DeviceCollection {
    DeviceArray<std::uint32_t> offsets;
    DeviceArray<ElementT> elements;
  };

  // An empty manager; fill it with init().
  CudaOffsetDataManager() : host_(std::make_shared<HostManager>()) {}

  // Shares existing host data (no copy). sourceId: a number that names the
  // data's contents for as long as the process runs (PcfCollection::id());
  // with it, the whole collection uploaded to a GPU is kept there between
  // computations (upload_whole). 0: unnamed, uploaded every time.
  explicit CudaOffsetDataManager(std::shared_ptr<const HostManager> host,
                                 std::uint64_t sourceId = 0)
      : host_(std::move(host)), sourceId_(sourceId) {
    if (!host_) throw std::logic_error("CudaOffsetDataManager: null host data");
  }

  // Flattens objects like OffsetDataManager::init (the manager then owns
  // its host data).
  template <typename It, typename SizeFn, typename ElementFn>
  void init(It begin, It end, SizeFn sizeFn, ElementFn elementFn) {
    auto owned = std::make_shared<HostManager>();
    owned->init(begin, end, sizeFn, elementFn);
    host_ = std::move(owned);
    sourceId_ = 0;
  }

  const HostManager& host() const noexcept { return *host_; }
  std::size_t count() const { return host_->count(); }
  std::uint64_t total_elements() const { return host_->total_elements(); }
  std::uint64_t size_of(std::size_t i) const { return host_->size_of(i); }
  std::uint64_t subset_elements(std::size_t first, std::size_t n) const {
    return host_->subset_elements(first, n);
  }
  std::uint64_t max_subset_elements(std::size_t n) const { return host_->max_subset_elements(n); }

  // Device bytes a subset of up to `maxObjects` objects needs.
  std::uint64_t device_bytes(std::size_t maxObjects) const {
    return static_cast<std::uint64_t>(maxObjects + 1) * sizeof(std::uint32_t) +
           max_subset_elements(maxObjects) * sizeof(ElementT);
  }

  // Allocates, on the context's device, room for any `maxObjects`
  // consecutive objects. Throws InvalidArgument when such a subset has 2^32
  // elements or more (the kernels use 32-bit indices).
  DeviceSubset allocate_subset(GpuContext& ctx, std::size_t maxObjects) const {
    const std::uint64_t elements = max_subset_elements(maxObjects);
    if (elements > std::numeric_limits<std::uint32_t>::max()) {
      throw InvalidArgument("a block's functions hold " + std::to_string(elements) +
                            " breakpoints; at most 4294967295 fit a block's 32-bit indices");
    }
    DeviceSubset s;
    s.capacityObjects = maxObjects;
    s.capacityElements = static_cast<std::size_t>(elements);
    s.offsets = ctx.allocate<std::uint32_t>(maxObjects + 1);
    s.elements = ctx.allocate<ElementT>(s.capacityElements);
    s.stagingOffsets = PinnedHostBuffer<std::uint32_t>(maxObjects + 1);
    s.stagingElements = PinnedHostBuffer<ElementT>(s.capacityElements);
    return s;
  }

  // Enqueues on `stream` the upload of objects [first, first + n). Waits
  // (host side) until the previous upload from the same staging buffers has
  // been read by the device. Kernels enqueued later on `stream` see the data.
  void upload_subset(DeviceSubset& s, std::size_t first, std::size_t n, cudaStream_t stream) const {
    if (n > s.capacityObjects || subset_elements(first, n) > s.capacityElements) {
      throw std::logic_error("upload_subset: subset larger than the device arrays");
    }
    if (s.uploadPending) s.uploaded.synchronize();
    s.uploadPending = false;
    host_->extract_subset(first, n, s.stagingOffsets.data(), s.stagingElements.data());
    const std::size_t m = static_cast<std::size_t>(subset_elements(first, n));
    MPCF_CUDA_TRY(cudaMemcpyAsync(s.offsets.data(), s.stagingOffsets.data(),
                                  (n + 1) * sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
    if (m > 0) {
      MPCF_CUDA_TRY(cudaMemcpyAsync(s.elements.data(), s.stagingElements.data(),
                                    m * sizeof(ElementT), cudaMemcpyHostToDevice, stream));
    }
    s.uploaded.record(stream);
    s.uploadPending = true;
    s.first = first;
    s.count = n;
  }

  // The whole collection on the context's GPU (arrays from its allocator):
  // the copy an earlier computation left there (a named collection, see the
  // constructor), or uploaded now with copies on `stream`. Returns when the
  // copies are complete. The offsets must fit 32 bits (total_elements() <
  // 2^32).
  DeviceCollection upload_whole(GpuContext& ctx, cudaStream_t stream) const {
    DeviceCollection d;
    if (take_kept(&ctx.allocator(), d)) return d;
    d.offsets = ctx.allocate<std::uint32_t>(count() + 1);
    d.elements = ctx.allocate<ElementT>(static_cast<std::size_t>(total_elements()));
    const std::vector<std::uint32_t> offs = offsets32();
    const int device = ctx.device();
    upload_bytes({UploadTarget{device, reinterpret_cast<unsigned char*>(d.offsets.data()), stream}},
                 reinterpret_cast<const unsigned char*>(offs.data()), d.offsets.bytes());
    upload_bytes(
        {UploadTarget{device, reinterpret_cast<unsigned char*>(d.elements.data()), stream}},
        reinterpret_cast<const unsigned char*>(host_->elements().data()), d.elements.bytes());
    name_kept(d);
    return d;
  }

  // The whole collection to every one of `devices` in one pass over the host
  // data (each pinned chunk filled once and copied to every GPU): arrays
  // from each device's cache (device_memory_cache), one stream per device
  // for the copies. Returns when the copies are complete (upload_bytes
  // waits for them, also when it fails); element d is on devices[d].
  std::vector<DeviceCollection> upload_whole(const std::vector<int>& devices) const {
    const std::size_t k = devices.size();
    std::vector<DeviceCollection> all(k);
    std::vector<CudaStream> streams;
    streams.reserve(k);
    std::vector<UploadTarget> offsets, elements;
    std::vector<std::size_t> sent;  // the devices that get the data now
    for (std::size_t d = 0; d < k; ++d) {
      ScopedDevice on(devices[d]);
      CachingDeviceAllocator* cache = &device_memory_cache(devices[d]);
      if (take_kept(cache, all[d])) continue;
      all[d].offsets = DeviceArray<std::uint32_t>(count() + 1, cache);
      all[d].elements = DeviceArray<ElementT>(static_cast<std::size_t>(total_elements()), cache);
      streams.emplace_back();
      offsets.push_back(UploadTarget{
          devices[d], reinterpret_cast<unsigned char*>(all[d].offsets.data()), streams.back().get()});
      elements.push_back(UploadTarget{
          devices[d], reinterpret_cast<unsigned char*>(all[d].elements.data()), streams.back().get()});
      sent.push_back(d);
    }
    if (sent.empty()) return all;
    const std::vector<std::uint32_t> offs = offsets32();
    upload_bytes(offsets, reinterpret_cast<const unsigned char*>(offs.data()),
                 offs.size() * sizeof(std::uint32_t));
    upload_bytes(elements, reinterpret_cast<const unsigned char*>(host_->elements().data()),
                 static_cast<std::size_t>(total_elements()) * sizeof(ElementT));
    for (std::size_t d : sent) name_kept(all[d]);
    return all;
  }

  // The tags under which a named collection's device copy is kept (0:
  // unnamed).
  std::uint64_t offsets_tag() const noexcept { return sourceId_ ? sourceId_ * 2 : 0; }
  std::uint64_t elements_tag() const noexcept { return sourceId_ ? sourceId_ * 2 + 1 : 0; }

 private:
  // The copy of this collection that `allocator` kept, both arrays (an
  // array alone is given back).
  bool take_kept(DeviceAllocator* allocator, DeviceCollection& d) const {
    if (sourceId_ == 0) return false;
    auto offsets = DeviceArray<std::uint32_t>::take_tagged(count() + 1, allocator, offsets_tag());
    if (!offsets.data()) return false;
    auto elements = DeviceArray<ElementT>::take_tagged(static_cast<std::size_t>(total_elements()),
                                                       allocator, elements_tag());
    if (!elements.data() && total_elements() > 0) return false;
    d.offsets = std::move(offsets);
    d.elements = std::move(elements);
    return true;
  }
  // Once uploaded, the arrays hold the collection: kept under its tags when
  // released (nothing writes them: kernels read the function data only).
  void name_kept(DeviceCollection& d) const noexcept {
    d.offsets.set_tag(offsets_tag());
    d.elements.set_tag(elements_tag());
  }

  std::vector<std::uint32_t> offsets32() const {
    const std::size_t n = count();
    std::vector<std::uint32_t> offs(n + 1);
    for (std::size_t k = 0; k <= n; ++k) offs[k] = static_cast<std::uint32_t>(host_->offset(k));
    return offs;
  }

  std::shared_ptr<const HostManager> host_;
  std::uint64_t sourceId_ = 0;
};

template <typename T>
using CudaPcfDataManager = CudaOffsetDataManager<PcfPoint<T>>;

}  // namespace mpcf::cuda
