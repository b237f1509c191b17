/*
 * libmpcf — exact similarity matrices between piecewise constant and
 * piecewise linear functions.
 *
 * This header is the whole public contract of libmpcf.so. It is plain C11,
 * includes no CUDA header, and every symbol it declares starts with mpcf_.
 *
 * Conventions
 * -----------
 * - Handles are opaque and typed. mpcf_X_create(..., mpcf_X** out) makes one,
 *   mpcf_X_destroy(x) releases it; destroying NULL does nothing.
 * - Every fallible call returns an mpcf_status (MPCF_OK == 0). After a
 *   failure, mpcf_last_error_message() returns a sentence naming the argument
 *   and the offending index or value, and mpcf_last_error_detail() the
 *   indices of invalid input data (function and breakpoint, barcode and
 *   bar). Both are kept per thread.
 * - Structs that may grow (mpcf_error_detail, mpcf_task_info) start with
 *   uint32_t struct_size, which the caller sets to the sizeof it knows; the
 *   library writes no more than that and says how much it wrote.
 * - Nothing is written to an output argument or an output buffer when a call
 *   fails its argument checks.
 * - No entry point throws, aborts or prints.
 * - Sizes and indices are 64-bit.
 * - Any number of threads may make independent calls at once. A handle may be
 *   shared between threads for reading (computing); mpcf_pcfs_reshape and the
 *   mpcf_options_set_* calls must not race with other uses of the same handle.
 *
 * Semantics (see capi/README.md for the full statement)
 * -----------------------------------------------------
 * A PCF is a list of m >= 1 breakpoints (t_k, v_k) with finite, strictly
 * increasing t_k and finite v_k; f(t) = 0 for t < t_0, v_k on [t_k, t_{k+1}),
 * and v_{m-1} for t >= t_{m-1}. A PLF (piecewise linear function,
 * mpcf_function_type) has the same breakpoints and tails and is the linear
 * interpolation of v_k and v_{k+1} on [t_k, t_{k+1}]; what follows holds for
 * both kinds. All integrals run over the window [a, b)
 * (default: the whole real line). A piece whose integrand is exactly zero
 * contributes exactly zero, whatever its width; a non-zero integrand on an
 * unbounded piece gives +inf (distances) or +-inf (kernel).
 *
 * Range: each width t_{k+1} - t_k is computed in the dtype, so a piece
 * wider than the dtype's largest value (its ends of opposite signs, e.g.
 * float32 [-3e38, 3e38)) counts as unbounded: a non-zero integrand on it
 * gives +inf (distances) or +-inf (kernel; with an unbounded last piece of
 * the opposite sign, inf - inf = NaN: the one way finite float32 data can
 * give a NaN inner product). Lp distances (1 < p < inf) are
 * computed as a power sum scaled by the largest |f - g| on the window, so
 * they neither overflow nor underflow wherever the true value is
 * representable in the dtype (for any finite p, also p > FLT_MAX in
 * float32), as long as the widths of the pieces where f != g add up to less
 * than the dtype's largest value (beyond, +inf). L2 inner products are
 * accumulated in double: for float32 data no product or sum can overflow,
 * so finite input never gives NaN; for float64 data the sum overflows to
 * +-inf when a piece's |width * f * g|, or a partial sum of such terms,
 * exceeds DBL_MAX (e.g. values beyond 1e154 on a piece of width 1; terms of
 * opposite signs that overflow give NaN), and a product f * g smaller than
 * the smallest float64 subnormal (|f g| < 2^-1075) rounds to 0, so it
 * contributes 0, on an unbounded piece too. Differences |f - g| of values
 * beyond half the dtype's largest value overflow to +inf.
 *
 * Testing hook: when the environment variable MPCF_DEBUG_HOLD_TASKS is set to
 * a value other than "" or "0" at the moment a task is started by an *_start
 * call, that task computes nothing and waits until it is cancelled (it then
 * ends with MPCF_ERROR_CANCELLED, its outputs all NaN). Tests of interrupt
 * handling use it so that a computation is still running when the interrupt
 * arrives, whatever the machine's speed. Synchronous calls ignore it.
 * Set to "until_wait" instead, a started task computes nothing until the
 * first mpcf_task_wait on it (or a cancel), then runs normally: tests use it
 * to act between an *_start call and the work (e.g. to overwrite an input).
 * The hooks of mpcf_pcfs_save (MPCF_DEBUG_SAVE_STOP, MPCF_DEBUG_SAVE_NAMED)
 * are documented there.
 */
#ifndef MPCF_MPCF_H
#define MPCF_MPCF_H

#include <stddef.h>
#include <stdint.h>

#include "mpcf/mpcf_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version                                                              */
/* ------------------------------------------------------------------ */

#define MPCF_VERSION_MAJOR 0
#define MPCF_VERSION_MINOR 1
#define MPCF_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH of this header. */
#define MPCF_VERSION                                                           \
  (MPCF_VERSION_MAJOR * 10000 + MPCF_VERSION_MINOR * 100 + MPCF_VERSION_PATCH)

/** Version of the loaded library, encoded like MPCF_VERSION. Bindings compare
 *  it with the MPCF_VERSION they were written for. */
MPCF_API int mpcf_version(void);

/** "MAJOR.MINOR.PATCH" of the loaded library. Static storage. */
MPCF_API const char* mpcf_version_string(void);

/** One line describing the build, e.g.
 *  "libmpcf 0.1.0; cuda=on; cuda_runtime=13000; cuda_architectures=90;
 *   compiler=GNU 12.2.0; devices=1 (NVIDIA H200); threads=16;
 *   cpu_simd=avx512 (compiled: scalar sse4 avx2 avx512)": cpu_simd is the
 *  instruction set the CPU walk uses on this machine (the environment
 *  variable MPCF_CPU_SIMD=scalar|sse4|avx2|avx512 on x86-64,
 *  scalar|neon on aarch64, picks a lower one for a computation; a set of
 *  the other architecture makes the computation fail with
 *  MPCF_ERROR_INVALID_ARGUMENT). Static storage. */
MPCF_API const char* mpcf_build_info(void);

/** 1 when the library was built with the CUDA backend, 0 otherwise. */
MPCF_API int mpcf_has_cuda(void);

/** Number of usable CUDA devices; 0 without CUDA, driver or device. */
MPCF_API int mpcf_cuda_device_count(void);

/* ------------------------------------------------------------------ */
/* Status and errors                                                    */
/* ------------------------------------------------------------------ */

typedef enum mpcf_status {
  MPCF_OK = 0,
  /** A NULL pointer, p < 1 or NaN, a bad window (also one that is empty in
   *  the collection's dtype), an unknown enum value, an index out of range, a
   *  shape that does not match the count, CSR offsets that do not start at 0
   *  or that decrease, a result too large for 64-bit sizes, ... */
  MPCF_ERROR_INVALID_ARGUMENT = 1,
  /** PCF data breaking the rules: m = 0 (two equal consecutive offsets),
   *  times not strictly increasing, NaN or infinite times or values. The
   *  message names the function index and the breakpoint index, and
   *  mpcf_last_error_detail gives them. */
  MPCF_ERROR_INVALID_PCF = 2,
  /** The caller's output buffer has fewer elements than the result needs. */
  MPCF_ERROR_BUFFER_TOO_SMALL = 3,
  /** Two collections of different dtypes were combined. */
  MPCF_ERROR_DTYPE_MISMATCH = 4,
  /** Host or device memory could not be allocated. */
  MPCF_ERROR_OUT_OF_MEMORY = 5,
  /** The CUDA backend was requested but the library was built without CUDA,
   *  or no usable device / driver is present, or a listed device is absent. */
  MPCF_ERROR_CUDA_UNAVAILABLE = 6,
  /** A CUDA call failed while computing. */
  MPCF_ERROR_CUDA = 7,
  /** The task was cancelled. */
  MPCF_ERROR_CANCELLED = 8,
  /** A bug in libmpcf (an internal consistency check failed). */
  MPCF_ERROR_INTERNAL = 9,
  /** Not an error: the task is still running (mpcf_task_status, or
   *  mpcf_task_wait whose timeout expired first). */
  MPCF_RUNNING = 10
} mpcf_status;

