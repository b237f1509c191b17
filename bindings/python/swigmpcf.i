/* SWIG interface of the Python package mpcf: the low-level module
 * mpcf.swigmpcf generated straight from the public header mpcf/mpcf.h.
 * The pure-Python layer (src/mpcf/*.py) turns NumPy arrays into these calls.
 *
 * Conventions of the wrapped functions:
 *  - data buffers (times, values, points, offsets, shapes, device ids and the
 *    caller's output buffer) are passed as integer addresses (a NumPy array's
 *    arr.ctypes.data); None is NULL. The Python layer owns the arrays and
 *    keeps them alive for as long as the C side may read or write them;
 *  - scalar outputs (uint64_t* out, double* out, ...) and handles created by
 *    *_create / *_start are returned after the status: [status, value];
 *  - handles (mpcf_pcfs, mpcf_options, mpcf_task) are owned Python objects;
 *    dropping the last reference calls the matching mpcf_*_destroy, which for
 *    a task cancels it and waits for it;
 *  - the module is built with -threads: the GIL is released during every C
 *    call, so a call that waits (mpcf_task_wait) never blocks other threads.
 */
%module(package="mpcf") swigmpcf

%{
#include "mpcf/mpcf.h"
%}

/* mpcf_export.h is not processed by SWIG (#include is ignored); the export
 * attribute means nothing to the wrapper. */
#define MPCF_API

%include <stdint.i>

/* ---- raw data buffers as integer addresses ---------------------------- */
%define MPCF_ADDRESS_ARG(TYPE_AND_NAME)
%typemap(in) TYPE_AND_NAME {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (!PyLong_Check($input)) {
    PyErr_SetString(PyExc_TypeError,
                    "in method '$symname', argument $argnum ('$1_name') must be an integer address or None");
    SWIG_fail;
  } else {
    void* address_ = PyLong_AsVoidPtr($input);
    if (address_ == NULL && PyErr_Occurred()) SWIG_fail;
    $1 = ($1_ltype)address_;
  }
}
%enddef

MPCF_ADDRESS_ARG(const void* times)
MPCF_ADDRESS_ARG(const void* values)
MPCF_ADDRESS_ARG(const void* points)
MPCF_ADDRESS_ARG(void* out)
MPCF_ADDRESS_ARG(const uint64_t* offsets)
MPCF_ADDRESS_ARG(const uint64_t* shape)
MPCF_ADDRESS_ARG(uint64_t* shape)
MPCF_ADDRESS_ARG(const int* device_ids)
MPCF_ADDRESS_ARG(void* distances)
MPCF_ADDRESS_ARG(int64_t* indices)
MPCF_ADDRESS_ARG(void* x_distances)
MPCF_ADDRESS_ARG(int64_t* x_indices)
MPCF_ADDRESS_ARG(void* y_distances)
MPCF_ADDRESS_ARG(int64_t* y_indices)
MPCF_ADDRESS_ARG(const void* V)
MPCF_ADDRESS_ARG(const void* a_distances)
MPCF_ADDRESS_ARG(const int64_t* a_indices)
MPCF_ADDRESS_ARG(const void* b_distances)
MPCF_ADDRESS_ARG(const int64_t* b_indices)
/* mpcf_cuda_register_host / _unregister_host: the buffer's address. */
MPCF_ADDRESS_ARG(void* p)

/* ---- [tda] barcodes, pointwise operations, read-out and files ---------- */
/* Buffers of mpcf_pcfs_from_barcodes, _evaluate, _offsets, _breakpoints and
 * _deserialize, passed as addresses like the ones above. (`void* out` and
 * `const uint64_t* offsets` need nothing new; `const char* path` is below.) */
MPCF_ADDRESS_ARG(const double* bars)
MPCF_ADDRESS_ARG(const double* t)
MPCF_ADDRESS_ARG(uint64_t* offsets)
MPCF_ADDRESS_ARG(void* times)
MPCF_ADDRESS_ARG(void* values)
MPCF_ADDRESS_ARG(const void* data)
/* The path of mpcf_pcfs_save and _load: str, bytes or os.PathLike, encoded
 * as the file system expects (os.fsencode), so any name Python can open
 * works (also names that are not UTF-8). */
%typemap(in) const char* path (PyObject* encoded_ = NULL) {
  if (!PyUnicode_FSConverter($input, &encoded_)) SWIG_fail;
  $1 = PyBytes_AsString(encoded_);
  if ($1 == NULL) SWIG_fail;
}
%typemap(freearg) const char* path {
  Py_XDECREF(encoded_$argnum);
}
/* SWIG skips a #define holding a cast; this gives the module the value. */
%constant size_t MPCF_ALL_AXES = MPCF_ALL_AXES;
/* ---- [tda] end ------------------------------------------------------- */

/* ---- scalar outputs, returned after the status ------------------------- */
%define MPCF_SCALAR_OUTPUT(TYPE, NAME, TO_PYTHON)
%typemap(in, numinputs=0) TYPE* NAME (TYPE temp_ = 0) {
  $1 = &temp_;
}
%typemap(argout) TYPE* NAME {
  %append_output(TO_PYTHON(*$1));
}
%enddef

