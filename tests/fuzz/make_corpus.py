#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the fuzz targets (and the reproducers
of known defects) into tests/fuzz/corpus/.

    python3 tests/fuzz/make_corpus.py [CORPUS_DIR]

fuzz_capi inputs are little programs in the byte format that
tests/fuzz/fuzz_capi.c decodes (documented in tests/fuzz/README.md); the
helpers below encode it, so a reproducer can be written as readable Python:

    seed("pdist-l1", create(0, [[(0, 3), (1, 0)], [(0, 1), (2, 0)]]) + pdist(0, p=1))

fuzz_csv inputs are CSV files. Files written here start with "seed-",
"fixed-" or "limit-", or sit in regressions/; running the script again
rewrites them (and nothing else; remove a regression's old file by hand when
it moves).
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- opcodes
OP_CREATE, OP_RESHAPE, OP_DESTROY, OP_OPTIONS, OP_PAIR = 0, 1, 2, 3, 4
OP_PDIST, OP_L2_KERNEL, OP_CDIST, OP_LP_NORM, OP_QUERIES, OP_OPTIONS_RESET = 5, 6, 7, 8, 9, 10
OP_CONCURRENT, OP_KNN, OP_STREAM, OP_MATVEC, OP_TDA = 11, 12, 13, 14, 15
OP_KNN_BOTH, OP_KNN_MERGE, OP_GPU_MEMORY = 16, 17, 18

FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]

# value codes 128 + k of fuzz_capi.c's special_value()
SPECIAL = {"nan": 26, "inf": 27, "-inf": 28}
RAW_F64 = 29


def val(x):
    """A value code: quarters in [-16, 16) directly, NaN/inf by name,
    anything else as the raw bytes of a double."""
    if isinstance(x, float) and math.isnan(x):
        return bytes([128 + SPECIAL["nan"]])
    if x == math.inf:
        return bytes([128 + SPECIAL["inf"]])
    if x == -math.inf:
        return bytes([128 + SPECIAL["-inf"]])
    if -16 <= x < 16 and float(x * 4).is_integer() and not (x == 0 and math.copysign(1, x) < 0):
        return bytes([int(x * 4) + 64])
    return bytes([128 + RAW_F64]) + struct.pack("<d", x)


GAP_ABSOLUTE = 232  # the next time is a value code, not a gap


def create(slot, fns, dtype="f64", interleaved=False, null=None, bad_offsets=None,
           bad_data=None, raw_dtype=None, plf=False):
    """CREATE: fns is a list of functions, each a list of (t, v). Every time
    is encoded exactly (as an absolute time). null: 0 offsets, 1 times,
    2 values, 3 out, 4 times and values. bad_offsets: (kind, arg) with kind
    0 offsets[0] = 1 + arg % 3, 1 swap offsets[i], offsets[i+1] with
    i = 1 + arg % (n - 1), 2 function arg % n gets m = 0. bad_data: (kind,
    breakpoint) with kind 0 t = NaN, 1 t = inf, 2 v = NaN, 3 v = -inf,
    4 t = previous t, 5 swap with the previous t."""
    n = len(fns)
    assert n <= 8 and all(1 <= len(f) <= 16 for f in fns)
    if raw_dtype is not None:
        dcode = 0x80 | raw_dtype
    else:
        dcode = 1 if dtype == "f32" else 0
    flags = (1 if interleaved else 0) | (2 if null is not None else 0) | \
            (4 if bad_offsets is not None else 0) | (8 if bad_data is not None else 0) | (32 if plf else 0)
    out = bytes([OP_CREATE, slot, dcode, n, flags])
    if null is not None:
        out += bytes([null])
    if bad_offsets is not None:
        out += bytes(bad_offsets)
    if bad_data is not None:
        out += bytes(bad_data)
    out += bytes([len(f) - 1 for f in fns])
    emptied = bad_offsets[1] % n if bad_offsets is not None and bad_offsets[0] == 2 and n else None
    for i, f in enumerate(fns):
        if i == emptied:
            continue
        out += val(f[0][0])
        for t, _ in f[1:]:
            out += bytes([GAP_ABSOLUTE]) + val(t)
        for _, v in f:
            out += val(v)
    return out


def reshape(slot, dims, null_shape=False):
    """RESHAPE with explicit dimensions (each 0..8, or 'max' = UINT64_MAX,
    '2^32', '2^63')."""
    codes = []
    for d in dims:
        if d == "max":
            codes.append(240)
        elif d == "2^32":
            codes.append(241)
        elif d == "2^63":
            codes.append(242)
        else:
            assert 0 <= d <= 8
            codes.append(d)
    return bytes([OP_RESHAPE, slot, len(dims), 255 if null_shape else 128] + codes)


def destroy(slot):
    return bytes([OP_DESTROY, slot])


def options_reset():
    return bytes([OP_OPTIONS_RESET])


BACKEND = {"cpu": 0, "auto": 2, "cuda": 3, "bad": 4}
THREADS = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, -1: 5, "int_min": 6, 4097: 7, "int_max": 8, 4096: 9}
WINDOW_NAMED = {-math.inf: 0, math.inf: 1}


def window_end(x):
    if isinstance(x, float) and math.isnan(x):
        return bytes([8])
    if x in WINDOW_NAMED:
        return bytes([WINDOW_NAMED[x]])
    if x == 1.0 + 1e-12:
        return bytes([9])
    return bytes([15]) + struct.pack("<d", x)


def hint(h):
    return bytes([14]) + struct.pack("<Q", h)


MEMFRAC = {0.8: 0, 1.0: 1, 0.5: 2, 0.0: 4, -0.5: 5, 1.5: 6, "nan": 7}


def options(backend=None, threads=None, window=None, hints=None, memory_fraction=None,
            cuda_threshold=None, devices=None, null_handle=False):
    mask = 0
    args = b""
    if backend is not None:
        mask |= 1
        args += bytes([BACKEND[backend]])
    if threads is not None:
        mask |= 2
        args += bytes([THREADS[threads]])
    if window is not None:
        mask |= 4
        args += window_end(window[0]) + window_end(window[1])
    if hints is not None:
        mask |= 8
        args += b"".join(hint(h) for h in hints)
    if memory_fraction is not None:
        mask |= 16
        args += bytes([MEMFRAC[memory_fraction]])
    if cuda_threshold is not None:
        mask |= 32
        args += bytes([cuda_threshold])
    if devices is not None:
        mask |= 64
        args += bytes([devices])
    if null_handle:
        mask |= 128
    return bytes([OP_OPTIONS, mask]) + args


P_NAMED = [(1.0, 0), (2.0, 1), (math.inf, 2), (1.5, 3), (3.0, 4), (0.5, 5), (-math.inf, 8),
           (0.0, 9), (-1.0, 10), (1e39, 11), (1e300, 12), (40.0, 13), (400.0, 14), (2000.0, 15)]


def pcode(p):
    if isinstance(p, float) and math.isnan(p):
        return bytes([7])
    for x, c in P_NAMED:
        if p == x:
            return bytes([c])
    return bytes([20]) + struct.pack("<d", p)


LAYOUT = {"dense": 0, "condensed": 1, "packed": 2, "bad": 240}
CAP = {"exact": 0, "plus1": 1, "plus3": 2, "minus1": 3, "zero": 4, "null": 5, "null0": 6}
EXEC = {"sync": 0, "wait": 1, "poll": 2, "cancel": 3, "destroy": 4, "null_task": 5, "drop_input": 6}
SLOT_NULL = 4


def _run(cap, mode, polls):
    out = bytes([CAP[cap], EXEC[mode]])
    if mode == "poll":
        out += bytes(polls or [0, 1, 2])
    return out


def pdist(x, p=1.0, layout="condensed", use_options=True, cap="exact", mode="sync", polls=None):
    return bytes([OP_PDIST, x]) + pcode(p) + bytes([LAYOUT[layout], 0 if use_options else 1]) + \
        _run(cap, mode, polls)


def l2_kernel(x, layout="dense", use_options=True, cap="exact", mode="sync", polls=None):
    return bytes([OP_L2_KERNEL, x, LAYOUT[layout], 0 if use_options else 1]) + _run(cap, mode, polls)


def cdist(x, y, metric="distance", p=1.0, use_options=True, cap="exact", mode="sync", polls=None):
    m = {"distance": 0, "kernel": 1, "bad": 241}[metric]
    return bytes([OP_CDIST, x, y, m]) + pcode(p) + bytes([0 if use_options else 1]) + \
        _run(cap, mode, polls)


def pair(x, i, y, j, p=1.0, use_options=True, null_out=False, kernel=False):
    flags = (0 if use_options else 1) | (2 if null_out else 0) | (4 if kernel else 0)
    return bytes([OP_PAIR, x, i, y, j]) + pcode(p) + bytes([flags])


def lp_norm(x, p=1.0, use_options=True, cap="exact"):
    c = {"exact": 0, "plus2": 1, "minus1": 2, "null": 3, "null0": 4}[cap]
    return bytes([OP_LP_NORM, x]) + pcode(p) + bytes([0 if use_options else 1, c])


def concurrent(x, p=1.0):
    return bytes([OP_CONCURRENT, x]) + pcode(p)


SELF = 4  # the Y argument of a reduction: X itself


def knn(x, y=SELF, p=1.0, k=1, use_options=True, cap="exact", mode="sync"):
    c = {"exact": 0, "plus2": 1, "minus1": 2, "zero": 3, "null_distances": 4, "null_indices": 5}[cap]
    kc = {"max": 240, "2^32": 241}.get(k, k)
    return bytes([OP_KNN, x, y]) + pcode(p) + bytes([kc, 0 if use_options else 1, c, EXEC[mode]])


def knn_both(x, y, p=1.0, kx=1, ky=1, use_options=True, cap="exact", mode="sync"):
    c = {"exact": 0, "plus": 1, "x_minus1": 2, "y_minus1": 3, "null_x_distances": 4,
         "null_x_indices": 5, "null_y_distances": 6, "null_y_indices": 7}[cap]
    return bytes([OP_KNN_BOTH, x, y]) + pcode(p) + bytes([kx, ky, 0 if use_options else 1, c, EXEC[mode]])


# KNN_MERGE's codes (fuzz_capi.c, op_knn_merge)
MERGE_DISTANCE = [(0.0, 0), (0.5, 1), (1.0, 2), (2.0, 4), (3.0, 5), (math.inf, 7), (1e300, 9), (-1.0, 10),
                  (1e-45, 11), (-math.inf, 12), (1.0 + 2.0 ** -52, 13)]