/** Message of the last failed call on this thread. Never NULL ("" when no
 *  call has failed yet). Valid until the next failing call on this thread. */
MPCF_API const char* mpcf_last_error_message(void);

/** Short constant name of a status, e.g. "MPCF_ERROR_INVALID_PCF". */
MPCF_API const char* mpcf_status_name(mpcf_status status);

/** Where the input of the last failed call on this thread is invalid, as
 *  indices (its message says the same in words), for callers that point at
 *  the offending entry of their own data structure rather than read indices
 *  out of the message. Indices count from 0; -1 means "not about one".
 *
 *  Versioned: fields are only ever added at the end. The caller sets
 *  struct_size to sizeof(mpcf_error_detail) of the header it was compiled
 *  against; see mpcf_last_error_detail. */
typedef struct mpcf_error_detail {
  /** In: the size of the caller's struct. Out: the bytes the library wrote. */
  uint32_t struct_size;
  /** The status the failed call returned; MPCF_OK when no call has failed
   *  on this thread yet. */
  mpcf_status status;
  /** The function whose data is invalid: its index i in the CSR arrays given
   *  to mpcf_pcfs_create, mpcf_plfs_create or their _interleaved forms, or
   *  in the file of mpcf_pcfs_load / mpcf_pcfs_deserialize
   *  (MPCF_ERROR_INVALID_PCF: no breakpoints, too many, a NaN or infinite
   *  time or value, times not strictly increasing). -1 otherwise. */
  int64_t function_index;
  /** The breakpoint of that function (0 .. m-1) the failure is about; -1
   *  when it is about the function as a whole (no breakpoints, too many) or
   *  about no function. For times not increasing, it is the later of the
   *  two breakpoints. */
  int64_t breakpoint_index;
  /** The barcode (its index i in the CSR offsets) of mpcf_pcfs_from_barcodes,
   *  mpcf_plfs_landscapes or mpcf_plfs_silhouettes whose bar or result is
   *  invalid (MPCF_ERROR_INVALID_ARGUMENT); -1 otherwise. */
  int64_t barcode_index;
  /** The bar of that barcode (0 .. its count - 1); -1 when the failure is
   *  about the barcode as a whole (its result overflows the dtype) or about
   *  no barcode. */
  int64_t bar_index;
} mpcf_error_detail;

/** Copies the detail of the last failed call on this thread (the failure
 *  mpcf_last_error_message describes; like the message, it stays until the
 *  next failing call) into *detail: the first
 *  min(detail->struct_size, sizeof(mpcf_error_detail)) bytes, and sets
 *  detail->struct_size to that count. So a caller built against an older,
 *  shorter struct gets the fields it knows, and one built against a newer
 *  header learns which fields this library filled.
 *  Errors (MPCF_ERROR_INVALID_ARGUMENT; like any failure, this one then
 *  becomes the last error): detail NULL, or struct_size < 8 (the two fields
 *  every version has; 0 usually means it was not set). */
MPCF_API mpcf_status mpcf_last_error_detail(mpcf_error_detail* detail);

/* ------------------------------------------------------------------ */
/* GPU memory kept between computations                                 */
/* ------------------------------------------------------------------ */

/** The device buffers of a CUDA computation (its function data, block
 *  buffers, reduction lists) are kept when it ends, up to a limit per
 *  device, and handed to the next computation on that device instead of
 *  being allocated again (repeated calls, e.g. the mat-vecs of an
 *  iterative solver, skip cudaMalloc and cudaFree). The planner counts
 *  them as free memory, and a computation short of memory frees them
 *  before it fails. A computation that fails gives its buffers back too.
 *  A collection's functions uploaded whole stay there with their contents:
 *  the next computation on the same collection handle and device (until
 *  the memory is needed for something else) skips the upload.
 *
 *  mpcf_cuda_cached_bytes: the bytes kept on `device` now (0 before its
 *  first computation). MPCF_ERROR_INVALID_ARGUMENT: out NULL or device
 *  negative; MPCF_ERROR_CUDA_UNAVAILABLE: no such device (or no CUDA). */
MPCF_API mpcf_status mpcf_cuda_cached_bytes(int device, uint64_t* out);
/** The most bytes kept per device: 1 GiB unless the environment variable
 *  MPCF_CUDA_CACHE_BYTES (a decimal byte count, read once when the
 *  library first needs it; anything else is ignored) or this function
 *  set it. Lowering it frees the excess now; 0 keeps nothing. Always
 *  MPCF_OK. */
MPCF_API mpcf_status mpcf_cuda_set_cache_limit(uint64_t bytes);
/** The limit of mpcf_cuda_set_cache_limit. MPCF_ERROR_INVALID_ARGUMENT:
 *  out NULL. */
MPCF_API mpcf_status mpcf_cuda_cache_limit(uint64_t* out);
/** Frees the GPU memory kept between computations on every device, now
 *  (computations running meanwhile keep what they use, and give it back
 *  when they end). Always MPCF_OK, also without CUDA. */
MPCF_API mpcf_status mpcf_cuda_release_memory(void);

/* ------------------------------------------------------------------ */
/* Results written straight from the GPUs into page-locked memory       */
/* ------------------------------------------------------------------ */

/** Page-locks the caller's memory [p, p + bytes) for every CUDA device
 *  (cudaHostRegister, portable and mapped). A matrix result (pdist,
 *  l2_kernel, cdist, any layout) whose whole output buffer lies inside one
 *  such range is then written by each GPU straight into it: the host does
 *  not copy it, and a result bound by that copy (e.g. m = 128, where the
 *  GPUs compute faster than the host copies) takes less time, on one GPU
 *  and more so on several. Same bits either way. Registering costs time
 *  (measured on a 2x H200 host: 0.02-0.06 s per GB of memory already
 *  written to, 0.2-0.4 s per GB of fresh memory, whose pages it faults in;
 *  a 5 GB pdist result takes 0.25 s to register and saves about 0.01 s per
 *  call), so it pays for a buffer that takes many results. Locked memory
 *  is not available to the rest of the system until
 *  mpcf_cuda_unregister_host, which must come before the memory is freed
 *  (the GPUs would write into the pages locked at registration, not into
 *  memory allocated later at the same address).
 *  MPCF_ERROR_INVALID_ARGUMENT: p NULL, bytes 0, a range that overlaps one
 *  registered before, or memory that cannot be locked (not mapped in this
 *  process, or locked by other code); MPCF_ERROR_CUDA_UNAVAILABLE: no CUDA
 *  device (or no CUDA in this build). */
MPCF_API mpcf_status mpcf_cuda_register_host(void* p, uint64_t bytes);
/** Unlocks the range mpcf_cuda_register_host(p, ...) locked (p: its start,
 *  as given there). MPCF_ERROR_INVALID_ARGUMENT: p NULL or not the start of
 *  a registered range, or a computation writing its result into the range
 *  now (wait for it first); MPCF_ERROR_CUDA_UNAVAILABLE without CUDA. */
MPCF_API mpcf_status mpcf_cuda_unregister_host(void* p);

/* ------------------------------------------------------------------ */
/* Enumerations                                                         */
/* ------------------------------------------------------------------ */

/** Element type of times, values and results. */
typedef enum mpcf_dtype { MPCF_FLOAT32 = 1, MPCF_FLOAT64 = 2 } mpcf_dtype;

typedef enum mpcf_backend {
  /** CUDA when the library has it, a device is present and the problem has
   *  at least the CUDA threshold of merge steps; the CPU otherwise. */
  MPCF_BACKEND_AUTO = 0,
  MPCF_BACKEND_CPU = 1,
  MPCF_BACKEND_CUDA = 2
} mpcf_backend;