MPCF_SCALAR_OUTPUT(uint64_t, out, PyLong_FromUnsignedLongLong)
MPCF_SCALAR_OUTPUT(uint64_t, done, PyLong_FromUnsignedLongLong)
MPCF_SCALAR_OUTPUT(uint64_t, total, PyLong_FromUnsignedLongLong)
MPCF_SCALAR_OUTPUT(size_t, out, PyLong_FromSize_t)
MPCF_SCALAR_OUTPUT(double, out, PyFloat_FromDouble)
MPCF_SCALAR_OUTPUT(mpcf_dtype, out, PyLong_FromLong)
MPCF_SCALAR_OUTPUT(mpcf_function_type, out, PyLong_FromLong)

/* ---- versioned structs, returned as dicts after the status ------------ */
/* mpcf_last_error_detail(detail) -> [status, {status, function_index,
 * breakpoint_index, barcode_index, bar_index}] (-1: not applicable);
 * mpcf_task_info_get(task, info) and mpcf_last_task_info(info) -> [status,
 * {backend, reason, threads, merge_steps, seconds, devices}] (devices: a
 * tuple of ids). struct_size is set to this header's sizeof. */
%typemap(in, numinputs=0) mpcf_error_detail* detail (mpcf_error_detail temp_) {
  memset(&temp_, 0, sizeof temp_);
  temp_.struct_size = (uint32_t)sizeof temp_;
  $1 = &temp_;
}
%typemap(argout) mpcf_error_detail* detail {
  %append_output(Py_BuildValue("{s:i,s:L,s:L,s:L,s:L}", "status", (int)$1->status,
                               "function_index", (long long)$1->function_index,
                               "breakpoint_index", (long long)$1->breakpoint_index,
                               "barcode_index", (long long)$1->barcode_index,
                               "bar_index", (long long)$1->bar_index));
}
%typemap(in, numinputs=0) mpcf_task_info* info (mpcf_task_info temp_) {
  memset(&temp_, 0, sizeof temp_);
  temp_.struct_size = (uint32_t)sizeof temp_;
  $1 = &temp_;
}
%typemap(argout) mpcf_task_info* info {
  int count_ = $1->device_count < MPCF_TASK_INFO_MAX_DEVICES ? $1->device_count
                                                               : MPCF_TASK_INFO_MAX_DEVICES;
  if (count_ < 0) count_ = 0;
  PyObject* devices_ = PyTuple_New(count_);
  if (devices_ == NULL) SWIG_fail;
  for (int k_ = 0; k_ < count_; ++k_) PyTuple_SET_ITEM(devices_, k_, PyLong_FromLong($1->devices[k_]));
  %append_output(Py_BuildValue("{s:i,s:i,s:i,s:d,s:d,s:N}", "backend", (int)$1->backend,
                               "reason", (int)$1->reason, "threads", (int)$1->threads,
                               "merge_steps", $1->merge_steps, "seconds", $1->seconds,
                               "devices", devices_));
}
%ignore mpcf_error_detail;
%ignore mpcf_task_info;

/* ---- handles: owned proxy objects ------------------------------------ */
/* The structs are opaque in C; SWIG only needs to know they exist to give
 * them a Python class whose destructor calls mpcf_*_destroy. */
%nodefaultctor mpcf_pcfs;
%nodefaultctor mpcf_options;
%nodefaultctor mpcf_task;
struct mpcf_pcfs {};
struct mpcf_options {};
struct mpcf_task {};
%extend mpcf_pcfs { ~mpcf_pcfs() { mpcf_pcfs_destroy($self); } }
%extend mpcf_options { ~mpcf_options() { mpcf_options_destroy($self); } }
/* Cancels a running task and waits for it before freeing it. */
%extend mpcf_task { ~mpcf_task() { mpcf_task_destroy($self); } }

%define MPCF_HANDLE_OUTPUT(TYPE, NAME)
%typemap(in, numinputs=0) TYPE** NAME (TYPE* temp_ = NULL) {
  $1 = &temp_;
}
%typemap(argout) TYPE** NAME {
  if (*$1 != NULL) {
    %append_output(SWIG_NewPointerObj(SWIG_as_voidptr(*$1), $*1_descriptor, SWIG_POINTER_OWN));
  } else {
    Py_INCREF(Py_None);
    %append_output(Py_None);
  }
}
%enddef

MPCF_HANDLE_OUTPUT(mpcf_pcfs, out)
MPCF_HANDLE_OUTPUT(mpcf_options, out)
MPCF_HANDLE_OUTPUT(mpcf_task, task)

/* The block streams call a C function pointer from worker threads; Python
 * uses pdist/cdist with out= (a NumPy array or np.memmap) instead. */
%ignore mpcf_block;
%ignore mpcf_pdist_stream;
%ignore mpcf_pdist_stream_start;
%ignore mpcf_cdist_stream;
%ignore mpcf_cdist_stream_start;

/* Destruction goes through the owned handles only (no double free). */
%ignore mpcf_pcfs_destroy;
%ignore mpcf_options_destroy;
%ignore mpcf_task_destroy;

%include "mpcf/mpcf.h"
