// RAII owners of CUDA resources: a scoped current-device guard, streams,
// events, device arrays and pinned host buffers. Every destructor is
// noexcept and tolerates a CUDA runtime that is shutting down.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "mpcf/cuda/cuda_error.cuh"

namespace mpcf::cuda {

// Makes `device` current for the scope and restores the previous device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    MPCF_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) MPCF_CUDA_TRY(cudaSetDevice(device));
  }
  ~ScopedDevice() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) {
      MPCF_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
    }
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

// ScopedDevice for cleanup paths: never throws; a failure leaves the
// current device alone (and the error cleared).
class QuietDeviceScope {
 public:
  explicit QuietDeviceScope(int device) noexcept {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      switched_ = cudaSetDevice(device) == cudaSuccess;
    }
    (void)cudaGetLastError();
  }
  ~QuietDeviceScope() {
    if (switched_) MPCF_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
  }
  QuietDeviceScope(const QuietDeviceScope&) = delete;
  QuietDeviceScope& operator=(const QuietDeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// A non-blocking stream of the current device.
class CudaStream {
 public:
  CudaStream() { MPCF_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  // A stream of the given priority (cudaDeviceGetStreamPriorityRange: lower
  // numbers first): its thread blocks are scheduled before waiting ones of
  // lower-priority streams.
  explicit CudaStream(int priority) {
    MPCF_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
  }
  ~CudaStream() {
    if (stream_) MPCF_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  CudaStream(CudaStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}

  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { MPCF_CUDA_TRY(cudaStreamSynchronize(stream_)); }
  // For cleanup paths: waits, reports nothing.
  void synchronize_noexcept() const noexcept {
    if (stream_) MPCF_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event used for ordering (no timing) unless `timing` is set.
class CudaEvent {
 public:
  explicit CudaEvent(bool timing = false) {
    MPCF_CUDA_TRY(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault
                                                           : cudaEventDisableTiming));
  }
  ~CudaEvent() {
    if (event_) MPCF_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& o) noexcept {
    if (this != &o) {
      if (event_) MPCF_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
      event_ = std::exchange(o.event_, nullptr);
    }
    return *this;
  }

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t s) { MPCF_CUDA_TRY(cudaEventRecord(event_, s)); }
  void synchronize() const { MPCF_CUDA_TRY(cudaEventSynchronize(event_)); }
  // Makes `s` wait for the work recorded in this event.
  void make_wait(cudaStream_t s) const { MPCF_CUDA_TRY(cudaStreamWaitEvent(s, event_, 0)); }

 private:
  cudaEvent_t event_ = nullptr;
};

// Where device memory comes from: cudaMalloc directly, or a caching
// allocator (see cuda_context.cuh). Implementations must be usable from the
// thread that owns the GPU context.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Throws CudaOutOfMemory / CudaError.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  // Gives back a block whose contents `tag` names (non-zero: e.g. an
  // uploaded collection), so that take_tagged can hand it out again with
  // those contents. An allocator that keeps nothing just deallocates.
  virtual void deallocate_tagged(void* p, std::size_t bytes, std::uint64_t tag) noexcept {
    (void)tag;
    deallocate(p, bytes);
  }
  // A given-back block of `bytes` still holding the contents `tag` names,
  // now lent out; nullptr when there is none.
  virtual void* take_tagged(std::uint64_t tag, std::size_t bytes) noexcept {
    (void)tag;
    (void)bytes;
    return nullptr;
  }
};

namespace detail {
inline std::size_t checked_bytes(std::size_t count, std::size_t elementSize, const char* what) {
  if (elementSize != 0 && count > std::numeric_limits<std::size_t>::max() / elementSize) {
    throw OutOfMemory(std::string(what) + ": " + std::to_string(count) +
                      " elements do not fit in the address space");
  }
  return count * elementSize;
}
}  // namespace detail

// `count` elements of T in device memory of the device current at
// construction. Freed on the same device.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count, DeviceAllocator* allocator = nullptr)
      : count_(count), allocator_(allocator) {
    const std::size_t bytes = detail::checked_bytes(count, sizeof(T), "device array");
    MPCF_CUDA_TRY(cudaGetDevice(&device_));
    if (bytes == 0) return;
    if (allocator_) {
      data_ = static_cast<T*>(allocator_->allocate(bytes));
    } else {
      void* p = nullptr;
      MPCF_CUDA_TRY(cudaMalloc(&p, bytes));
      data_ = static_cast<T*>(p);
    }
  }
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { steal(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }

  // The array of `count` elements that `allocator` kept under `tag` (its
  // contents those it had when given back with that tag); an empty array
  // when the allocator has none.
  static DeviceArray take_tagged(std::size_t count, DeviceAllocator* allocator, std::uint64_t tag) {
    DeviceArray a;
    const std::size_t bytes = detail::checked_bytes(count, sizeof(T), "device array");
    if (!allocator || bytes == 0) return a;
    void* p = allocator->take_tagged(tag, bytes);
    if (!p) return a;
    // Owned before anything can throw: an error below gives the block back.
    a.data_ = static_cast<T*>(p);
    a.count_ = count;
    a.allocator_ = allocator;
    a.tag_ = tag;
    MPCF_CUDA_TRY(cudaGetDevice(&a.device_));
    return a;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  int device() const noexcept { return device_; }
  // Names the contents (non-zero) for the allocator to keep them when the
  // array is released (DeviceAllocator::deallocate_tagged); 0: none. Whoever
  // writes the array after setting a tag must clear it.
  void set_tag(std::uint64_t tag) noexcept { tag_ = tag; }
  std::uint64_t tag() const noexcept { return tag_; }

 private:
  void release() noexcept {
    if (!data_) return;
    if (allocator_) {
      if (tag_ != 0) {
        allocator_->deallocate_tagged(data_, bytes(), tag_);
      } else {
        allocator_->deallocate(data_, bytes());
      }
    } else {
      QuietDeviceScope on(device_);
      MPCF_CUDA_CHECK_NOTHROW(cudaFree(data_));
    }
    data_ = nullptr;
    count_ = 0;
    tag_ = 0;
  }
  void steal(DeviceArray& o) noexcept {
    data_ = std::exchange(o.data_, nullptr);
    count_ = std::exchange(o.count_, 0);
    allocator_ = o.allocator_;
    device_ = o.device_;
    tag_ = std::exchange(o.tag_, 0);
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
  DeviceAllocator* allocator_ = nullptr;
  int device_ = 0;
  std::uint64_t tag_ = 0;
};

// `count` elements of T in page-locked host memory (cudaMallocHost), needed
// for copies that are truly asynchronous.
template <typename T>
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  explicit PinnedHostBuffer(std::size_t count) : count_(count) {
    const std::size_t bytes = detail::checked_bytes(count, sizeof(T), "pinned host buffer");
    if (bytes == 0) return;
    void* p = nullptr;
    MPCF_CUDA_TRY(cudaMallocHost(&p, bytes));
    data_ = static_cast<T*>(p);
  }
  ~PinnedHostBuffer() {
    if (data_) MPCF_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer(PinnedHostBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedHostBuffer& operator=(PinnedHostBuffer&& o) noexcept {
    if (this != &o) {
      if (data_) MPCF_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// A page-locked host chunk of kPinnedChunkBytes, taken from (and given back
// to) a process-wide cache: page-locking memory costs milliseconds per call,
// so up to kMaxCachedPinnedChunks chunks (128 MiB: four GPUs' download
// rings and layout staging) stay allocated between computations and are
// freed at exit. Thread-safe.
constexpr std::size_t kPinnedChunkBytes = std::size_t(8) << 20;
constexpr std::size_t kMaxCachedPinnedChunks = 16;

class PinnedChunk {
 public:
  PinnedChunk();  // throws CudaOutOfMemory / CudaError
  ~PinnedChunk();
  PinnedChunk(const PinnedChunk&) = delete;
  PinnedChunk& operator=(const PinnedChunk&) = delete;
  PinnedChunk(PinnedChunk&& o) noexcept : data_(std::exchange(o.data_, nullptr)) {}

  template <typename T>
  T* as() noexcept {
    return static_cast<T*>(data_);
  }
  static constexpr std::size_t bytes() noexcept { return kPinnedChunkBytes; }

 private:
  void* data_ = nullptr;
};

}  // namespace mpcf::cuda