/** How a symmetric n x n result is laid out in the caller's buffer. */
typedef enum mpcf_layout {
  /** Row-major n x n, symmetric, diagonal filled (0 for distances). */
  MPCF_LAYOUT_DENSE = 0,
  /** SciPy / R `dist` order: (0,1), (0,2), ..., (0,n-1), (1,2), ...;
   *  n(n-1)/2 entries. Distances only. */
  MPCF_LAYOUT_CONDENSED = 1,
  /** The engine's native packed lower triangle. Distances (diagonal
   *  excluded): entry (i, j), i > j, at i(i-1)/2 + j; n(n-1)/2 entries.
   *  Kernels (diagonal included): entry (i, j), i >= j, at i(i+1)/2 + j;
   *  n(n+1)/2 entries. */
  MPCF_LAYOUT_PACKED_LOWER = 2
} mpcf_layout;

/** What cdist computes for each pair. */
typedef enum mpcf_metric {
  /** Lp distance with the given p (1 <= p <= INFINITY). */
  MPCF_METRIC_LP_DISTANCE = 0,
  /** L2 inner product, integral of f * g (p is ignored). */
  MPCF_METRIC_L2_KERNEL = 1
} mpcf_metric;

/* ------------------------------------------------------------------ */
/* PCF collections                                                      */
/* ------------------------------------------------------------------ */

/** An immutable, validated collection of n PCFs of one dtype, with a tensor
 *  shape (default: the vector shape {n}). The data is copied at creation;
 *  the caller's arrays may be freed afterwards. */
typedef struct mpcf_pcfs mpcf_pcfs;

/** Creates a collection from CSR arrays.
 *  offsets: n + 1 non-decreasing entries, offsets[0] == 0; function i has
 *           breakpoints offsets[i] .. offsets[i+1]-1 (at least one).
 *  times, values: offsets[n] elements each, of the given dtype (float or
 *           double). May be NULL when offsets[n] == 0 (then n must be 0).
 *  n = 0 is a valid empty collection (offsets must still hold one 0). */
MPCF_API mpcf_status mpcf_pcfs_create(mpcf_dtype dtype, uint64_t n,
                                      const uint64_t* offsets,
                                      const void* times, const void* values,
                                      mpcf_pcfs** out);

/** Like mpcf_pcfs_create, with interleaved points t0, v0, t1, v1, ...
 *  (2 * offsets[n] elements of the dtype). */
MPCF_API mpcf_status mpcf_pcfs_create_interleaved(mpcf_dtype dtype, uint64_t n,
                                                  const uint64_t* offsets,
                                                  const void* points,
                                                  mpcf_pcfs** out);

MPCF_API void mpcf_pcfs_destroy(mpcf_pcfs* pcfs);

/** What the functions of a collection are. One handle type, mpcf_pcfs,
 *  holds either kind; every call that takes a collection takes both, and a
 *  call given two collections of different kinds fails with
 *  MPCF_ERROR_INVALID_ARGUMENT naming both. */
typedef enum mpcf_function_type {
  /** Piecewise constant: v_k on [t_k, t_{k+1}) (mpcf_pcfs_create). */
  MPCF_PIECEWISE_CONSTANT = 1,
  /** Piecewise linear: 0 before t_0 (a jump to v_0 at t_0), the linear
   *  interpolation of v_k and v_{k+1} on [t_k, t_{k+1}], v_{m-1} after the
   *  last breakpoint (mpcf_plfs_create). Persistence landscapes and
   *  silhouettes are of this kind. Every operation is exact for these
   *  functions too: on each piece between merged breakpoints f - g is
   *  linear; L1 splits a piece where it changes sign, L2 and the inner
   *  product use the closed forms of integrals of products of linear
   *  functions, general p integrates |a + b t|^p in closed form (in the
   *  scaled power sum, without cancellation), L-infinity takes the largest
   *  |f - g| at the ends of the pieces. A window cuts pieces by linear
   *  interpolation. Both backends compute them (CPU and CUDA: the same
   *  closed forms; the GPU's fused multiply-adds may round differently,
   *  within the accuracy stated above, and its results are the same bits
   *  for every block shape and GPU count). */
  MPCF_PIECEWISE_LINEAR = 2
} mpcf_function_type;

/** Creates a collection of piecewise linear functions (PLFs): the arguments,
 *  checks and messages of mpcf_pcfs_create. */
MPCF_API mpcf_status mpcf_plfs_create(mpcf_dtype dtype, uint64_t n,
                                      const uint64_t* offsets,
                                      const void* times, const void* values,
                                      mpcf_pcfs** out);

/** Like mpcf_plfs_create, with interleaved points t0, v0, t1, v1, ... */
MPCF_API mpcf_status mpcf_plfs_create_interleaved(mpcf_dtype dtype, uint64_t n,
                                                  const uint64_t* offsets,
                                                  const void* points,
                                                  mpcf_pcfs** out);

/** The kind of functions X holds. */
MPCF_API mpcf_status mpcf_pcfs_function_type(const mpcf_pcfs* X,
                                             mpcf_function_type* out);

/** Gives the collection a tensor shape of `ndim` dimensions (1 <= ndim <= 32)
 *  whose product is the function count (row-major: function index = flat
 *  index). Dimensions may be 0 only when the count is 0. */
MPCF_API mpcf_status mpcf_pcfs_reshape(mpcf_pcfs* pcfs, size_t ndim,
                                       const uint64_t* shape);

/** Number of functions. */
MPCF_API mpcf_status mpcf_pcfs_count(const mpcf_pcfs* pcfs, uint64_t* out);

/** Total number of breakpoints over all functions. */
MPCF_API mpcf_status mpcf_pcfs_total_breakpoints(const mpcf_pcfs* pcfs,
                                                 uint64_t* out);

MPCF_API mpcf_status mpcf_pcfs_dtype(const mpcf_pcfs* pcfs, mpcf_dtype* out);

/** Number of dimensions of the shape. */
MPCF_API mpcf_status mpcf_pcfs_ndim(const mpcf_pcfs* pcfs, size_t* out);

/** Copies the shape into shape[0 .. ndim-1]; capacity must be >= ndim. */
MPCF_API mpcf_status mpcf_pcfs_shape(const mpcf_pcfs* pcfs, uint64_t* shape,
                                     size_t capacity);

/** A view of the functions begin .. end-1 of X (flat, row-major indices,
 *  0 <= begin <= end <= count(X)) as a collection of its own: end - begin
 *  functions, shape {end - begin}, X's dtype. Nothing is copied: the view
 *  shares X's breakpoints (O(1) time and memory) and keeps them alive by
 *  itself, so X may be destroyed first; release the view with
 *  mpcf_pcfs_destroy. It computes like any collection, and every result
 *  over it has the bits of the same functions computed within X (so a tile
 *  of a distance matrix is an mpcf_cdist of two views, a tile on the
 *  diagonal an mpcf_pdist of one). A view of a view is allowed; its indices
 *  count within that view. begin == end gives an empty collection.
 *  Errors (MPCF_ERROR_INVALID_ARGUMENT): X or out NULL, begin > end,
 *  end > count(X). */
MPCF_API mpcf_status mpcf_pcfs_slice(const mpcf_pcfs* X, uint64_t begin,
                                     uint64_t end, mpcf_pcfs** out);

/** Makes the last axis of X's shape a component axis (on != 0), or a plain
 *  axis again (on == 0). With it, a collection of shape (*S, K) holds
 *  prod(S) objects of K functions each (object o is the functions
 *  o * K .. o * K + K - 1), and every computation (pdist, l2_kernel, cdist,
 *  knn, kernel_matvec, the streams, lp_distance, l2_inner_product and
 *  lp_norm, and their size functions) runs over the objects: the Lp
 *  distance of objects x and y is (sum_k d_p(x_k, y_k)^p)^(1/p) (the sum of
 *  the component distances for p = 1, their maximum for p = INFINITY), the
 *  inner product sum_k <x_k, y_k>, each computed in one pass (one scaled
 *  power sum over all components' pieces, so nothing overflows where the
 *  result is representable). Results are shaped by S: cdist gives
 *  (*S_X, *S_Y); indices of knn and the rows of V count objects. Two
 *  collections in one call must both have a component axis or neither, with
 *  the same K (MPCF_ERROR_INVALID_ARGUMENT naming both otherwise). Needs
 *  ndim >= 2 and K >= 1. mpcf_pcfs_reshape and mpcf_pcfs_slice give
 *  collections without it. Like reshape, it must not race with other uses
 *  of the handle. Both backends compute objects of several functions (on
 *  the GPU a thread walks a pair's K components one after the other, the
 *  same order as the CPU). */