MERGE_HUGE_ROWS = {"2^32": 240, "2^62": 241, "2^63": 242, "max": 243}
MERGE_HUGE_K = {"max": 240, "2^63": 241}  # a_k, b_k; k also takes "sum" and "sum+1"
MERGE_NULL = ["a_distances", "a_indices", "b_distances", "b_indices", "distances", "indices"]
MERGE_OVERLAP = ["distances@a_distances", "indices@a_indices", "distances@b_distances", "indices@b_indices",
                 "indices@distances", "distances@a_indices"]
MERGE_BAD = ["swap", "index-1", "index_min", "-inf", "nan"]


def _merge_distance(d):
    if isinstance(d, float) and math.isnan(d):
        return bytes([8])
    if d == 0 and math.copysign(1, d) < 0:
        return bytes([6])
    for x, c in MERGE_DISTANCE:
        if d == x:
            return bytes([c])
    return bytes([15]) + struct.pack("<d", d)


def _merge_index(j):
    if 0 <= j < 8:
        return bytes([j])
    if 10 <= j < 24:
        return bytes([j + 232])
    return bytes([{2 ** 63 - 1: 240, 2 ** 40: 241}[j]])


def knn_merge(a, b, k, rows=None, a_k=None, b_k=None, dtype="f64", raw_dtype=None, cap="exact", null=(),
              overlap=None, shift=0, bad=None):
    """KNN_MERGE of the lists a and b, each a list of rows of (distance,
    index) (fuzz_capi sorts every row by the header's order, so give them in
    any order). rows, a_k, b_k default to the lists' shape; a huge count is
    a name (rows: "2^32", "2^62", "2^63", "max", with one row given; a_k,
    b_k: "max", "2^63", with empty rows given). k: an int (at most a_k + b_k
    + 1; mod 10 when a list is huge), "max", "2^63", "sum" (a_k + b_k) or
    "sum+1". cap: exact, plus2, minus1, zero. null: names of MERGE_NULL
    passed as NULL. overlap: a name of MERGE_OVERLAP (the output placed
    `shift` words into that buffer). bad: (kind of MERGE_BAD, "a" or "b",
    entry): spoils that entry after the sort."""
    a_k = len(a[0]) if a_k is None else a_k
    b_k = len(b[0]) if b_k is None else b_k
    rows = len(a) if rows is None else rows
    assert len(a) == len(b) and all(len(r) == (a_k if isinstance(a_k, int) else 0) for r in a) and \
        all(len(r) == (b_k if isinstance(b_k, int) else 0) for r in b)
    assert len(a) == (rows if isinstance(rows, int) else 1)
    if raw_dtype is not None:
        dcode = 0x80 | raw_dtype
    else:
        dcode = 1 if dtype == "f32" else 0
    rc = rows if isinstance(rows, int) else MERGE_HUGE_ROWS[rows]
    lks = [x if isinstance(x, int) else MERGE_HUGE_K[x] for x in (a_k, b_k)]
    if isinstance(k, int):
        small = isinstance(a_k, int) and isinstance(b_k, int)
        assert 0 <= k <= (a_k + b_k + 1 if small else 9)
        kc = k
    else:
        kc = {"max": 240, "2^63": 241, "sum": 242, "sum+1": 243}[k]
    c = {"exact": 0, "plus2": 1, "minus1": 2, "zero": 3}[cap]
    flags = sum(1 << MERGE_NULL.index(n) for n in null) | (64 if overlap else 0) | (128 if bad else 0)
    out = bytes([OP_KNN_MERGE, dcode, rc, lks[0], lks[1], kc, c, flags])
    if overlap:
        out += bytes([MERGE_OVERLAP.index(overlap) + 6 * shift])
    if bad:
        kind, which, entry = bad
        out += bytes([MERGE_BAD.index(kind), (1 if which == "b" else 0) | (entry << 1)])
    for lst in (a, b):
        for row in lst:
            for d, j in row:
                out += _merge_distance(d) + _merge_index(j)
    return out


def gpu_memory(sub, arg=0):
    """GPU_MEMORY: sub "cached" (arg: device code, mod 6 of -1, 0, 1,
    INT32_MIN, INT32_MAX, the device count; + 0x80 for a NULL out),
    "limit" (arg mod 6 of 0, 1, 4096, 2^20, 2^30, 2^64 - 1), "null_limit",
    "release", "register" / "unregister" (arg mod 3 of NULL, the static
    buffer, a part of it; + 0x80 for 0 bytes when registering)."""
    code = {"cached": 0, "limit": 1, "null_limit": 2, "release": 3, "register": 4,
            "unregister": 5}[sub]
    return bytes([OP_GPU_MEMORY, code, arg])


def stream(x, y=SELF, metric="distance", p=1.0, use_options=True, null_callback=False, cancel_at=0,
           mode="sync"):
    m = {"distance": 0, "kernel": 1, "bad": 240}[metric]
    how = (1 if null_callback else 0) | (cancel_at << 1)
    return bytes([OP_STREAM, x, y, m]) + pcode(p) + bytes([0 if use_options else 1, how, EXEC[mode]])


SCALES = {1.0: 0, 0.5: 1, 10.0: 2, 1e-3: 3, 0.0: 4, -1.0: 5, "nan": 6, "inf": 7, 1e300: 8, 1e-300: 9}


def matvec(x, y=SELF, kernel="l2", p=1.0, scale=1.0, r=1, V=(), v_mode="exact", use_options=True,
           cap="exact", mode="sync"):
    kc = {"l2": 0, "gaussian": 1, "laplacian": 2, "bad": 241}[kernel]
    vm = {"exact": 0, "plus1": 1, "minus1": 2, "null": 3}[v_mode]
    c = {"exact": 0, "plus2": 1, "minus1": 2, "null": 3}[cap]
    return bytes([OP_MATVEC, x, y, kc]) + pcode(p) + bytes([SCALES[scale], r, vm, 0 if use_options else 1, c,
                                                            EXEC[mode]]) + b"".join(val(v) for v in V)


def queries(x, y, layout="dense", status=0, null_out=False):
    return bytes([OP_QUERIES, x, y, LAYOUT[layout], status & 0xFF, 1 if null_out else 0])


# ---------------------------------------------------------------- TDA (opcode 15)
(TDA_FROM_BARCODES, TDA_EVALUATE, TDA_READOUT, TDA_REDUCE, TDA_COMBINE, TDA_ROUNDTRIP, TDA_SLICE,
 TDA_COMPONENTS, TDA_LANDSCAPES) = range(9)
SUMMARY = {"betti": 0, "stable_rank": 1, "accumulated": 2}
BAD_ENUM = {"3": 240, "-1": 241, "1000": 242, "int_min": 243}  # enum_code(): 3 becomes 4 for the summary


def _death(b, d):
    """The death code of a bar with birth b (see tda_from_barcodes)."""
    if d == math.inf:
        return bytes([200])
    if isinstance(d, float) and math.isnan(d):
        return bytes([201])
    if d == b:
        return bytes([204])
    q = (d - b) * 4
    if 0 <= q < 200 and float(q).is_integer():
        return bytes([int(q)])
    return bytes([203]) + val(d)


def from_barcodes(dst, kind, barcodes, dtype="f64", raw_dtype=None, null=(), bad_offsets=None):
    """FROM_BARCODES: barcodes is a list of lists of (birth, death).
    kind: betti, stable_rank, accumulated or a BAD_ENUM name. null: any of
    'out', 'offsets', 'bars'. bad_offsets: 'first' (offsets[0] = 1) or
    'decrease'."""
    assert len(barcodes) <= 4 and all(len(b) <= 4 for b in barcodes)
    kc = BAD_ENUM[kind] if kind in BAD_ENUM else SUMMARY[kind]
    dcode = (0x80 | raw_dtype) if raw_dtype is not None else (1 if dtype == "f32" else 0)
    flags = (1 if "out" in null else 0) | (2 if "offsets" in null else 0) | (4 if "bars" in null else 0) | \
        {None: 0, "first": 8, "decrease": 16}[bad_offsets]
    out = bytes([OP_TDA, TDA_FROM_BARCODES, dst, kc, dcode, len(barcodes), flags])
    out += bytes([len(b) for b in barcodes])
    for bc in barcodes:
        for b, d in bc:
            out += val(b) + _death(b, d)
    return out


T_NEG_INF, T_POS_INF, T_NAN = 192, 193, 194


def evaluate(x, times, null_t=False, null_out=False, cap="exact"):
    """EVALUATE: times are numbers (value codes) or ('bp', k, how) for the
    breakpoint k of x, how 0 as is, 1 just below, 2 just above."""
    c = {"exact": 0, "plus2": 1, "minus1": 2, "zero": 3}[cap]
    out = bytes([OP_TDA, TDA_EVALUATE, x, len(times), (1 if null_t else 0) | (2 if null_out else 0), c])
    for t in times:
        if isinstance(t, tuple):
            out += bytes([t[2] * 64 + t[1]])
        elif t == -math.inf:
            out += bytes([T_NEG_INF])
        elif t == math.inf:
            out += bytes([T_POS_INF])
        elif isinstance(t, float) and math.isnan(t):
            out += bytes([T_NAN])
        else:
            out += bytes([195]) + val(t)
    return out


def readout(x, null=(), cap="exact"):
    c = {"exact": 0, "plus2": 1, "minus1": 2, "zero": 3}[cap]
    flags = (1 if "offsets" in null else 0) | (2 if "times" in null else 0) | (4 if "values" in null else 0)
    return bytes([OP_TDA, TDA_READOUT, x, flags, c])


ALL_AXES = 33


def reduce_(x, op="sum", axis=ALL_AXES, dst=3, null_out=False):
    """REDUCE: op sum, mean or a BAD_ENUM name; axis 0..32, ALL_AXES,
    'size_max-1' or 'big' (1000)."""
    oc = BAD_ENUM[op] if op in BAD_ENUM else {"sum": 0, "mean": 1}[op]
    ac = {"size_max-1": 241, "big": 242}.get(axis, axis)
    return bytes([OP_TDA, TDA_REDUCE, x, oc, ac, 1 if null_out else 0, dst])


def combine(a, x, b, y, dst=3, null_out=False):
    return bytes([OP_TDA, TDA_COMBINE]) + val(a) + bytes([x]) + val(b) + bytes([y, 1 if null_out else 0, dst])


