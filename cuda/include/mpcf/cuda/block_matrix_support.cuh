// Device queries behind the block decomposition: which devices to use, the
// output memory budget (get_max_output_elements), the occupancy floor on a
// block's side (get_min_block_side), and names for the build information.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpcf::cuda {

// Number of usable devices; 0 when there is no driver or device. Never throws.
int usable_device_count() noexcept;

// The devices a computation runs on: `requested` when given (each id must
// exist, ids distinct), else every device. Throws CudaUnavailable naming the
// first missing id ("device id 3 does not exist; this machine has 1 CUDA
// device (ids 0..0)") or when there is no device at all, InvalidArgument on
// a negative or repeated id.
std::vector<int> resolve_devices(const std::vector<int>& requested);

// Free memory of each device in bytes (cudaMemGetInfo); throws on failure.
std::vector<std::size_t> free_device_memory(const std::vector<int>& devices);

// Output scalars of type T that fit in the output half of the budgeted free
// memory of the most constrained device:
//   min over devices of (free * memoryFraction) / 2 / elementSize.
// The other half is left for the function data (see planning in
// cuda_integration_tasks.cuh, which checks that the data fits there).
std::uint64_t get_max_output_elements(const std::vector<int>& devices, double memoryFraction,
                                      std::size_t elementSize);

// Bytes of the data half of that budget: min over devices of
// (free * memoryFraction) / 2.
std::uint64_t get_data_budget_bytes(const std::vector<int>& devices, double memoryFraction);

// Occupancy floor on a block's side: floor(sqrt(smCount * 1024)) with the
// smallest multiprocessor count among `devices` (132 SMs -> 367).
std::uint64_t get_min_block_side(const std::vector<int>& devices);

// "NVIDIA H200" for each device, in id order (empty without devices).
std::vector<std::string> device_names() noexcept;

}  // namespace mpcf::cuda