MPCF_API mpcf_status mpcf_pcfs_set_component_axis(mpcf_pcfs* X, int on);

/** K (functions per object) when X has a component axis, else 1. */
MPCF_API mpcf_status mpcf_pcfs_components(const mpcf_pcfs* X, uint64_t* out);

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

/** Settings for a computation. Every call that takes options accepts NULL
 *  for the defaults: backend AUTO, all hardware threads, the whole real line,
 *  automatic blocks, all CUDA devices, memory fraction 0.8. */
typedef struct mpcf_options mpcf_options;

MPCF_API mpcf_status mpcf_options_create(mpcf_options** out);
MPCF_API void mpcf_options_destroy(mpcf_options* options);

MPCF_API mpcf_status mpcf_options_set_backend(mpcf_options* options,
                                              mpcf_backend backend);

/** CPU worker threads; 0 means the number of hardware threads. */
MPCF_API mpcf_status mpcf_options_set_threads(mpcf_options* options,
                                              int threads);

/** Integrate over [a, b) instead of the whole line. a < b, neither NaN;
 *  a may be -INFINITY and b +INFINITY. For float32 collections a and b are
 *  rounded to float32 when a computation starts; a window that is then empty
 *  (e.g. [1, 1 + 1e-12)) makes that computation fail with
 *  MPCF_ERROR_INVALID_ARGUMENT. */
MPCF_API mpcf_status mpcf_options_set_window(mpcf_options* options, double a,
                                             double b);

/** Block decomposition hints (tuning and tests; results never depend on
 *  them). split_hint: how many blocks the output budget is split into
 *  (0 = automatic). min_block_side: floor on a block's side (0 = automatic
 *  on GPUs, none on the CPU). max_block_elements: output elements of the
 *  largest block (0 = automatic, from free GPU memory on CUDA). */
MPCF_API mpcf_status mpcf_options_set_block_hints(mpcf_options* options,
                                                  uint64_t split_hint,
                                                  uint64_t min_block_side,
                                                  uint64_t max_block_elements);

/** Backend AUTO uses CUDA only when the problem has at least this many merge
 *  steps (default 2e8). */
MPCF_API mpcf_status mpcf_options_set_cuda_threshold(mpcf_options* options,
                                                     double merge_steps);

/** CUDA devices to use (count 0 = all). Ids must be distinct and exist at
 *  computation time. */
MPCF_API mpcf_status mpcf_options_set_devices(mpcf_options* options,
                                              size_t count,
                                              const int* device_ids);

/** Fraction of free GPU memory the engine may use, in (0, 1]. */
MPCF_API mpcf_status mpcf_options_set_memory_fraction(mpcf_options* options,
                                                      double fraction);

/* ------------------------------------------------------------------ */
/* Result sizes                                                         */
/* ------------------------------------------------------------------ */

/** MPCF_OK when p is an exponent the Lp distances take (p >= 1, or
 *  INFINITY), else MPCF_ERROR_INVALID_ARGUMENT with the message every
 *  computation gives for it: the rule on p, for callers that check their
 *  arguments before they have collections (a command line, a computation
 *  split over a cluster). */
MPCF_API mpcf_status mpcf_exponent_check(double p);

/** Elements needed for pdist of X in the given layout. */
MPCF_API mpcf_status mpcf_pdist_size(const mpcf_pcfs* X, mpcf_layout layout,
                                     uint64_t* out);

/** Elements needed for l2_kernel of X (DENSE or PACKED_LOWER). */
MPCF_API mpcf_status mpcf_l2_kernel_size(const mpcf_pcfs* X,
                                         mpcf_layout layout, uint64_t* out);

/** Elements needed for cdist of X and Y: count(X) * count(Y). */
MPCF_API mpcf_status mpcf_cdist_size(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                     uint64_t* out);

/* ------------------------------------------------------------------ */
/* Tasks                                                                */
/* ------------------------------------------------------------------ */

/** A computation running in the background. What an *_start call borrows
 *  and what it takes (the same for every *_start call):
 *  - borrowed, and must stay valid until the task has finished (or has been
 *    destroyed): the output buffers (out, distances, indices) and, for the
 *    streams, the callback's `user` pointer;
 *  - taken at the start call, so the caller may free or change them as soon
 *    as it returns: the collections (the task keeps their data alive: the
 *    handles may be destroyed), the options (read once), the scalars, and
 *    the mat-vec's V (copied and checked at the start: the task uses the
 *    values V held then).
 *  If a task ends with any status but MPCF_OK, the output buffer holds no
 *  partial result: every element the task was to write is set to NaN. */
typedef struct mpcf_task mpcf_task;

/** done and total are in pairs (output entries) computed. Either pointer may
 *  be NULL. */
MPCF_API mpcf_status mpcf_task_progress(const mpcf_task* task, uint64_t* done,
                                        uint64_t* total);

/** Waits until the task finishes or timeout_seconds pass (negative: wait
 *  for ever; 0: just poll). Returns MPCF_RUNNING if the task is still
 *  running, else the task's final status (and, on failure, sets this
 *  thread's error message to the task's message). Called from a callback of
 *  the task itself (it would wait for its own caller), it returns
 *  MPCF_ERROR_INVALID_ARGUMENT at once, whatever the timeout. */
MPCF_API mpcf_status mpcf_task_wait(mpcf_task* task, double timeout_seconds);

/** Asks the task to stop; returns at once. The task then ends with
 *  MPCF_ERROR_CANCELLED unless it had already finished. */
MPCF_API mpcf_status mpcf_task_cancel(mpcf_task* task);

/** MPCF_RUNNING while running, else the final status (like mpcf_task_wait
 *  with timeout 0). NULL gives MPCF_ERROR_INVALID_ARGUMENT. */
MPCF_API mpcf_status mpcf_task_status(const mpcf_task* task);

/** Cancels the task if it still runs, waits for it and frees it. NULL is a
 *  no-op. Called from a callback of the task itself (it would wait for its
 *  own caller), it destroys nothing: the task runs on, this thread's error
 *  message says so, and the task is to be destroyed after mpcf_task_wait
 *  returns (return non-zero from the callback to cancel it). */
MPCF_API void mpcf_task_destroy(mpcf_task* task);

/** Why a computation runs on its backend (mpcf_task_info.reason). */
typedef enum mpcf_backend_reason {
  /** The options asked for this backend (MPCF_BACKEND_CPU or _CUDA). */
  MPCF_REASON_REQUESTED = 0,
  /** Backend AUTO, and the problem has at least the CUDA threshold of merge
   *  steps (mpcf_options_set_cuda_threshold): CUDA. */
  MPCF_REASON_AUTO_THRESHOLD_MET = 1,
  /** Backend AUTO, and the problem has fewer merge steps than the CUDA
   *  threshold: the CPU. */
  MPCF_REASON_AUTO_BELOW_THRESHOLD = 2,
  /** Backend AUTO, and this libmpcf was built without CUDA: the CPU. */
  MPCF_REASON_AUTO_NO_CUDA_BUILD = 3,
  /** Backend AUTO, and no usable CUDA device (or driver) was found: the
   *  CPU. */
  MPCF_REASON_AUTO_NO_DEVICE = 4,
  /** Backend AUTO (or CUDA, for the calls computed on the calling thread),
   *  and this computation runs on the CPU only: mpcf_lp_distance,
   *  mpcf_l2_inner_product and mpcf_lp_norm. */
  MPCF_REASON_CPU_ONLY = 5
} mpcf_backend_reason;

/** Entries of mpcf_task_info.devices. */
#define MPCF_TASK_INFO_MAX_DEVICES 64

/** What a computation runs on and how much work it is: mpcf_task_info_get
 *  (a task) and mpcf_last_task_info (a synchronous call). The figures are
 *  the library's own: backend AUTO compares these merge_steps with the CUDA
 *  threshold.
 *
 *  Versioned like mpcf_error_detail: fields are only ever added at the
 *  end; the caller sets struct_size to sizeof(mpcf_task_info). */