def roundtrip(x, null_size=False, short=False, null_buffer=False, null_handle=False):
    flags = (1 if null_size else 0) | (2 if short else 0) | (4 if null_buffer else 0) | (8 if null_handle else 0)
    return bytes([OP_TDA, TDA_ROUNDTRIP, x, flags])


def slice_(x, begin, end, dst=3, null_out=False):
    """SLICE: begin/end a small index (taken mod n + 3) or "max" (UINT64_MAX)."""
    code = lambda v: 255 if v == "max" else v
    return bytes([OP_TDA, TDA_SLICE, x, code(begin), code(end), 1 if null_out else 0, dst])


def components(x, on=1):
    """COMPONENTS: mpcf_pcfs_set_component_axis(x, on); on is a signed byte."""
    return bytes([OP_TDA, TDA_COMPONENTS, x, on & 0xFF])


CLIP = {math.inf: 0, 10: 1, 0: 2, -5: 3, 1e6: 4, "nan": 5, -math.inf: 6, 1e39: 7}
SIL_Q = {0: 0, 1: 1, 2: 2, 0.5: 3, 3: 4, -1: 5, "nan": 6, math.inf: 7, 1e300: 8}


def _bars(barcodes):
    out = bytes([len(b) for b in barcodes])
    for bc in barcodes:
        for b, d in bc:
            out += val(b) + _death(b, d)
    return out


def _clip(clip):
    if clip in CLIP:
        return bytes([CLIP[clip]])
    return bytes([8]) + val(clip)


HUGE_K = {"2^64-1": 0, "2^63": 1, "limit+1": 2, "limit": 3, "2^50": 4, "2^45": 5, "2^62": 6}


def landscapes(dst, barcodes, k=2, clip=math.inf, dtype="f64", raw_dtype=None, null=(), huge=None):
    """LANDSCAPES (mpcf_plfs_landscapes): k 0..6, or huge a HUGE_K key (flag
    8; "limit": the largest k whose result's bytes fit 64 bits); clip a CLIP
    key or a number."""
    dcode = (0x80 | raw_dtype) if raw_dtype is not None else (1 if dtype == "f32" else 0)
    flags = (1 if "out" in null else 0) | (2 if "offsets" in null else 0) | (4 if "bars" in null else 0)
    if huge is not None:
        flags |= 8
        k = HUGE_K[huge]
    return bytes([OP_TDA, TDA_LANDSCAPES, dst, 0, dcode, len(barcodes), flags]) + _bars(barcodes) + \
        bytes([k]) + _clip(clip)


def silhouettes(dst, barcodes, q=1, clip=math.inf, dtype="f64", null=()):
    """LANDSCAPES with bit 0 set: mpcf_plfs_silhouettes, q a SIL_Q key."""
    dcode = 1 if dtype == "f32" else 0
    flags = (1 if "out" in null else 0) | (2 if "offsets" in null else 0) | (4 if "bars" in null else 0)
    return bytes([OP_TDA, TDA_LANDSCAPES, dst, 1, dcode, len(barcodes), flags]) + _bars(barcodes) + \
        bytes([SIL_Q[q]]) + _clip(clip)


def plf_seeds():
    """PLF collections (CREATE flag 32), the component axis, landscapes and
    silhouettes."""
    s = {}
    tent = [(0, 0), (1, 1), (2, 0)]
    ramp = [(-1, 2), (0.5, -1), (3, 0.25)]
    tail = [(0, 1), (1, 3)]
    single = [(0.5, -2)]
    fns = [tent, ramp, tail, single]
    for dt in ("f64", "f32"):
        c = create(0, fns, dtype=dt, plf=True) + create(1, [ramp, tent, [(0, 0), (2, 2), (4, 0)]], dtype=dt,
                                                          plf=True, interleaved=True)
        s[f"plf-pairs-{dt}"] = c + b"".join(pair(0, i, 1, j, p=p) for i, j, p in
                                            [(0, 0, 1), (0, 1, 2), (1, 0, 3), (3, 2, math.inf), (0, 2, 1.5),
                                             (2, 2, 1), (1, 1, 7.5), (3, 1, 100)]) + \
            pair(0, 0, 1, 2, kernel=True) + pair(0, 2, 0, 3, kernel=True) + pair(0, 1, 0, 1, p=2)
        s[f"plf-matrices-{dt}"] = c + pdist(0) + pdist(0, p=2.0, layout="dense") + pdist(0, p=math.inf) + \
            pdist(0, p=3.0, layout="packed") + l2_kernel(0) + cdist(0, 1) + cdist(0, 1, metric="kernel") + \
            lp_norm(0, p=2.0) + lp_norm(1) + knn(0, k=2) + knn(0, 1, k=3) + stream(0) + \
            stream(0, 1, metric="kernel") + matvec(0, kernel="l2", r=1, V=(1, -1, 0.5, 2)) + \
            matvec(0, 1, kernel="gaussian", p=2.0, r=1, V=(1, 0.5, -2)) + concurrent(0, p=2.0)
        s[f"plf-window-{dt}"] = c + options(window=(0.25, 2.5)) + pdist(0) + pdist(0, p=2.0) + \
            pdist(0, p=math.inf) + l2_kernel(0) + cdist(0, 1, p=1.5) + lp_norm(0) + \
            options(window=(-math.inf, 0.75)) + pdist(0, p=4.0) + l2_kernel(0, layout="packed")
    c = create(0, fns, plf=True) + create(1, fns)
    s["plf-mixed-kinds"] = c + pair(0, 0, 1, 0) + pair(1, 0, 0, 0, kernel=True) + cdist(0, 1) + cdist(1, 0) + \
        knn(0, 1, k=1) + stream(0, 1) + matvec(0, 1, r=1, V=(1, 1, 1, 1)) + combine(1, 0, 1, 1) + \
        queries(0, 1)
    s["plf-cuda-refused"] = c + options(backend="cuda") + pdist(0) + l2_kernel(0) + cdist(0, 0) + knn(0, k=1) + \
        stream(0) + matvec(0, r=1, V=(1, 1, 1, 1)) + pair(0, 0, 0, 1) + lp_norm(0) + pdist(1)
    s["plf-tda"] = create(0, [tent, [(0.5, 1), (1, 0)], [(0, 2), (1.5, 1)]], plf=True) + \
        evaluate(0, [-math.inf, 0, 0.5, 0.75, 1.25, math.inf, ("bp", 1, 1), ("bp", 2, 2)]) + readout(0) + \
        reduce_(0, "sum") + reduce_(0, "mean", dst=2) + combine(1, 0, -1, 0) + combine(2, 0, 0.5, 0, dst=1) + \
        roundtrip(0) + slice_(0, 1, 3, dst=1) + pdist(1) + \
        create(2, [tent, [(0, 1), (3, 0)]], plf=True) + reshape(2, [2, 1]) + reduce_(2, "sum", 0) + \
        reduce_(2, "sum", 1)
    # objects: the component axis
    six = [tent, ramp, tail, single, [(0, 1), (1, 0)], [(0.25, -1)]]
    s["components-pcf"] = create(0, six) + create(1, six[::-1]) + components(0) + reshape(0, [3, 2]) + \
        components(0) + components(1) + reshape(1, [2, 3]) + components(1) + pdist(0) + pdist(0, p=2.0) + \
        pdist(0, p=math.inf) + l2_kernel(0) + cdist(0, 1) + reshape(1, [3, 2]) + components(1) + cdist(0, 1) + \
        cdist(0, 1, metric="kernel", mode="wait") + knn(0, k=2) + knn(0, 1, k=3) + lp_norm(0, p=3.0) + \
        pair(0, 0, 1, 2, p=1.5) + pair(0, 2, 0, 2, kernel=True) + stream(0) + stream(0, 1) + \
        matvec(0, kernel="laplacian", r=1, V=(1, 2, 3)) + matvec(0, 1, kernel="l2", r=2, V=(1, 0, 0, 1, 1, 1)) + \
        queries(0, 1) + components(1, 0) + cdist(0, 1) + queries(0, 1) + options(backend="cuda") + pdist(0) + \
        options_reset() + concurrent(0, p=1.0) + pdist(0, mode="drop_input") + components(0, -3) + pdist(0)
    s["components-errors"] = create(0, six) + components(0) + components(4) + create(1, []) + \
        reshape(1, [2, 0]) + components(1) + reshape(1, [0, 2]) + components(1) + pdist(1) + \
        reshape(0, [6, 1]) + components(0) + pdist(0) + create(2, six) + reshape(2, [6, 1]) + cdist(0, 2) + \
        roundtrip(0) + slice_(0, 0, 6, dst=3) + cdist(0, 3)
    s["components-plf"] = create(0, six, plf=True) + reshape(0, [2, 3]) + components(0) + pdist(0) + \
        pdist(0, p=2.5) + l2_kernel(0) + lp_norm(0, p=math.inf) + knn(0, k=1) + \
        options(window=(0, 1.5)) + pdist(0, p=1.0) + matvec(0, r=1, V=(1, -1))
    bars = [[(0, 2), (1, 3), (0.5, 4)], [(1, 1.5), (2, 2)], [], [(-1, 4), (-1, 4), (3, 3.25), (0, 0.75)]]
    for dt in ("f64", "f32"):
        s[f"landscapes-{dt}"] = landscapes(0, bars, k=2, dtype=dt) + landscapes(1, bars[:2], k=3, dtype=dt) + \
            pdist(1) + components(1) + pdist(1) + pdist(1, p=2.0) + l2_kernel(1) + \
            silhouettes(2, bars, q=1, dtype=dt) + silhouettes(3, bars, q=0, dtype=dt) + cdist(2, 3) + \
            silhouettes(2, bars, q=2, dtype=dt) + silhouettes(2, bars, q=0.5, dtype=dt) + evaluate(2, [0.5, 1.25])
    s["landscapes-errors"] = (
        landscapes(0, bars, k=0) + landscapes(0, [[(0, math.inf)]], k=1) + landscapes(0, [[(0, math.inf)]], k=2, clip=10) +
        landscapes(0, [[(0, math.inf), (12, math.inf)]], k=2, clip=10) + landscapes(0, [[(0, 1)]], clip="nan") +
        landscapes(0, [[(0, 1)]], clip=-math.inf) + landscapes(0, [[(0, 1)]], clip=1e39, dtype="f32") +
        landscapes(0, [[(0, 1)]], null=("out",)) + landscapes(0, [[(0, 1)]], null=("offsets",)) +
        landscapes(0, [[(0, 1)]], null=("bars",)) + landscapes(0, [[(0, 1)]], raw_dtype=3) +
        landscapes(0, [[(0, 1), (2, 1)]]) + landscapes(0, [[(0, math.nan)]]) + landscapes(0, [[(-1e308, 1.7e308)]]) +
        silhouettes(0, bars, q=-1) + silhouettes(0, bars, q="nan") + silhouettes(0, bars, q=math.inf) +
        silhouettes(0, [[(1, math.inf)], [(0, 1)]]) + silhouettes(0, [[(1, math.inf)], [(0, 1)]], clip=-5) +
        silhouettes(0, [[(0, 2), (0, 1)]], q=1e300) + landscapes(0, [[(0, 1e39)]], dtype="f32") +
        landscapes(0, [[], []], k=6))
    # k limited by the result's size: past 64 bits of bytes, past memory;
    # no barcode: any k (an empty result of shape (0, k)).
    s["landscapes-huge-k"] = (
        landscapes(0, bars, huge="2^64-1") + landscapes(0, bars[:1], huge="2^63", dtype="f32") +
        landscapes(0, bars, huge="limit+1") + landscapes(0, bars, huge="limit") +
        landscapes(0, bars[:1], huge="2^50") + landscapes(0, bars, huge="2^45", dtype="f32") +
        landscapes(0, bars[:2], huge="2^62") + landscapes(0, bars, huge="limit+1", null=("out",)) +
        landscapes(0, [[(0, math.inf)]], huge="2^64-1") + landscapes(0, bars, huge="2^45", raw_dtype=3) +
        landscapes(1, [], huge="2^64-1") + components(1) + pdist(1) + queries(1, 1) + roundtrip(1) +
        landscapes(2, bars[:1], k=5) + evaluate(2, [0.5, 1.25]))
    return s


