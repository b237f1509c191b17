// .Call entry points of tda.cpp (barcodes, pointwise operations, read-out
// and files) and handles.cpp (the last error's detail, the last
// computation's account), registered in glue.cpp.
#ifndef RMPCF_TDA_H
#define RMPCF_TDA_H

#include <Rinternals.h>

extern "C" {
SEXP rmpcf_from_barcodes(SEXP kind, SEXP offsets, SEXP bars);
SEXP rmpcf_landscapes(SEXP offsets, SEXP bars, SEXP k, SEXP clip);
SEXP rmpcf_silhouettes(SEXP offsets, SEXP bars, SEXP q, SEXP clip);
SEXP rmpcf_reduce(SEXP ptr, SEXP op);
SEXP rmpcf_combine(SEXP xptr, SEXP yptr, SEXP a, SEXP b);
SEXP rmpcf_evaluate(SEXP ptr, SEXP t);
SEXP rmpcf_breakpoints(SEXP ptr);
SEXP rmpcf_save(SEXP ptr, SEXP path);
SEXP rmpcf_load(SEXP path);
// handles.cpp: c(function, breakpoint, barcode, bar) of the last error (NA: none).
SEXP rmpcf_last_error_detail();
// handles.cpp: libmpcf's account of the last computation (NULL: none yet).
SEXP rmpcf_last_task_info();
}

#endif