typedef struct mpcf_task_info {
  /** In: the size of the caller's struct. Out: the bytes the library wrote. */
  uint32_t struct_size;
  /** MPCF_BACKEND_CPU or MPCF_BACKEND_CUDA (never AUTO: the choice made). */
  mpcf_backend backend;
  /** Why that backend (AUTO's reasons, or the one requested). */
  mpcf_backend_reason reason;
  /** CPU: the worker threads the computation was given (the options'
   *  threads, or the hardware threads for 0; a problem of fewer blocks than
   *  threads leaves some idle); 1 for mpcf_lp_distance,
   *  mpcf_l2_inner_product and mpcf_lp_norm, which compute on the calling
   *  thread. CUDA: 0. */
  int32_t threads;
  /** The work in merge steps (DESIGN's unit): the sum over the pairs
   *  computed of m_i + m_j, the breakpoints of both (for objects of several
   *  components, of all their components). pdist of n functions with B
   *  breakpoints in all: (n - 1) B; l2_kernel: (n + 1) B (the diagonal
   *  counts); cdist, knn with Y, mat-vec with Y: count(Y) B_X + count(X)
   *  B_Y; knn and mat-vec without Y as pdist and l2_kernel; mpcf_lp_norm:
   *  B + count(X) functions (each against the zero function, 1 breakpoint);
   *  mpcf_lp_distance and mpcf_l2_inner_product: m_i + m_j. The value does
   *  not depend on the window. */
  double merge_steps;
  /** Wall-clock seconds from the start call until the computation ended
   *  (while a task runs: until now). */
  double seconds;
  /** CUDA: the devices computing (one host worker thread each); 0 on the
   *  CPU. */
  int32_t device_count;
  /** Their ids in order (the options' list, or 0 .. device_count - 1 for
   *  all); the first MPCF_TASK_INFO_MAX_DEVICES of them, the other entries
   *  -1. */
  int32_t devices[MPCF_TASK_INFO_MAX_DEVICES];
} mpcf_task_info;

/** Describes the computation of `task` in *info: the first
 *  min(info->struct_size, sizeof(mpcf_task_info)) bytes, and sets
 *  info->struct_size to that count (as mpcf_last_error_detail does). Valid
 *  at once after the *_start call (the backend is chosen there), while the
 *  task runs and after it ended, whatever its status.
 *  Errors (MPCF_ERROR_INVALID_ARGUMENT): task or info NULL, struct_size < 8
 *  (struct_size and backend, which every version has). */
MPCF_API mpcf_status mpcf_task_info_get(const mpcf_task* task, mpcf_task_info* info);

/** Like mpcf_task_info_get, for the last synchronous computation on this
 *  thread: mpcf_pdist, mpcf_l2_kernel, mpcf_cdist, mpcf_knn, mpcf_knn_both,
 *  mpcf_kernel_matvec, mpcf_pdist_stream, mpcf_cdist_stream,
 *  mpcf_lp_distance, mpcf_l2_inner_product, mpcf_lp_norm, once it has
 *  computed (succeeded, or failed while computing). Each of these calls
 *  forgets the previous record when it begins, so after one that failed
 *  its argument checks there is none: MPCF_ERROR_INVALID_ARGUMENT, as when
 *  no such call has run on this thread. Other errors as
 *  mpcf_task_info_get. */
MPCF_API mpcf_status mpcf_last_task_info(mpcf_task_info* info);

/* ------------------------------------------------------------------ */
/* Matrix operations                                                    */
/* ------------------------------------------------------------------ */

/* Every operation exists as *_start (returns a task) and as a synchronous
 * call (start + wait). `out` is a caller buffer of `capacity` elements of
 * X's dtype; the size functions above say how many are needed. */

/** Lp distances between all pairs of X (p >= 1, p = INFINITY for the
 *  supremum distance). DENSE, CONDENSED or PACKED_LOWER. */
MPCF_API mpcf_status mpcf_pdist_start(const mpcf_pcfs* X, double p,
                                      mpcf_layout layout, void* out,
                                      uint64_t capacity,
                                      const mpcf_options* options,
                                      mpcf_task** task);
MPCF_API mpcf_status mpcf_pdist(const mpcf_pcfs* X, double p,
                                mpcf_layout layout, void* out,
                                uint64_t capacity,
                                const mpcf_options* options);

/** L2 inner products of all pairs of X, diagonal included. DENSE or
 *  PACKED_LOWER. */
MPCF_API mpcf_status mpcf_l2_kernel_start(const mpcf_pcfs* X,
                                          mpcf_layout layout, void* out,
                                          uint64_t capacity,
                                          const mpcf_options* options,
                                          mpcf_task** task);
MPCF_API mpcf_status mpcf_l2_kernel(const mpcf_pcfs* X, mpcf_layout layout,
                                    void* out, uint64_t capacity,
                                    const mpcf_options* options);

/** metric(X_i, Y_j) for every i, j, written row-major with shape
 *  (*X.shape, *Y.shape): entry i * count(Y) + j. X and Y must share a dtype. */
MPCF_API mpcf_status mpcf_cdist_start(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                      mpcf_metric metric, double p, void* out,
                                      uint64_t capacity,
                                      const mpcf_options* options,
                                      mpcf_task** task);
MPCF_API mpcf_status mpcf_cdist(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                mpcf_metric metric, double p, void* out,
                                uint64_t capacity,
                                const mpcf_options* options);

/* ------------------------------------------------------------------ */
/* Reductions over the pair plane (no n x n output)                     */
/* ------------------------------------------------------------------ */

/* These compute the same pairs as pdist and cdist, block by block, and
 * reduce each block as soon as it is computed (on the GPU, on the device):
 * their memory is O(n k) or O(n r), never O(n^2). They are tasks like the
 * matrix operations (progress in pairs, wait, cancel), use the same options
 * (backend, threads, devices, window, block hints) and give the same bits
 * for any thread count, block shape, stream or GPU count on one backend. On
 * any status but MPCF_OK, every distance or value they were to write is
 * NaN and every index -1. */

/** The checks of mpcf_knn_start that need no collection, in its order:
 *  p (as mpcf_exponent_check), then 1 <= k <= the candidates of a row,
 *  x_count - 1 without Y (y_count < 0) or y_count with Y. The counts are
 *  of objects when the collections have a component axis (component_axis
 *  != 0, which the message then names). MPCF_OK, or
 *  MPCF_ERROR_INVALID_ARGUMENT with the message mpcf_knn_start gives. For
 *  callers that split one knn into many (each part's k is checked against
 *  the part) and check the whole first. */
MPCF_API mpcf_status mpcf_knn_check(uint64_t x_count, int64_t y_count, int component_axis,
                                    double p, uint64_t k);

/** Elements of each output of mpcf_knn: count(X) * k. */
MPCF_API mpcf_status mpcf_knn_size(const mpcf_pcfs* X, uint64_t k, uint64_t* out);

/** The k nearest neighbours, in Lp distance (p >= 1 or INFINITY), of every
 *  function of X: among the functions of Y, or, with Y NULL, among the other
 *  functions of X (a function is never its own neighbour; an equal function
 *  at distance 0 is). Row i of `distances` (X's dtype) and `indices`, both
 *  row-major count(X) x k, holds the neighbours of X[i] ascending by
 *  (distance, index): equal distances go to the smaller index, +inf
 *  distances come last. 1 <= k <= count(X) - 1 (Y NULL) or count(Y);
 *  capacity (elements of each output) >= count(X) * k. */
MPCF_API mpcf_status mpcf_knn_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p,
                                    uint64_t k, void* distances, int64_t* indices,
                                    uint64_t capacity, const mpcf_options* options,
                                    mpcf_task** task);
MPCF_API mpcf_status mpcf_knn(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, uint64_t k,
                              void* distances, int64_t* indices, uint64_t capacity,
                              const mpcf_options* options);