def tda_seeds():
    s = {}
    bars = [[(0, 2), (1, 3), (0.5, math.inf)], [(1, 1.5), (2, 2)], [], [(-1, 4), (-1, 4), (3, 3.25), (0, 0.75)]]
    for kind in ("betti", "stable_rank", "accumulated"):
        for dt in ("f64", "f32"):
            s[f"tda-{kind}-{dt}"] = from_barcodes(0, kind, bars, dtype=dt) + readout(0) + \
                evaluate(0, [-math.inf, 0, 0.5, 1.75, math.inf, ("bp", 1, 1), ("bp", 2, 2)]) + \
                reduce_(0, "mean") + reduce_(0, "sum", 0, dst=2) + roundtrip(0) + \
                combine(1, 0, -1, 2) + combine(0.5, 0, 2, 0, dst=1) + roundtrip(1)
    s["tda-barcode-errors"] = (
        from_barcodes(0, "betti", [[(0, 1)]], null=("out",)) +
        from_barcodes(0, "betti", [[(0, 1)]], null=("offsets",)) +
        from_barcodes(0, "betti", [[(0, 1)]], null=("bars",)) +
        from_barcodes(0, "betti", [[], []], null=("bars",)) +
        from_barcodes(0, "betti", [[(0, 1)], [(0, 1)]], bad_offsets="first") +
        from_barcodes(0, "betti", [[(0, 1)], [(0, 1)], [(0, 1)]], bad_offsets="decrease") +
        from_barcodes(0, "3", [[(0, 1)]]) + from_barcodes(0, "-1", [[(0, 1)]]) +
        from_barcodes(0, "int_min", [[(0, 1)]]) + from_barcodes(0, "betti", [[(0, 1)]], raw_dtype=3) +
        from_barcodes(0, "betti", [[(0, 1), (2, 1)]]) + from_barcodes(0, "stable_rank", [[(0, math.nan)]]) +
        from_barcodes(0, "accumulated", [[(math.inf, math.inf)]]) +
        from_barcodes(0, "betti", [[(0, 1e39)]], dtype="f32") +
        from_barcodes(0, "stable_rank", [[(-1e38, 3e38)]], dtype="f32") +
        from_barcodes(0, "accumulated", [[(0, 3e38), (0, 3e38)]], dtype="f32") +
        from_barcodes(0, "stable_rank", [[(-1.7e308, 1.7e308)]]))
    s["tda-barcode-edges"] = (
        from_barcodes(0, "betti", [[(1, 1.00000001), (0, 3e-45)]], dtype="f32") + readout(0) +
        from_barcodes(1, "stable_rank", [[(5, math.inf), (1, 1), (0, 1e-50)]], dtype="f32") + readout(1) +
        from_barcodes(2, "accumulated", [[(0, math.inf), (-2, 2), (-1, 1), (1e300, 1.5e300)]]) + readout(2) +
        from_barcodes(3, "betti", []) + roundtrip(3) + reduce_(3, "sum") + reduce_(3, "mean"))
    five = [[(0, 1), (1, 2)], [(0, -1), (2, 3)], [(0.5, 4)], [(0, 0)], [(-3, 1e6), (5, -1e6)], [(1, 1)]]
    c = create(0, five) + create(1, [[(0, 1), (3, 0)]]) + create(2, five, dtype="f32")
    s["tda-reduce-axes"] = c + reshape(0, [2, 3]) + reduce_(0, "sum", 0) + reduce_(0, "mean", 1) + \
        reduce_(0, "mean", 2) + reduce_(0, "sum", "size_max-1") + reduce_(0, "mean", "big") + reduce_(0, "3") + \
        reduce_(0, "-1") + reduce_(0, "sum", null_out=True) + reduce_(4, "sum") + \
        reshape(2, [3, 1, 2]) + reduce_(2, "mean", 1) + reduce_(2, "sum", 2) + reduce_(2, "mean") + \
        create(3, [], dtype="f64") + reshape(3, [0, 5]) + reduce_(3, "sum", 0) + reduce_(3, "mean", 0, dst=1) + \
        reduce_(3, "mean", 1)
    s["tda-combine"] = c + combine(1, 0, 1, 1) + combine(2, 1, -3, 0, dst=3) + combine(1, 0, 1, 0) + \
        combine(1, 0, 1, 2) + combine(math.nan, 0, 1, 0) + combine(1, 0, math.inf, 0) + combine(1, 4, 1, 0) + \
        combine(1, 0, 1, 0, null_out=True) + create(3, [[(0, 1)], [(1, 1)]]) + combine(1, 0, 1, 3) + \
        combine(1e300, 0, 1e300, 0) + combine(0.5, 2, 0.25, 2) + combine(-1, 1, 1, 1) + \
        create(3, [[(0, 1e308)], [(1, -1e308)]]) + combine(1, 3, 1, 3) + combine(1, 3, -1, 3)
    s["tda-readout-evaluate"] = c + readout(0, cap="plus2") + readout(0, cap="minus1") + readout(0, cap="zero") + \
        readout(0, null=("offsets",)) + readout(0, null=("times",)) + readout(2, null=("values",)) + readout(4) + \
        evaluate(0, [0, ("bp", 3, 0), ("bp", 4, 1), ("bp", 5, 2), 1e300, -0.0]) + \
        evaluate(2, [0.1, 1e-50, -math.inf, math.inf, ("bp", 2, 2)]) + evaluate(0, [math.nan, 1]) + \
        evaluate(0, [1], null_t=True) + evaluate(0, [1], null_out=True) + evaluate(0, [1, 2], cap="minus1") + \
        evaluate(0, [1], cap="plus2") + evaluate(0, []) + evaluate(0, [], null_t=True, null_out=True) + \
        evaluate(4, [1]) + create(3, []) + evaluate(3, [1], null_out=True) + readout(3) + readout(3, null=("times",))
    s["tda-roundtrip"] = c + reshape(0, [1, 2, 3]) + roundtrip(0) + roundtrip(0, null_size=True) + \
        roundtrip(0, short=True) + roundtrip(0, null_buffer=True) + roundtrip(0, short=True, null_buffer=True) + \
        roundtrip(2) + roundtrip(4) + roundtrip(0, null_handle=True) + create(3, []) + roundtrip(3)
    # Views: every operation then runs over them; a view of a view; the
    # parent destroyed by the view taking its slot; every argument error.
    five = [[(0, 1), (1, 0)], [(0, 2), (2, 0)], [(0.5, 3)], [(0, 0)], [(1, -1), (3, 0)]]
    s["tda-slice"] = create(0, five) + slice_(0, 1, 4, dst=1) + pdist(1) + pdist(1, p=2.0) + knn(1, k=2) + \
        cdist(0, 1) + slice_(1, 1, 3, dst=2) + pdist(2, p=math.inf) + slice_(0, 2, 2, dst=3) + pdist(3) + \
        slice_(0, 0, 5, dst=0) + pdist(0) + roundtrip(0) + slice_(0, 3, 2) + slice_(0, 0, 6) + \
        slice_(0, "max", "max") + slice_(4, 0, 0) + slice_(0, 0, 1, null_out=True)
    return s


# ---------------------------------------------------------------- data
README_F = [(0, 3), (1, 0)]
README_G = [(0, 1), (2, 0)]
README = [README_F, README_G]


def betti(seed, m):
    """A Betti-curve-like function: t_0 = 0, growing times, last value 0."""
    x = seed
    pts, t = [], 0.0
    for k in range(m):
        x = (x * 1103515245 + 12345) % (1 << 31)
        v = 0 if k == m - 1 else (x >> 8) % 13
        pts.append((t, v))
        t += 0.25 * (1 + (x >> 4) % 7)
    return pts


MIXED = [betti(s, m) for s, m in [(1, 16), (2, 5), (3, 1), (4, 9), (5, 16), (6, 2), (7, 12), (8, 3)]]


