// The GPU block stages the engine knows, one header each, each with its
// GpuStageFor specialisation (gpu_block_stage.cuh says how make_stage finds
// a consumer's stage). Included where make_stage is instantiated
// (CudaBlockTask, cuda_integration_tasks.cuh): a new consumer's stage header
// is added here; a new function type (a PLF BlockOp) adds nothing.
#pragma once

#include "mpcf/cuda/gpu_block_stage.cuh"
#include "mpcf/cuda/direct_matrix_stage.cuh"
#include "mpcf/cuda/identity_stage.cuh"
#include "mpcf/cuda/knn_stage.cuh"
#include "mpcf/cuda/matvec_stage.cuh"