/** mpcf_knn both ways, from one pass over the pairs of X and Y (each
 *  distance computed once): the k_x nearest functions of Y of every
 *  function of X, into x_distances / x_indices (count(X) x k_x, indices into
 *  Y), and the k_y nearest functions of X of every function of Y, into
 *  y_distances / y_indices (count(Y) x k_y, indices into X); each list as
 *  mpcf_knn(X, Y, p, k_x) and mpcf_knn(Y, X, p, k_y) give it, bit for bit.
 *  What a split knn needs of a tile off the diagonal (e.g. mpcf.dask). Y is
 *  required; 1 <= k_x <= count(Y), 1 <= k_y <= count(X); x_capacity >=
 *  count(X) * k_x, y_capacity >= count(Y) * k_y (elements of each of that
 *  side's outputs). The checks, in this order: X, Y and their pairing, p,
 *  k_x, k_y, then the outputs. */
MPCF_API mpcf_status mpcf_knn_both_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p,
                                         uint64_t k_x, uint64_t k_y, void* x_distances,
                                         int64_t* x_indices, uint64_t x_capacity,
                                         void* y_distances, int64_t* y_indices,
                                         uint64_t y_capacity, const mpcf_options* options,
                                         mpcf_task** task);
MPCF_API mpcf_status mpcf_knn_both(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p,
                                   uint64_t k_x, uint64_t k_y, void* x_distances,
                                   int64_t* x_indices, uint64_t x_capacity, void* y_distances,
                                   int64_t* y_indices, uint64_t y_capacity,
                                   const mpcf_options* options);

/** Merges two lists of nearest neighbours of the same `rows` rows, found
 *  among disjoint candidate sets (e.g. two tiles of a split knn), into the
 *  k first of their union, in the order of every knn result: ascending by
 *  distance (NaN after +inf), equal distances by index. So merging the
 *  parts of a split knn, in any order and grouping, gives the bits of the
 *  whole knn. a: a_distances (dtype) and a_indices, row-major rows x a_k;
 *  b: rows x b_k; each row in that order with indices >= 0, as mpcf_knn,
 *  mpcf_knn_both and this function give them (a_k or b_k may be 0, its
 *  buffers then NULL). 1 <= k <= a_k + b_k; distances (dtype) and indices:
 *  rows x k, capacity (elements of each) >= rows * k, overlapping neither
 *  input nor each other. The checks, in this order: dtype, k, the buffers,
 *  then every row of a and of b (the first entry out of order or with a
 *  negative index is named); nothing is written unless all pass. Runs on
 *  the calling thread, O(rows k). */
MPCF_API mpcf_status mpcf_knn_merge(mpcf_dtype dtype, uint64_t rows, uint64_t k,
                                    const void* a_distances, const int64_t* a_indices,
                                    uint64_t a_k, const void* b_distances,
                                    const int64_t* b_indices, uint64_t b_k, void* distances,
                                    int64_t* indices, uint64_t capacity);

/** The kernel of a kernel matrix-vector product. */
typedef enum mpcf_kernel {
  /** The L2 inner product, integral of f * g (p and scale are ignored). */
  MPCF_KERNEL_L2 = 0,
  /** exp(-d_p(f, g)^2 / (2 scale^2)). */
  MPCF_KERNEL_GAUSSIAN = 1,
  /** exp(-d_p(f, g) / scale). */
  MPCF_KERNEL_LAPLACIAN = 2
} mpcf_kernel;

/** Elements of the output of mpcf_kernel_matvec: count(X) * r. */
MPCF_API mpcf_status mpcf_kernel_matvec_size(const mpcf_pcfs* X, uint64_t r, uint64_t* out);

/** out = K V with K_ij = kernel(X_i, Y_j) (Y NULL: Y = X, the diagonal
 *  included: K_ii = <f, f> for L2, 1 for the others). V: row-major
 *  count(Y) x r of X's dtype, finite, `v_elements` = count(Y) * r; out:
 *  row-major count(X) x r, capacity >= count(X) * r. p >= 1 or INFINITY for
 *  the distance of the Gaussian and Laplacian kernels; scale > 0 and
 *  finite for them. Each out[i][c] is the value of sum_j K_ij V[j][c]
 *  summed exactly after rounding each term to a fixed grid, so the order of
 *  the terms cannot change a bit; infinite terms follow IEEE rules (inf * 0
 *  and inf - inf give NaN). The grid of out[i][c] is set from a bound B on
 *  its finite terms, computed before the sum (Gaussian, Laplacian: max_j
 *  |V[j][c]|; L2: ||X_i||_inf max_j L1b(Y_j) |V[j][c]| + L1b(X_i) max_j
 *  ||Y_j||_inf |V[j][c]|, with L1b the L1 norm over the bounded pieces, on
 *  the window, a PLF's own: the largest |f| at the ends of its pieces in
 *  the window and the integral of |f| over its bounded pieces; for objects of several components the largest
 *  sup norm and the sum of the L1b of the components). Before its final rounding to the dtype, out[i][c] is within
 *  n^4 2^-150 B of the exact sum (n = count(Y)): relative to B, not to the
 *  terms themselves, so a few huge |V[j][c]| (even where K_ij is 0) make
 *  the small terms of that column's sums lose precision, or vanish. When
 *  4 n B exceeds the double range (about 1e308), the call fails with
 *  MPCF_ERROR_INVALID_ARGUMENT naming the output: scale V or the data
 *  down. The L2 bounds' norms are kept in X's (and Y's) handle, 16 bytes
 *  per object until the handle is destroyed, for its next L2 mat-vec on
 *  the same window and components (an iterative solver's repeated calls
 *  skip computing them). */
MPCF_API mpcf_status mpcf_kernel_matvec_start(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                              mpcf_kernel kernel, double p, double scale,
                                              const void* V, uint64_t v_elements, uint64_t r,
                                              void* out, uint64_t capacity,
                                              const mpcf_options* options, mpcf_task** task);
MPCF_API mpcf_status mpcf_kernel_matvec(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                        mpcf_kernel kernel, double p, double scale,
                                        const void* V, uint64_t v_elements, uint64_t r,
                                        void* out, uint64_t capacity,
                                        const mpcf_options* options);

/** A finished block of a streamed result: the rectangle rows
 *  [row_begin, row_end) x columns [col_begin, col_end) of the full result,
 *  its values row-major ((row_end - row_begin) x (col_end - col_begin)
 *  elements of `dtype`), valid only during the callback. More fields may be
 *  added at the end in later versions. */
typedef struct mpcf_block {
  uint64_t row_begin;
  uint64_t row_end;
  uint64_t col_begin;
  uint64_t col_end;
  mpcf_dtype dtype;
  const void* values;
} mpcf_block;

/** Receives blocks one at a time, from a worker thread of the library (not
 *  necessarily the same one each time). Returns 0 to go on; any other value
 *  cancels the computation, which then ends with MPCF_ERROR_CANCELLED.
 *  The block and its values stay valid and unchanged until the callback
 *  returns, whatever it calls. A callback may call any function of this
 *  header, among them another computation (a nested stream, pdist, knn...,
 *  which then runs while this worker waits for it) and mpcf_task_progress,
 *  mpcf_task_status and mpcf_task_cancel of its own task, except two on its
 *  own task: mpcf_task_wait (MPCF_ERROR_INVALID_ARGUMENT) and
 *  mpcf_task_destroy (refused, see there). The same two are refused on the
 *  task from the callbacks of a stream started inside one of its callbacks,
 *  on whatever thread they run (the task waits for that stream). */
typedef int (*mpcf_block_callback)(const mpcf_block* block, void* user);

/** pdist (p >= 1 or INFINITY) of X handed to `callback` block by block
 *  instead of being stored: every block has row_begin >= col_begin and
 *  holds d(X_i, X_j) for all its (i, j) (a block on the diagonal is square
 *  and holds both triangles and the zero diagonal); the blocks and their
 *  transposes cover the n x n matrix exactly once. */
MPCF_API mpcf_status mpcf_pdist_stream_start(const mpcf_pcfs* X, double p,
                                             mpcf_block_callback callback, void* user,
                                             const mpcf_options* options, mpcf_task** task);
MPCF_API mpcf_status mpcf_pdist_stream(const mpcf_pcfs* X, double p,
                                       mpcf_block_callback callback, void* user,
                                       const mpcf_options* options);