def capi_seeds():
    s = {}
    # The README example, every operation, every layout, both dtypes.
    for dt in ("f64", "f32"):
        c = create(0, README, dtype=dt)
        for lay in ("condensed", "dense", "packed"):
            for p in (1.0, 2.0, math.inf, 1.5):
                s[f"readme-{dt}-pdist-{lay}-p{p}"] = c + pdist(0, p=p, layout=lay)
        s[f"readme-{dt}-kernel-dense"] = c + l2_kernel(0, "dense")
        s[f"readme-{dt}-kernel-packed"] = c + l2_kernel(0, "packed")
        s[f"readme-{dt}-cdist"] = c + create(1, [README_G, README_F, [(0.5, 2)]], dtype=dt) + \
            cdist(0, 1) + cdist(0, 1, "kernel") + cdist(1, 0, p=3.0)
        s[f"readme-{dt}-pairs-norms"] = c + pair(0, 0, 0, 1) + pair(0, 1, 0, 1, p=2.0) + \
            pair(0, 0, 0, 1, kernel=True) + lp_norm(0, 1.0) + lp_norm(0, math.inf) + lp_norm(0, 2.0)
    # Tasks: every way of running one.
    c = create(0, MIXED)
    for mode in ("wait", "poll", "cancel", "destroy", "null_task", "drop_input"):
        s[f"task-{mode}"] = c + options(threads=2) + pdist(0, p=2.0, layout="dense", mode=mode) + \
            l2_kernel(0, "packed", mode=mode) + cdist(0, 0, mode=mode)
    s["task-cancel-blocks"] = c + options(threads=4, hints=[0, 1, 1]) + \
        pdist(0, mode="cancel") + cdist(0, 0, "kernel", mode="cancel")
    s["concurrent"] = c + options(threads=2, hints=[0, 0, 4]) + concurrent(0, 2.0) + \
        create(1, README, dtype="f32") + concurrent(1, math.inf)
    # The reductions: kNN, block streams, kernel mat-vec.
    r8 = [v * 0.25 for v in range(-8, 8)]
    s["knn"] = c + create(1, README, dtype="f32") + knn(0, k=1) + knn(0, k=3, p=2.0, mode="wait") + \
        knn(0, 0, k=8, p=math.inf) + knn(1, k=1, mode="poll") + knn(0, k=7, cap="plus2", mode="cancel") + \
        options(threads=3, hints=[2, 1, 4]) + knn(0, k=2, p=1.5, mode="destroy")
    s["knn-errors"] = c + create(1, README, dtype="f32") + knn(0, k=0) + knn(0, k=8) + knn(0, 1, k=1) + \
        knn(0, k="max") + knn(0, k=2, cap="minus1") + knn(0, k=2, cap="null_distances") + \
        knn(0, k=2, cap="null_indices") + knn(0, k=1, p=0.5) + knn(SLOT_NULL, k=1) + knn(0, k=1, mode="null_task")
    s["knn-both"] = c + create(1, README, dtype="f32") + create(2, README) + knn_both(0, 2, kx=2, ky=1) + \
        knn_both(0, 2, p=2.0, kx=3, ky=3, mode="wait") + knn_both(2, 0, p=math.inf, kx=1, ky=3, cap="plus") + \
        options(threads=3, hints=[2, 1, 4]) + knn_both(0, 0, kx=3, ky=3, mode="poll") + \
        knn_both(0, 2, kx=1, ky=2, mode="cancel") + knn_both(0, 2, kx=2, ky=2, mode="destroy")
    s["knn-both-errors"] = c + create(1, README, dtype="f32") + create(2, README) + knn_both(0, SELF) + \
        knn_both(0, 2, kx=0) + knn_both(0, 2, kx=9) + knn_both(0, 2, ky=9) + knn_both(0, 1) + \
        knn_both(0, 2, p=0.5) + knn_both(0, 2, kx=2, ky=2, cap="x_minus1") + \
        knn_both(0, 2, kx=2, ky=2, cap="y_minus1") + knn_both(0, 2, cap="null_x_distances") + \
        knn_both(0, 2, cap="null_x_indices") + knn_both(0, 2, cap="null_y_distances") + \
        knn_both(0, 2, cap="null_y_indices") + knn_both(SLOT_NULL, 2) + knn_both(0, 2, mode="null_task")
    # Merging neighbour lists: ties across a and b (a's first), duplicates,
    # -0 and +0, NaN after +inf, empty lists, no rows, huge counts.
    a2 = [[(1.0, 3), (2.0, 1), (math.inf, 0)], [(0.5, 2), (0.5, 1), (3.0, 7)]]
    b2 = [[(1.0, 3), (1.0, 5)], [(0.5, 1), (float("nan"), 4)]]
    # The memory kept between computations around CUDA (or, without a
    # device, CPU) computations: a tight limit, queries of every device
    # code, release.
    s["gpu-memory"] = c + create(1, README, dtype="f32") + gpu_memory("limit", 2) + \
        options(backend="cuda") + pdist(0) + gpu_memory("cached", 1) + gpu_memory("cached", 5) + \
        gpu_memory("limit", 4) + knn(1, k=2) + gpu_memory("cached", 1) + gpu_memory("cached", 0x81) + \
        gpu_memory("cached", 0) + gpu_memory("cached", 3) + gpu_memory("cached", 4) + \
        gpu_memory("null_limit") + gpu_memory("release") + gpu_memory("limit", 5) + \
        gpu_memory("limit", 0) + gpu_memory("limit", 4) + options_reset() + pdist(0) + \
        gpu_memory("register", 0) + gpu_memory("register", 0x81) + gpu_memory("register", 1) + \
        gpu_memory("register", 2) + gpu_memory("register", 1) + gpu_memory("unregister", 2) + \
        gpu_memory("unregister", 0) + gpu_memory("unregister", 1) + gpu_memory("unregister", 1)
    s["knn-merge"] = b"".join([
        knn_merge(a2, b2, 4), knn_merge(a2, b2, 5, dtype="f32", cap="plus2"), knn_merge(a2, b2, 1),
        knn_merge(b2, a2, 3),
        knn_merge([[(0.0, 2), (-0.0, 2), (float("nan"), 0)]], [[(-0.0, 2), (float("nan"), 0), (math.inf, 2 ** 40)]],
                  6, dtype="f32"),
        knn_merge([[(-math.inf, 6), (1e300, 2 ** 63 - 1), (1.0 + 2.0 ** -52, 3)]] * 2,
                  [[(1e-45, 12), (-1.0, 0), (0.1, 3)]] * 2, 4, dtype="f32"),
        knn_merge([[(0.1, 3), (0.1, 3), (0.3, 1)]], [[(0.1, 3), (0.2, 0), (0.2, 0)]], 5),
        knn_merge([[]] * 3, [[(1.0, 0), (2.0, 1), (3.0, 2)]] * 3, 2, null=["a_distances", "a_indices"]),
        knn_merge([[(1.0, 0), (2.0, 1)]] * 2, [[]] * 2, 2),
        knn_merge([], [], 1, rows=0, a_k=2, b_k=1, null=["distances", "indices"]),
        knn_merge([], [], "max", rows=0, a_k="max", b_k="max"),
        knn_merge([[(3.0, 0), (2.0, 1), (1.0, 2)]] * 2, [[(0.0, 0)]] * 2, 3, dtype="f32",
                  overlap="indices@distances", shift=3),
        knn_merge([[(1.0, 0), (2.0, 1), (1.0, 2)]] * 8, [[(0.5, 5), (2.0, 1), (0.0, 0), (9.0, 4)]] * 8, 7),
    ])
    # (an input runs at most 24 operations: one of each error path)
    s["knn-merge-errors"] = b"".join([
        knn_merge(a2, b2, 0, raw_dtype=0), knn_merge(a2, b2, 2, raw_dtype=3), knn_merge(a2, b2, 0),
        knn_merge(a2, b2, "sum+1"), knn_merge(a2, b2, "max"),
        knn_merge([[(1.0, 0)] * 8], [[(1.0, 1)]], 1, rows="2^62"),
        knn_merge([[(1.0, 0)]], [[(1.0, 1)]], 2, rows="2^32"),
        knn_merge([[]], [[(1.0, 1)]], 1, a_k="max"),
        knn_merge(a2, b2, 2, null=["a_distances"]), knn_merge(a2, b2, 2, null=["b_indices"]),
        knn_merge(a2, b2, 2, cap="minus1"), knn_merge(a2, b2, 2, null=["indices"]),
        knn_merge(a2, b2, 2, overlap="distances@a_distances"), knn_merge(a2, b2, 2, overlap="indices@a_indices"),
        knn_merge(a2, b2, 2, dtype="f32", overlap="distances@b_distances", shift=1),
        knn_merge(a2, b2, 2, overlap="indices@b_indices"), knn_merge(a2, b2, 2, overlap="indices@distances"),
        knn_merge(a2, b2, 2, overlap="distances@a_indices"),
        knn_merge(a2, b2, 2, bad=("swap", "a", 1)), knn_merge(a2, b2, 2, dtype="f32", bad=("index-1", "b", 0)),
        knn_merge(a2, b2, 2, bad=("index_min", "a", 4)), knn_merge(a2, b2, 2, bad=("-inf", "b", 3)),
        knn_merge(a2, b2, 2, bad=("nan", "a", 1)),
        knn_merge(a2, b2, 2, bad=("swap", "b", 3), overlap="distances@a_distances"),
    ])
    s["knn-ties-inf"] = create(0, [[(0, 1)], [(0, 1)], [(0, 2)], [(1, 1)], [(0, 1), (1, 0)]]) + knn(0, k=4) + \
        options(window=(0.0, 2.0)) + knn(0, k=3)
    s["stream"] = c + create(1, README) + stream(0) + stream(0, p=2.0, mode="wait") + stream(0, 1) + \
        stream(0, 1, "kernel", mode="poll") + options(hints=[0, 1, 4]) + stream(0, p=math.inf) + \
        stream(0, 1, cancel_at=2) + stream(0, cancel_at=1, mode="wait") + stream(0, mode="cancel") + \
        stream(0, 1, mode="destroy")
    s["stream-errors"] = c + create(1, README, dtype="f32") + stream(0, null_callback=True) + stream(0, 1) + \
        stream(0, 0, "bad") + stream(0, p=float("nan")) + stream(SLOT_NULL) + stream(0, mode="null_task")
    s["matvec"] = c + create(1, README) + matvec(0, r=1, V=r8[:8]) + \
        matvec(0, kernel="gaussian", p=2.0, scale=1.0, r=2, V=r8, mode="wait") + \
        matvec(0, kernel="laplacian", scale=10.0, r=1, V=r8[:8], mode="poll") + \
        matvec(0, 1, kernel="gaussian", scale=0.5, r=3, V=r8[:6]) + matvec(1, 0, r=1, V=r8[:8]) + \
        options(threads=2, hints=[0, 1, 2]) + matvec(0, kernel="l2", r=2, V=r8, mode="cancel") + \
        matvec(0, kernel="gaussian", scale=1e-300, r=1, V=r8[:8])
    s["matvec-errors"] = c + create(1, README, dtype="f32") + matvec(0, r=0) + matvec(0, kernel="bad", r=1, V=r8[:8]) + \
        matvec(0, kernel="gaussian", scale=0.0, r=1, V=r8[:8]) + matvec(0, kernel="laplacian", p=0.5, r=1, V=r8[:8]) + \
        matvec(0, r=1, V=r8[:8], v_mode="minus1") + matvec(0, r=1, V=r8[:8], v_mode="null") + \
        matvec(0, r=1, V=[1, 2, 3, float("nan"), 0, 0, 0, 0]) + matvec(0, 1, r=1, V=r8[:2]) + \
        matvec(0, r=1, V=r8[:8], cap="minus1") + matvec(0, r=1, V=r8[:8], cap="null") + \
        matvec(0, r=1, V=r8[:8], mode="null_task")
    # Threads, blocks and windows.
    for th in (1, 2, 3, 4, 0):
        s[f"threads-{th}"] = c + options(threads=th, hints=[3, 1, 4]) + pdist(0, layout="packed") + \
            cdist(0, 0, p=2.0)
    s["blocks-tiny"] = c + options(hints=[0, 0, 1]) + pdist(0, layout="dense") + l2_kernel(0)
    s["blocks-split"] = c + options(hints=[7, 2, 16]) + pdist(0, p=1.5) + cdist(0, 0, "kernel")
    s["blocks-min-side-huge"] = c + options(hints=[0, 1 << 62, 0]) + pdist(0)
    s["window-finite"] = c + options(window=(0.5, 3.0)) + pdist(0, p=2.0) + l2_kernel(0) + \
        lp_norm(0, math.inf) + pair(0, 2, 0, 2)
    s["window-half-lines"] = c + options(window=(-math.inf, 2.0)) + pdist(0) + \
        options(window=(1.0, math.inf)) + cdist(0, 0, "kernel")
    s["window-bad"] = options(window=(2.0, 1.0)) + options(window=(float("nan"), 1.0)) + \
        options(window=(1.0, 1.0)) + c + pdist(0)
    # Issue 15 F (fixed): a window that rounds to empty in float32 is an error.
    s["window-empty-in-f32"] = create(0, README, dtype="f32") + options(window=(1.0, 1.0 + 1e-12)) + \
        pdist(0) + pair(0, 0, 0, 1) + lp_norm(0) + create(1, README) + pdist(1)
    # Whole line: non-vanishing differences give +inf.
    s["whole-line-inf"] = create(0, [[(0, 1)], [(0, 2)], [(1, -1), (2, 1)]]) + pdist(0, layout="dense") + \
        l2_kernel(0) + pdist(0, p=math.inf)
    # Duplicates: d(f, f) = 0 inside a matrix.
    s["duplicates"] = create(0, [MIXED[0], MIXED[0], MIXED[3], MIXED[3]]) + pdist(0, p=2.0) + \
        pdist(0, p=7.5, layout="dense")
    # Errors of every kind.
    s["create-errors"] = b"".join([
        create(0, [[(0, 1), (1, float("nan"))]]),
        create(0, [[(0, 1), (math.inf, 0)]]),
        create(0, [[(0, 1), (1, 0), (0.5, 2)]]),
        create(0, [[(0, 1), (1, 0), (1, 2)]]),
        create(0, README, bad_offsets=(0, 0)),
        create(0, README, bad_offsets=(2, 1)),
        create(0, README, null=0), create(0, README, null=1), create(0, README, null=2),
        create(0, README, null=3), create(0, README, interleaved=True, null=1),
        create(0, README, raw_dtype=3), create(0, README, raw_dtype=0),
        create(0, README, bad_data=(0, 1)), create(0, README, bad_data=(5, 3)),
        create(0, [[(0, 3), (1e-300, 1)]], dtype="f32"),
        create(0, [[(0, 1e39)]], dtype="f32"),
    ])
    s["create-empty-collection"] = create(0, []) + pdist(0) + l2_kernel(0) + cdist(0, 0) + lp_norm(0) + \
        reshape(0, [0]) + reshape(0, [2, 0, 3]) + queries(0, 0)
    s["create-interleaved"] = create(0, MIXED, interleaved=True) + create(1, MIXED, dtype="f32", interleaved=True) + \
        pdist(0) + pdist(1) + cdist(0, 1)
    s["call-errors"] = c + create(1, README, dtype="f32") + b"".join([
        pdist(0, p=0.5), pdist(0, p=float("nan")), pdist(0, layout="bad"),
        pdist(0, cap="minus1"), pdist(0, cap="zero"), pdist(0, cap="null"), pdist(0, cap="plus3"),
        l2_kernel(0, "condensed"), l2_kernel(0, "bad"), cdist(0, 1), cdist(0, 0, "bad"),
        cdist(0, SLOT_NULL), pdist(SLOT_NULL), pair(0, 8, 0, 0), pair(0, 0, 1, 0),
        pair(0, 0, 0, 0, null_out=True), pair(0, 0, 0, 1, p=0.999999), lp_norm(0, cap="minus1"),
        lp_norm(0, cap="null"), lp_norm(0, p=-1.0), pdist(0, mode="null_task"),
    ])
    s["options-errors"] = options(backend="bad", threads=-1, memory_fraction=0.0) + \
        options(threads="int_max", memory_fraction=1.5) + options(threads=4097, cuda_threshold=2) + \
        options(memory_fraction="nan", devices=0x81) + options(backend="cpu", null_handle=True) + \
        options(devices=2) + options_reset() + create(0, README) + pdist(0)
    s["cuda-backend"] = create(0, README) + options(backend="cuda") + pdist(0) + l2_kernel(0, mode="wait") + \
        cdist(0, 0) + pair(0, 0, 0, 1) + lp_norm(0) + options(backend="auto") + pdist(0)
    s["reshape"] = c + reshape(0, [2, 4]) + reshape(0, [2, 2, 2]) + reshape(0, [3, 3]) + \
        reshape(0, ["max", "max"]) + reshape(0, []) + reshape(0, [8], null_shape=True) + \
        reshape(0, [1] * 32) + reshape(0, [1] * 33) + cdist(0, 0) + queries(0, 0)
    s["queries"] = c + create(1, README, dtype="f32") + queries(0, 1, "dense", 3) + \
        queries(0, 1, "condensed", -1, True) + queries(1, SLOT_NULL, "bad", 11) + queries(SLOT_NULL, 0, "packed", 99)
    s["destroy-reuse"] = c + destroy(0) + pdist(0) + create(0, README) + create(0, MIXED) + pdist(0) + destroy(0)
    # Moderate data on a finite window: every result finite.
    s["moderate-finite-window"] = create(0, [[(-1e6, 1e6), (1e6 - 1, -1e6)], [(0, 0.5)]]) + \
        options(window=(-1e6, 1e6)) + pdist(0, p=2.0) + pdist(0, p=3.0) + l2_kernel(0) + lp_norm(0, 1.5)
    # Large values: inf where the exact value is not representable.
    s["large-values"] = create(0, [[(0, 1e300), (1e300, 0)], [(0, -1e300), (1, 0)]]) + pdist(0) + \
        pdist(0, p=math.inf) + l2_kernel(0)
    s["tiny-values"] = create(0, [[(0, 1e-300), (1, 0)], [(0, 4.9406564584124654e-324), (1e-300, 0)]]) + \
        pdist(0) + pdist(0, p=math.inf) + l2_kernel(0) + lp_norm(0)
    return {"seed-" + k: v for k, v in s.items()}


