// The float32 kernels of the SIMD PLF walk (see simd_plf_walk.inc).
#define MPCF_SIMD_PLF_WALK_T float
#include "simd_plf_walk.inc"