/** cdist of X and Y (flat indices) handed to `callback` block by block:
 *  the blocks cover the count(X) x count(Y) matrix exactly once. */
MPCF_API mpcf_status mpcf_cdist_stream_start(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                             mpcf_metric metric, double p,
                                             mpcf_block_callback callback, void* user,
                                             const mpcf_options* options, mpcf_task** task);
MPCF_API mpcf_status mpcf_cdist_stream(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                       mpcf_metric metric, double p,
                                       mpcf_block_callback callback, void* user,
                                       const mpcf_options* options);

/* ------------------------------------------------------------------ */
/* Single functions and pairs (computed on the calling thread, CPU)      */
/* ------------------------------------------------------------------ */

/** Lp distance between X[i] and Y[j] (X and Y may be the same handle).
 *  Computed in the collections' dtype, returned as double. Only the window
 *  of the options is used. */
MPCF_API mpcf_status mpcf_lp_distance(const mpcf_pcfs* X, uint64_t i,
                                      const mpcf_pcfs* Y, uint64_t j, double p,
                                      const mpcf_options* options,
                                      double* out);

/** L2 inner product of X[i] and Y[j], as double. */
MPCF_API mpcf_status mpcf_l2_inner_product(const mpcf_pcfs* X, uint64_t i,
                                           const mpcf_pcfs* Y, uint64_t j,
                                           const mpcf_options* options,
                                           double* out);

/** Lp norm of every function of X (the distance to the zero function),
 *  written to out[0 .. count(X)-1] in X's dtype. */
MPCF_API mpcf_status mpcf_lp_norm(const mpcf_pcfs* X, double p, void* out,
                                  uint64_t capacity,
                                  const mpcf_options* options);

/* ------------------------------------------------------------------ */
/* Persistence barcodes, pointwise operations, read-out and files       */
/* ------------------------------------------------------------------ */

/* These calls build new collections or read existing ones on the calling
 * thread (CPU). Every collection they return is in canonical form: no
 * breakpoint repeats the value before it (the value before the first
 * breakpoint being 0), no value is -0, and the zero function is the single
 * breakpoint (0, 0). */

/** What mpcf_pcfs_from_barcodes computes from each barcode. */
typedef enum mpcf_barcode_summary {
  /** beta(t) = number of bars with birth <= t < death. */
  MPCF_BETTI_CURVE = 0,
  /** Stable rank for the standard contour: the number of bars with
   *  death - birth > t, for t >= 0 (0 for t < 0). */
  MPCF_STABLE_RANK = 1,
  /** Accumulated persistence function (Biscio and Moller, J. Comput. Graph.
   *  Statist. 28(3), 2019, arXiv:1611.00630): the sum of the lengths
   *  death - birth of the bars whose meanage (birth + death) / 2 is <= t
   *  (each value the exact sum of those lengths, rounded once). */
  MPCF_ACCUMULATED_PERSISTENCE = 2
} mpcf_barcode_summary;

/** Turns n persistence barcodes into n PCFs (shape {n}).
 *  offsets: n + 1 non-decreasing entries, offsets[0] == 0; barcode i has bars
 *           offsets[i] .. offsets[i+1]-1 (none is allowed: an empty barcode).
 *  bars:    2 * offsets[n] doubles, (birth, death) of each bar in turn; may
 *           be NULL when offsets[n] == 0. Each bar needs a finite birth and
 *           birth <= death <= +INFINITY.
 *  dtype:   of the result; bar ends (Betti curves), lengths (stable ranks) or
 *           meanages and lengths (accumulated persistence) are computed in
 *           double and rounded once to the dtype, breakpoints meeting after
 *           rounding collapse into the later value.
 *  Breakpoints are exact: a Betti curve changes at bar ends, a stable rank at
 *  0 and at bar lengths, an accumulated persistence function at meanages.
 *  An infinite bar gives a constant tail (Betti curve, stable rank); in the
 *  accumulated persistence function its meanage is +inf, so it never counts.
 *  A bar of length 0 contributes nothing. A barcode with no bar of positive
 *  length gives the zero function, the breakpoint (0, 0).
 *  A bad bar (NaN, infinite birth, death < birth, a value that overflows the
 *  dtype) fails with MPCF_ERROR_INVALID_ARGUMENT and a message naming the
 *  barcode and the bar ("barcode 2, bar 5 (birth 3, death 1): ..."). */
MPCF_API mpcf_status mpcf_pcfs_from_barcodes(mpcf_barcode_summary kind,
                                             mpcf_dtype dtype, uint64_t n,
                                             const uint64_t* offsets,
                                             const double* bars,
                                             mpcf_pcfs** out);

/** Persistence landscapes of n barcodes (CSR barcodes and dtype as for
 *  mpcf_pcfs_from_barcodes): lambda_1 .. lambda_k of each, a collection of
 *  piecewise linear functions of shape {n, k} (function i * k + j - 1 is
 *  lambda_j of barcode i), where lambda_j(t) is the j-th largest of the
 *  tents max(0, min(t - birth, death - t)) of the bars. The breakpoints are
 *  exact: the births, deaths and peaks of the tents and the crossings of
 *  their edges, computed in double and rounded once to the dtype; a lambda_j
 *  that is zero everywhere is the zero function (the breakpoint (0, 0)).
 *  k >= 1, and k may exceed the bars: the levels beyond them are zero
 *  functions, so the shape is {n, k} for every k. What limits k is the
 *  result's size: each of its n * k functions takes at least one breakpoint
 *  and one offset, 2 * sizeof(dtype) + 8 bytes (24 in float64, 16 in
 *  float32). A k for which that passes 64 bits (k > floor(floor((2^64 - 1)
 *  / bytes) / n)) is MPCF_ERROR_INVALID_ARGUMENT; one for which it passes
 *  the machine's physical memory MPCF_ERROR_OUT_OF_MEMORY; both messages
 *  name k and its largest value, and both come before anything is
 *  allocated. With n = 0 any k gives the empty collection of shape {0, k}.
 *  A bar with death = +INFINITY is an error naming barcode and bar,
 *  unless clip is finite: then such a death is clip (and a bar with
 *  birth >= clip contributes nothing); clip = INFINITY means none. */
MPCF_API mpcf_status mpcf_plfs_landscapes(mpcf_dtype dtype, uint64_t n,
                                          const uint64_t* offsets,
                                          const double* bars, uint64_t k,
                                          double clip, mpcf_pcfs** out);

/** Power-weighted silhouettes of n barcodes, shape {n}: the sum over bars
 *  of w_j tent_j(t) divided by the sum of the w_j, w_j = (death - birth)^q,
 *  q >= 0 finite; breakpoints at the births, peaks and deaths; a barcode
 *  without bars of positive length gives the zero function. Infinite bars
 *  and clip as for mpcf_plfs_landscapes. */
MPCF_API mpcf_status mpcf_plfs_silhouettes(mpcf_dtype dtype, uint64_t n,
                                           const uint64_t* offsets,
                                           const double* bars, double q,
                                           double clip, mpcf_pcfs** out);

/** How mpcf_pcfs_reduce combines functions. */
typedef enum mpcf_reduction {
  MPCF_REDUCE_SUM = 0,
  MPCF_REDUCE_MEAN = 1
} mpcf_reduction;

/** The `axis` of mpcf_pcfs_reduce that reduces the whole collection. */
#define MPCF_ALL_AXES ((size_t)-1)

/** The pointwise sum or mean of the functions of X, along one axis of its
 *  shape or (axis = MPCF_ALL_AXES) over all of them.
 *  The result has X's dtype and X's shape without the axis (shape {1} when
 *  nothing is left, e.g. for MPCF_ALL_AXES). Its breakpoints are the union of
 *  the inputs'; at every t its value is computed from the inputs' values at
 *  t alone, in double precision, as a balanced pairwise sum in index order
 *  (divided by the count for a mean), rounded once to the dtype.
 *  The sum of no function is the zero function; the mean of none is
 *  MPCF_ERROR_INVALID_ARGUMENT, and so is a result that overflows the dtype.
 *  (An empty collection's other dimensions can be anything: a result of
 *  more than 2^64 functions, or a sum whose functions take more bytes than
 *  64 bits count (at least 2 * sizeof(dtype) + 8 each, as in
 *  mpcf_plfs_landscapes), is MPCF_ERROR_INVALID_ARGUMENT, one larger than
 *  the machine's physical memory MPCF_ERROR_OUT_OF_MEMORY, both before
 *  anything is allocated.) */