def capi_fixed():
    """Reproducers of defects that are fixed: issue 15 A-E and U for float32.
    They run in the default replay (corpus/capi/fixed-*) so the fixes stay
    fixed."""
    r = {}
    ten = [[(0, 10), (1, 0)], [(0, 0)]]
    # A: float32 with finite p > FLT_MAX gave 1 (exact: 10; d(f, f): 0).
    r["A-f32-p1e39-pdist"] = create(0, ten, dtype="f32") + pdist(0, p=1e39)
    r["A-f32-p1e39-self-distance"] = create(0, ten, dtype="f32") + pair(0, 0, 0, 0, p=1e39)
    # B: these block hints made pdist loop for ever.
    r["B-block-hints-uint64-max"] = create(0, README) + options(hints=[0, 0, (1 << 64) - 1]) + pdist(0)
    r["B-block-hints-uint64-max-minus-1"] = create(0, README) + options(hints=[0, 0, (1 << 64) - 2]) + pdist(0)
    # C: offsets that decrease: MPCF_ERROR_INVALID_ARGUMENT (the header now says so).
    r["C-offsets-not-monotone"] = create(0, [[(0, 1)], [(0, 2), (1, 0)], [(0, 3)]], bad_offsets=(1, 0))
    # D: Lp overflowed / underflowed although the exact value is representable.
    r["D-f64-p400-overflow"] = create(0, ten) + pdist(0, p=400.0)
    r["D-f32-p40-overflow"] = create(0, ten, dtype="f32") + pdist(0, p=40.0)
    r["D-f64-p2000-underflow"] = create(0, [[(0, 0.5), (1, 0)], [(0, 0)]]) + pdist(0, p=2000.0)
    # E: a float32 L2 inner product of finite data was NaN (exact: 0).
    e = [[(0, 1e30), (1, 1e30), (2, 0)], [(0, 1e30), (1, -1e30), (2, 0)]]
    r["E-f32-kernel-nan"] = create(0, e, dtype="f32") + pair(0, 0, 0, 1, kernel=True) + l2_kernel(0)
    # U, float32: <f, f> for f = FLT_MIN from t = 1 on is +inf; FLT_MIN^2
    # underflowed to 0 in float32 (now accumulated in double).
    flt_min = struct.unpack("<f", b"\x00\x00\x80\x00")[0]
    r["U-f32-kernel-underflow-unbounded"] = create(0, [[(1, flt_min)]], dtype="f32") + \
        pair(0, 0, 0, 0, kernel=True) + l2_kernel(0)
    return {"fixed-" + k: v for k, v in r.items()}


def capi_regressions():
    """Reproducers of defects not fixed yet. Each fails the strict replay
    until its fix lands (then it moves to capi_fixed()). None now."""
    return {}


