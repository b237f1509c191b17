// Marks functions shared by host code and CUDA kernels (the point type, the
// operation functors, the rectangle walk). Expands to nothing without nvcc.
#pragma once

#if defined(__CUDACC__)
#define MPCF_HD __host__ __device__ __forceinline__
#else
#define MPCF_HD inline
#endif