MPCF_API mpcf_status mpcf_pcfs_reduce(const mpcf_pcfs* X, mpcf_reduction op,
                                      size_t axis, mpcf_pcfs** out);

/** The pointwise linear combination a * X[i] + b * Y[i] of every pair of
 *  functions. X and Y have the same number of functions, or one of them has
 *  exactly one, which is then combined with every function of the other
 *  (none when the other is empty: the result is then empty). The result has
 *  the shape of the other one (X's when the counts are equal), the
 *  dtype of both (MPCF_ERROR_DTYPE_MISMATCH otherwise) and the union of their
 *  breakpoints; values are computed in double and rounded once. a and b must
 *  be finite. */
MPCF_API mpcf_status mpcf_pcfs_combine(double a, const mpcf_pcfs* X, double b,
                                       const mpcf_pcfs* Y, mpcf_pcfs** out);

/** Evaluates every function of X at the nt times t[0 .. nt-1]:
 *  out[i * nt + j] = X[i](t[j]) in X's dtype, for count(X) * nt elements
 *  (capacity). The times need no order and may be +-INFINITY (X[i](-inf) = 0,
 *  X[i](+inf) = its last value), not NaN. For float32 collections the times
 *  are compared in double, so they need not be float32 numbers. */
MPCF_API mpcf_status mpcf_pcfs_evaluate(const mpcf_pcfs* X, const double* t,
                                        uint64_t nt, void* out,
                                        uint64_t capacity);

/** Copies the CSR offsets of the collection (count + 1 entries, offsets[0]
 *  == 0, offsets[count] == mpcf_pcfs_total_breakpoints) into offsets;
 *  capacity must be >= count + 1. */
MPCF_API mpcf_status mpcf_pcfs_offsets(const mpcf_pcfs* pcfs,
                                       uint64_t* offsets, uint64_t capacity);

/** Copies the breakpoints of all functions, in order, into times and values
 *  (each mpcf_pcfs_total_breakpoints elements of the collection's dtype;
 *  capacity is the number of elements of each). Function i owns entries
 *  offsets[i] .. offsets[i+1]-1 (mpcf_pcfs_offsets). */
MPCF_API mpcf_status mpcf_pcfs_breakpoints(const mpcf_pcfs* pcfs, void* times,
                                           void* values, uint64_t capacity);

/* Files. A collection, with its shape, dtype and function type, is saved
 * in the mpcf file format (capi/README.md, "Persistence barcodes, means
 * and files", states it byte by byte): little-endian; the magic bytes
 * 89 4D 50 43 46 0D 0A 1A, uint32 version, uint32 dtype (1 float32,
 * 2 float64), then in version 1 (collections of PCFs, as every libmpcf
 * wrote and reads them) uint64 ndim, in version 2 (collections of PLFs)
 * uint32 ndim and uint32 function type (1 piecewise constant, 2 piecewise
 * linear); then uint64 n, uint64 total breakpoints, ndim uint64 shape,
 * n + 1 uint64 offsets, total times, total values, and the uint64 FNV-1a
 * hash of all the bytes before it. Both versions load. The component axis
 * (mpcf_pcfs_set_component_axis) is not saved. Loading checks every field, the
 * length and the hash (MPCF_ERROR_INVALID_ARGUMENT, naming the problem:
 * "not an mpcf PCF file", "truncated", "corrupt", an unreadable file), then
 * validates the PCFs exactly as mpcf_pcfs_create does (MPCF_ERROR_INVALID_PCF,
 * naming function and breakpoint). */

/** Writes the collection to the file `path` (UTF-8 / native encoding).
 *
 *  What is written: symbolic links are followed, and the file they end at is
 *  written (a dangling link creates its target; the links stay links). The
 *  path (or the end of its links) must be a regular file or not exist: a
 *  directory, FIFO, socket or device is refused (MPCF_ERROR_INVALID_ARGUMENT,
 *  naming the path and what it is) and left as it is, and so is a file the
 *  caller may not write, as open() for writing would decide (a read-only
 *  file is not replaced, except by root). A file that is replaced keeps its
 *  permission bits and, where the caller may set them (root), its owner and
 *  group; ACLs and extended attributes are not copied, and its other hard
 *  links keep the old content. A new file gets 0666 less the umask. Any
 *  name the file system accepts can be written (nothing is added to the
 *  final name).
 *
 *  How: the bytes go into a new file in the same directory, which is
 *  synced to disk (fsync) and then renamed over the path; the directory is
 *  synced before MPCF_OK is returned. So after MPCF_OK the file is complete
 *  and durable; on failure, or if the process or the machine stops at any
 *  point, the path holds either the old file or the new one, complete,
 *  never a mix, never a partial file. On Linux the new file is unnamed
 *  (O_TMPFILE) until it is complete, so a save that is killed leaves
 *  nothing behind (except, killed in the instant between naming it and the
 *  rename, a complete ".mpcf-save-XXXXXX"). On file systems without O_TMPFILE
 *  the new file is written as ".mpcf-save-XXXXXX" (X: letters and digits) in
 *  the target's directory; one left by a killed save never blocks a save,
 *  and a later save to that directory removes it once it is stale: no
 *  process holds it (each save keeps an flock on its temporary until it
 *  ends) and it has not been written to for an hour. Such a file is never
 *  removed while its save runs.
 *
 *  Errors: MPCF_ERROR_INVALID_ARGUMENT, a sentence that names the path and
 *  the file the problem is about (the path, the end of its links, its
 *  directory or the temporary file) with the system's reason; the path is
 *  then as it was, with one exception, which the message states: the
 *  directory failed to sync after the rename (the new file is in place but
 *  may not survive a crash).
 *
 *  Testing hooks (read at each call; for tests of interrupted saves): with
 *  the environment variable MPCF_DEBUG_SAVE_STOP set to a value other than
 *  "" or "0", the call writes the first half of the file's bytes to its
 *  temporary file and then kills its own process with SIGKILL. With
 *  MPCF_DEBUG_SAVE_NAMED so set, it writes a named temporary, as on a file
 *  system without O_TMPFILE. */
MPCF_API mpcf_status mpcf_pcfs_save(const mpcf_pcfs* pcfs, const char* path);

/** Reads a collection written by mpcf_pcfs_save (or mpcf_pcfs_serialize).
 *  A regular file is checked against its length before it is read. Anything
 *  else that can be opened for reading (a pipe, FIFO or device) is read as a
 *  stream: its header is read and checked first (so /dev/zero is "not an
 *  mpcf PCF file" at once), then exactly the length the header declares,
 *  and nothing after it (what follows, if anything, is not checked); a
 *  stream that ends sooner is "truncated: it ended early". Memory grows as
 *  the bytes arrive, so a header that declares more than is sent costs
 *  only what was sent. Opening a FIFO waits for a writer, as for any reader.
 *  A directory is refused. */
MPCF_API mpcf_status mpcf_pcfs_load(const char* path, mpcf_pcfs** out);

/** Bytes of the file mpcf_pcfs_save would write. */
MPCF_API mpcf_status mpcf_pcfs_serialized_size(const mpcf_pcfs* pcfs,
                                               uint64_t* out);

/** Writes the file's bytes into the caller's buffer `out` of `capacity`
 *  bytes (at least mpcf_pcfs_serialized_size). */
MPCF_API mpcf_status mpcf_pcfs_serialize(const mpcf_pcfs* pcfs, void* out,
                                         uint64_t capacity);

/** Reads a collection from `size` bytes at `data` (borrowed, only read during
 *  the call), with the checks of mpcf_pcfs_load. */
MPCF_API mpcf_status mpcf_pcfs_deserialize(const void* data, uint64_t size,
                                           mpcf_pcfs** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPCF_MPCF_H */