def capi_fixed_plq():
    """Reproducers of P, L and Q, fixed since (b79ab61): corpus/capi/fixed-*."""
    r = {}
    # P: the mat-vec's bound B took a PLF's norms as if it were piecewise
    # constant: here the library's B was 19.5 (100 on a piece of width 2^-10,
    # twice) while <f, f> = 3333.4: MPCF_ERROR_INTERNAL "a term of output
    # (0, 0) exceeds its bound" (expected MPCF_OK, out = <f, f>).
    spike = [(0, 0), (1, 100), (1 + 2 ** -10, 0)]
    r["P-plf-matvec-l2-bound-pcf-norms"] = create(0, [spike], plf=True) + matvec(0, kernel="l2", r=1, V=(1,))
    # the same in a window that cuts a steep segment (found by mutating the
    # PLF seeds): f = (0, 0), (1, 1), (2, -14007) on [0, 1.5)
    r["P-plf-matvec-l2-bound-window"] = create(0, [[(0, 0), (1, 1), (2, -14007)]], plf=True) + \
        options(window=(0, 1.5)) + matvec(0, kernel="l2", r=1, V=(1,))
    # L: a Betti-curve bar (-1e308, 1.7e308), both ends float64 numbers, is
    # refused because its length overflows double (expected MPCF_OK: the
    # curve 1 on [-1e308, 1.7e308)).
    r["L-betti-bar-length-overflows-double"] = from_barcodes(0, "betti", [[(-1e308, 1.7e308)]])
    # Q: a silhouette whose longest bar has a subnormal length: the scaling
    # 2^-exponent overflows, "the silhouette has a value that overflows"
    # (expected MPCF_OK: a tent of height 5e-310, float64).
    r["Q-silhouette-subnormal-bar"] = silhouettes(0, [[(0, 1e-309)]], q=0)
    return {"fixed-" + k: v for k, v in r.items()}


def capi_fixed_tda():
    """Reproducers of S, T, V and X (found by fuzzing the TDA entry points
    and the mat-vec), fixed since: corpus/capi/fixed-*."""
    return {"fixed-" + k: v for k, v in {
        # S (found by fuzz_pcf_file): an empty collection reshaped to
        # (2^63, 2, 0) -- mpcf_pcfs_reshape accepts it (defect R's fix) --
        # serializes, and mpcf_pcfs_deserialize refuses its own bytes with
        # MPCF_ERROR_INVALID_ARGUMENT "corrupt: its shape does not hold the 0
        # functions its header announces". Expected: MPCF_OK, the same
        # empty collection of that shape.
        "S-roundtrip-empty-shape-2^63x2x0": create(3, []) + reshape(3, ["2^63", 2, 0]) + roundtrip(3),
        "S-roundtrip-empty-shape-max-max-0": create(0, []) + reshape(0, ["max", "max", 0]) + roundtrip(0),
        # T (found by fuzz_capi): reducing an empty collection with huge
        # dimensions (the library sizes its work by the dimensions; (2^40,
        # 1, 0) along axis 0 asks for 8 TB, so that one is not written
        # here). Shape (2^63, 2, 0). Along axis 0: expected MPCF_OK, an empty collection
        # of shape (2, 0); got MPCF_ERROR_INTERNAL "cannot create
        # std::vector larger than max_size()". Along axis 2 (the 0): 2^64
        # zero functions, expected MPCF_ERROR_INVALID_ARGUMENT (a result too
        # large for 64-bit sizes); got MPCF_OK, 0 functions of shape (2^63, 2).
        "T-reduce-sum-empty-2^63x2x0-axis0-internal": create(3, []) + reshape(3, ["2^63", 2, 0]) +
        reduce_(3, "sum", 0),
        "T-reduce-mean-empty-2^63x2x0-axis0-internal": create(3, []) + reshape(3, ["2^63", 2, 0]) +
        reduce_(3, "mean", 0),
        # V (found by fuzz_capi): L2 mat-vec, V = (DBL_MAX, DBL_MAX), f = -15.75
        # on [14.5, inf), g = -16 on [-16, inf): no bounded piece, so
        # mpcf.h's B is 0 and the call must not be refused; got
        # MPCF_ERROR_INVALID_ARGUMENT "the terms of output (0, 0) may reach
        # -nan" (sync and as a task).
        "V-matvec-l2-nan-bound-sync": create(1, [[(14.5, -15.75)], [(-16, -16)]]) +
        matvec(1, 1, kernel="l2", r=1, V=[sys.float_info.max, sys.float_info.max]),
        "V-matvec-l2-nan-bound-wait": create(1, [[(14.5, -15.75)], [(-16, -16)]]) +
        matvec(1, 1, kernel="l2", r=1, V=[sys.float_info.max, sys.float_info.max], mode="wait"),
        # X (found by fuzz_capi): combine an empty collection with one of a
        # single function (the zero function): expected MPCF_OK, 0
        # functions; the library reads past the empty collection's offsets
        # (ASan heap-buffer-overflow in OffsetDataManager::size_of).
        "X-combine-empty-with-one": create(0, []) + create(2, [[(0, 0)]]) + combine(1, 0, 1, 2),
        "X-combine-one-with-empty": create(0, []) + create(2, [[(0, 0)]]) + combine(1, 2, 1, 0),
        "T-reduce-sum-empty-2^63x2x0-axis2-ok": create(3, []) + reshape(3, ["2^63", 2, 0]) + reduce_(3, "sum", 2),
    }.items()}


def capi_found_by_fuzzing():
    """Reproducers of what fuzz_capi found on the fixed library (issue 15):
    fixed-* for the defects fixed since (R, N, I), limit-* for the range
    rules mpcf.h now states and the checks follow (E and U for float64, W,
    and the mat-vec's M and G, stated in terms of its bound B). Both run in
    the default replay."""
    r = {}
    # E, float64 (what the range rule of mpcf.h does not cover): no piece's
    # |w f g| passes DBL_MAX, but the partial sum 5 * 4e307 does; the exact
    # value 1.2e308 is representable, the result is inf.
    f = [(k, 1e154) for k in range(7)] + [(7, 0)]
    g = [(k, 4e153 if k < 5 else -4e153) for k in range(7)] + [(7, 0)]
    r["E-f64-kernel-partial-sum-overflow"] = create(0, [f, g]) + pair(0, 0, 0, 1, kernel=True) + l2_kernel(0)
    # R (found by fuzz_capi): the product of (2^64-1, 2^64-1, 0) is 0, the
    # count of an empty collection, but reshape refuses it as too many.
    r["R-reshape-zero-product-overflow"] = create(0, []) + reshape(0, ["max", "max", 0])
    # U (found by fuzz_capi), float64: <f, f> for f = 1e-200 from t = 0 on
    # is +inf exactly; 1e-400 underflows to 0 and the result is 0.
    r["U-f64-kernel-underflow-unbounded"] = create(0, [[(0, 1e-200)], [(0, 3e-200), (1, 1e-300)]]) + \
        l2_kernel(0, "packed")
    # W (found while writing fuzz_capi): a finite piece wider than the
    # dtype's largest value gets width inf. Exact values: <f, f> = 6e18,
    # d(f, g) = 6e28 (float32), 3.4e298 (float64).
    wide32 = [(-3e38, 1e-10), (3e38, 0)]
    r["W-f32-kernel-width-overflow"] = create(0, [wide32], dtype="f32") + l2_kernel(0)
    r["W-f32-l1-width-overflow"] = create(0, [wide32, [(-3e38, 0)]], dtype="f32") + pdist(0)
    r["W-f64-l1-width-overflow"] = create(0, [[(-1.7e308, 1e-10), (1.7e308, 0)], [(-1.7e308, 0)]]) + pdist(0)
    # W (found by fuzz_capi on main): two pieces of width 1.7e308 with
    # |f - g| = 1: d_2 = sqrt(3.4e308) = 1.84e154, the scaled power sum
    # overflows and the result is inf.
    # M (found by fuzz_capi on main): kernel_matvec refuses, at compute
    # time with INVALID_ARGUMENT, terms whose bound passes about 1e300 / n:
    # Gaussian kernel, K = 1, V = 1e308 gives out = 1e308 exactly; two
    # functions, V = 1e307: out = 1e307 (1 + K_01), representable.
    one = [(0, 1), (1, 0)]
    r["M-matvec-f64-large-v-refused"] = create(0, [one]) + matvec(0, kernel="gaussian", scale=1.0, r=1, V=[1e308])
    r["M-matvec-f64-v-1e307-refused"] = create(0, [one, [(0, 2), (1, 0)]]) + \
        matvec(0, kernel="gaussian", scale=1.0, r=1, V=[1e307, 1e307], mode="wait")
    # I (found by fuzz_capi on main): L2 mat-vec with a function whose last
    # value 1e-315 squares to 0: MPCF_ERROR_INTERNAL "a term of output
    # (0, 0) exceeds its bound" (<f0, f1> is +inf, f0's norm bound finite).
    r["I-matvec-internal-bound"] = create(0, [[(0, 1e6), (1, 1e-315)], [(0, 1e6)]]) + matvec(0, r=1, V=[1.0, 1.0])
    r["I-matvec-internal-bound-wide-piece"] = create(0, [[(-1.7e308, 1e-10), (1.7e308, 0)], [(-2.5, 13.5)]]) + \
        matvec(0, 0, r=1, V=[1.0, 1.0])
    # G (found by fuzz_capi on main): the mat-vec grid comes from a bound
    # (K <= 1 times max |V| = 1e300), not from the largest actual term:
    # K = (0.011, 0), V = (1e15, 1e300) gives 0, exact 1.1e13.
    r["G-matvec-grid-from-bound"] = create(0, [[(0, 1), (1, 0)]]) + create(1, [[(0, 4), (1, 0)], [(0, 1)]]) + \
        matvec(0, 1, kernel="gaussian", scale=1.0, p=1.0, r=1, V=[1e15, 1e300])
    # N (found by fuzz_capi on main): two pieces whose |f - g| overflows
    # (DBL_MAX - (-DBL_MAX)) make the Lp distance NaN (inf / inf in the
    # scaled power sum); mpcf.h says +inf. float64 p = 3, float32 p = 2.
    dm = sys.float_info.max
    r["N-f64-lp-nan-two-overflows"] = create(0, [[(0, dm), (1, dm), (2, 0)], [(0, -dm), (2, 0)]]) + \
        pair(0, 0, 0, 1, p=3.0) + pdist(0, p=3.0)
    r["N-f32-l2-nan-two-overflows"] = create(0, [[(0, FLT_MAX), (1, FLT_MAX), (2, 0)], [(0, -FLT_MAX), (2, 0)]],
                                             dtype="f32") + pair(0, 0, 0, 1, p=2.0)
    r["W-f64-lp-width-sum-overflow"] = create(0, [[(-1.7e308, 1), (0, 1), (1.7e308, 0)], [(-1.7e308, 0)]]) + \
        pdist(0, p=2.0) + pdist(0, p=3.0)
    return {("fixed-" if k[0] in "RNI" else "limit-") + k: v for k, v in r.items()}


# ---------------------------------------------------------------- csv
def csv_seeds():
    s = {
        "readme": "id,t,v\nsample_a,0,3\nsample_a,1.5,0\nsample_b,0,1\n",
        "no-header": "a,0,3\na,1,0\nb,0,1\nb,2,0\n",
        "crlf-bom-comments": "\ufeffid,t,v\r\n# comment\r\n\r\na,0,1\r\n  # indented comment\r\na,1,0\r\n",
        "quoted-ids": '"a,b",0,1\n"a,b",1,0\n"say ""hi""",0,2\n" spaced ",0,3\n"#not a comment",0,4\n',
        "blanks-around-fields": "  a  ,  0  ,  1  \n\ta\t,\t1\t,\t0\t\n",
        "numbers": "a,0,1e-3\na,0x1p-2,-2.5\na,1e10,+4\na,1.7976931348623157e308,-0\nb,-1e308,4.9e-324\n",
        "float32-edges": "a,0,3.4028234e38\na,1.0000001,1e-45\na,1.0000002,-3.4028234e38\n",
        "float32-equal-times": "a,1,0\na,1.00000001,1\n",
        "no-final-newline": "a,0,1\na,1,0",
        "header-only": "id,t,v\n",
        "empty": "",
        "comments-only": "# x\n\n   \n#y\n",
        "bad-field-count": "a,0,1\na,1\n",
        "bad-number": "a,0,1\na,1x,0\n",
        "empty-number": "a,,1\n",
        "nan": "a,0,nan\n",
        "inf-time": "a,inf,1\n",
        "out-of-range": "a,0,1e400\n",
        "repeated-time": "a,0,1\na,0,2\n",
        "decreasing-time": "a,1,1\na,0.5,2\n",
        # Rows on lines apart (their lines are runs) and a NaN the library
        # refuses in the second function, after comments.
        "lines-apart-then-nan": "a,0,1\n\n# c\na,1,0\nb,0,1\n\nb,1,nan\n",
        "split-id": "a,0,1\nb,0,1\na,1,0\n",
        "empty-id": ",0,1\n",
        "unclosed-quote": '"a,0,1\n',
        "text-after-quote": '"a"x,0,1\n',
        "nul-byte": "a,0,1\na,1\x00,0\n",
        "header-then-bad": "time,t,v\nx,y,z\n",
        "many-ids": "".join(f"id{k},{t},{(k * 7 + t) % 5}\n" for k in range(12) for t in range(3)),
        "ids-table-grows": "".join(f"f{k},0,{k % 7}\n" for k in range(70)) + "f3,1,0\n",
        "long-id": "x" * 100 + ",0,1\n" + "x" * 100 + ",1,0\n",
        "trailing-blank-line": "a,0,1\n\n",
    }
    return {"seed-" + k: v.encode("utf-8") for k, v in s.items()}

# ---------------------------------------------------------------- pcf files
PCF_MAGIC = b"\x89MPCF\r\n\x1a"


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def pcf_file(fns, dtype="f64", shape=None, version=1, raw_dtype=None, ndim=None, n=None, total=None,
             offsets=None, hash_fix=0, v2type=None):
    """The bytes of an mpcf PCF file (README.md, "The PCF file format"),
    written here from the documentation, not by the library: fns is a list
    of functions, each a list of (t, v). The keyword arguments override a
    field to make a broken file (hash_fix is added to the hash). v2type:
    a version 2 file (uint32 ndim, uint32 function type v2type)."""
    fmt = "<f" if dtype == "f32" else "<d"
    off = [0]
    for f in fns:
        off.append(off[-1] + len(f))
    shape = [len(fns)] if shape is None else shape
    body = PCF_MAGIC + struct.pack("<II", version, raw_dtype if raw_dtype is not None else (1 if dtype == "f32" else 2))
    nd = len(shape) if ndim is None else ndim
    if v2type is not None:
        body = PCF_MAGIC + struct.pack("<II", 2, raw_dtype if raw_dtype is not None else (1 if dtype == "f32" else 2))
        body += struct.pack("<II", nd, v2type)
    else:
        body += struct.pack("<Q", nd)
    body += struct.pack("<QQ", len(fns) if n is None else n, off[-1] if total is None else total)
    body += b"".join(struct.pack("<Q", d) for d in shape)
    body += b"".join(struct.pack("<Q", o) for o in (off if offsets is None else offsets))
    body += b"".join(struct.pack(fmt, t) for f in fns for t, _ in f)
    body += b"".join(struct.pack(fmt, v) for f in fns for _, v in f)
    return body + struct.pack("<Q", (fnv1a(body) + hash_fix) & 0xFFFFFFFFFFFFFFFF)


def pcf_file_seeds():
    two = [[(0, 3), (1.5, 0)], [(0, 1)]]
    big = [[(k * 0.25 + i, (k * 7 + i) % 5 - 2) for k in range(1 + (i * 5) % 16)] for i in range(8)]
    s = {
        "readme-two": pcf_file(two),
        "f32-two": pcf_file(two, dtype="f32"),
        "empty": pcf_file([]),
        "empty-shape-0x5": pcf_file([], shape=[0, 5]),
        "zero-function": pcf_file([[(0, 0)]]),
        "shape-2x4": pcf_file(big, shape=[2, 4]),
        "shape-2x2x2-f32": pcf_file(big, dtype="f32", shape=[2, 2, 2]),
        "ndim-32": pcf_file(two, shape=[2] + [1] * 31),
        "non-canonical": pcf_file([[(0, 1), (1, 1), (2, -0.0)], [(-1, 0), (0, 0)]]),
        "extremes": pcf_file([[(-1.7976931348623157e308, 1.7976931348623157e308), (5e-324, -5e-324),
                               (1.7976931348623157e308, 0)]]),
        "f32-extremes": pcf_file([[(-FLT_MAX, FLT_MAX), (1.401298464324817e-45, 0), (FLT_MAX, 0)]], dtype="f32"),
        # broken headers and lengths: MPCF_ERROR_INVALID_ARGUMENT
        "bad-magic": b"\x89MPCG" + pcf_file(two)[5:],
        "bad-version": pcf_file(two, version=2),
        # version 2 holding PCFs (type 1): valid, and serialized as version 1
        # (found by fuzz_pcf_file: the model expected the same bytes back)
        "v2-type1-pcfs": pcf_file(two, v2type=1),
        "v2-type1-empty-0x0": pcf_file([], shape=[0, 0], v2type=1),
        "v2-type2-plfs": pcf_file(two, v2type=2),
        "v2-type3": pcf_file(two, v2type=3),
        "bad-dtype-0": pcf_file(two, raw_dtype=0),
        "bad-dtype-3": pcf_file(two, raw_dtype=3),
        "bad-ndim-0": pcf_file(two, shape=[], ndim=0),
        "bad-ndim-33": pcf_file(two, shape=[2] + [1] * 32),
        "bad-shape": pcf_file(two, shape=[3]),
        "bad-shape-overflow": pcf_file(two, shape=[2 ** 63, 2, 2]),
        "bad-hash": pcf_file(two, hash_fix=1),
        "truncated-by-1": pcf_file(two)[:-1],
        "truncated-header": pcf_file(two)[:39],
        "magic-only": PCF_MAGIC,
        "one-byte-extra": pcf_file(two) + b"\x00",
        "empty-file": b"",
        "huge-n": pcf_file(two, n=2 ** 61),
        "huge-total": pcf_file(two, total=2 ** 62),
        "huge-ndim": pcf_file(two, ndim=2 ** 63),
        "n-wraps-length": pcf_file(two, n=2 ** 64 - 1),
        "offsets-not-from-0": pcf_file(two, offsets=[1, 2, 3]),
        "offsets-decrease": pcf_file(two, offsets=[0, 3, 2]),
        "offsets-end-not-total": pcf_file([[(0, 3), (1.5, 0)], [(0, 1), (1, 2)]], offsets=[0, 2, 3]),
        # valid fields, bad PCFs: MPCF_ERROR_INVALID_PCF
        "empty-function": pcf_file(two, offsets=[0, 0, 3], shape=[2]),
        "nan-time": pcf_file([[(0, 1), (math.nan, 0)]]),
        "inf-value": pcf_file([[(0, math.inf)]]),
        "equal-times": pcf_file([[(0, 1), (0, 2)]]),
        "decreasing-times-f32": pcf_file([[(1, 1), (0.5, 2)]], dtype="f32"),
    }
    return {"seed-" + k: v for k, v in s.items()}


def pcf_file_regressions():
    """Reproducers of defects not fixed yet (README.md, known defects). None
    today."""
    return {}


def pcf_file_fixed():
    """S, fixed: corpus/pcf_file/fixed-*."""
    return {"fixed-" + k: v for k, v in {
        # S: an empty collection of shape (2^63, 2, 0), as mpcf_pcfs_reshape
        # accepts it and mpcf_pcfs_save writes it; mpcf_pcfs_deserialize and
        # mpcf_pcfs_load refuse it as "corrupt: its shape does not hold the
        # 0 functions its header announces". Expected: the empty collection.
        "S-empty-shape-2^63x2x0": pcf_file([], shape=[2 ** 63, 2, 0]),
        "S-empty-shape-max-max-0": pcf_file([], shape=[2 ** 64 - 1, 2 ** 64 - 1, 0]),
    }.items()}


def write(dirname, files):
    os.makedirs(dirname, exist_ok=True)
    for name, data in sorted(files.items()):
        with open(os.path.join(dirname, name), "wb") as f:
            f.write(data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    write(os.path.join(root, "capi"), capi_seeds())
    write(os.path.join(root, "capi"), {"seed-" + k: v for k, v in tda_seeds().items()})
    write(os.path.join(root, "capi"), {"seed-" + k: v for k, v in plf_seeds().items()})
    write(os.path.join(root, "capi"), capi_fixed())
    write(os.path.join(root, "capi"), capi_found_by_fuzzing())
    write(os.path.join(root, "capi"), capi_fixed_tda())
    write(os.path.join(root, "capi"), capi_fixed_plq())
    if capi_regressions():
        write(os.path.join(root, "capi", "regressions"), capi_regressions())
    write(os.path.join(root, "csv"), csv_seeds())
    write(os.path.join(root, "pcf_file"), pcf_file_seeds())
    write(os.path.join(root, "pcf_file"), pcf_file_fixed())
    write(os.path.join(root, "pcf_file", "regressions"), pcf_file_regressions())
    print(f"wrote {len(capi_seeds())} + {len(capi_fixed())} + {len(capi_found_by_fuzzing())} + "
          f"{len(capi_regressions())} capi and "
          f"{len(csv_seeds())} csv and {len(pcf_file_seeds())} pcf_file inputs "
          f"under {root}")


if __name__ == "__main__":
    main()
