"""The CPU backend gives the same bits whatever its instruction set
(MPCF_CPU_SIMD=scalar|sse4|avx2|avx512 on x86-64, scalar|neon on aarch64,
capped at what this CPU runs) and
whatever its thread count, for pdist, cdist, l2_kernel, knn and
kernel_matvec, every p and windows; where the result is exact (L1, L-inf and
the L2 inner product of values and times on a 1/8 grid; hand values for
every p, overflowing differences included) it is compared with the
independent reference of reference.py or with the value written down."""

import math
import os
import platform

import numpy as np
import pytest

import mpcf
import reference as ref

# Every name MPCF_CPU_SIMD takes on this machine's architecture; a set this
# CPU does not run falls back to the best one it runs, which must give the
# same bits as well. A set of the other architecture is refused.
_ARCH_SETS = {"x86_64": ["sse4", "avx2", "avx512"], "aarch64": ["neon"]}
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                        platform.machine().lower())
SIMD_SETS = ["scalar"] + _ARCH_SETS.get(_MACHINE, [])
THREADS = [1, 2, 3, 7]
PS = [1, 2, 1.5, 3, 400, 1e39, math.inf]
WINDOWS = [None, (0.5, 3.25), (-math.inf, 2.0)]


def with_simd(name, fn):
    old = os.environ.get("MPCF_CPU_SIMD")
    os.environ["MPCF_CPU_SIMD"] = name
    try:
        return fn()
    finally:
        if old is None:
            del os.environ["MPCF_CPU_SIMD"]
        else:
            os.environ["MPCF_CPU_SIMD"] = old


def inputs(dtype, n=190, seed=11):
    rng = np.random.default_rng(seed)
    # Lengths 1 to 40: lanes of one SIMD group stop at different steps;
    # half the functions keep a non-zero tail (+inf distances).
    return ref.random_pcfs(rng, n, dtype, tails=True, negative=True, max_m=40)


def same_bits(a, b):
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def runs(call):
    """call(threads) for every instruction set and thread count, against
    the scalar walk on one thread."""
    want = with_simd("scalar", lambda: call(1))
    for simd in SIMD_SETS:
        for threads in THREADS:
            got = with_simd(simd, lambda: call(threads))
            if isinstance(want, tuple):
                for w, g in zip(want, got):
                    assert same_bits(w, g), (simd, threads)
            else:
                assert same_bits(want, got), (simd, threads)
    return want


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("window", WINDOWS)
def test_pdist_cdist_same_bits(dtype, p, window):
    fs = inputs(dtype)
    X = mpcf.PcfCollection(fs, dtype=dtype)
    Y = mpcf.PcfCollection(fs[:23], dtype=dtype)
    D = runs(lambda th: mpcf.pdist(X, p, window=window, backend="cpu", threads=th))
    S = runs(lambda th: mpcf.pdist(X, p, window=window, layout="square", backend="cpu", threads=th))
    C = runs(lambda th: mpcf.cdist(Y, X, p, window=window, backend="cpu", threads=th))
    # The symmetric and the cross plane agree where they overlap.
    n = len(fs)
    full = np.zeros((n, n), dtype=dtype)
    full[np.triu_indices(n, 1)] = D
    full = full + full.T
    assert same_bits(C, full[:23])
    if p in (1, math.inf):
        # Exact: 1/8-grid times and values, sums that fit the mantissa.
        # (on the first 40 functions: the reference is slow).
        want = ref.pdist_square(fs[:40], p, window, dtype)
        np.testing.assert_array_equal(S[:40, :40].astype(np.float64), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("window", WINDOWS)
def test_l2_kernel_same_bits(dtype, window):
    fs = inputs(dtype, seed=12)
    X = mpcf.PcfCollection(fs, dtype=dtype)
    K = runs(lambda th: mpcf.l2_kernel(X, window=window, backend="cpu", threads=th))
    C = runs(lambda th: mpcf.l2_kernel(X, X, window=window, backend="cpu", threads=th))
    assert same_bits(K, C)
    want, _ = ref.kernel_square(fs[:40], window, dtype)
    np.testing.assert_array_equal(K[:40, :40].astype(np.float64), want.astype(dtype).astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [1, 2, 400, math.inf])
def test_knn_same_bits(dtype, p):
    fs = inputs(dtype, seed=13)
    X = mpcf.PcfCollection(fs, dtype=dtype)
    d, i = runs(lambda th: mpcf.knn(X, 5, p=p, backend="cpu", threads=th))
    runs(lambda th: mpcf.knn(X, 4, mpcf.PcfCollection(fs[:17], dtype=dtype), p=p,
                             window=(0.5, 3.25), backend="cpu", threads=th))
    if p == 1:
        D = ref.pdist_square(fs[:40], 1, None, dtype)
        np.fill_diagonal(D, np.inf)
        want = np.sort(D, axis=1)[:, :5]
        got = runs(lambda th: mpcf.knn(mpcf.PcfCollection(fs[:40], dtype=dtype), 5, p=1,
                                       backend="cpu", threads=th))[0]
        np.testing.assert_array_equal(got.astype(np.float64), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["l2", "gaussian", "laplacian"])
def test_kernel_matvec_same_bits(dtype, kernel):
    fs = inputs(dtype, seed=14)
    X = mpcf.PcfCollection(fs, dtype=dtype)
    V = np.random.default_rng(3).uniform(-1, 1, size=(len(fs), 3)).astype(dtype)
    runs(lambda th: mpcf.kernel_matvec(X, V, kernel=kernel, sigma=3.0, backend="cpu", threads=th))
    runs(lambda th: mpcf.kernel_matvec(X, V, kernel=kernel, sigma=3.0, window=(-1.0, 2.5),
                                       backend="cpu", threads=th))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hand_values_every_p(dtype):
    """f = 10 on [0, 1), g = 0: distance 10 for every p (p = 400 and 1e39 in
    float32 included); f = big on [0, 1), g = -big (|f - g| overflows to
    +inf): +inf for every p. 40 copies so that the SIMD lanes are full."""
    big = float(np.finfo(dtype).max) * 0.75
    fs = [np.array([[0, 10], [1, 0]]), np.array([[0, 0]])] * 20
    hs = [np.array([[0, big], [1, 0]]), np.array([[0, -big], [1, 0]])] * 20
    for p in PS:
        for simd in SIMD_SETS:
            for threads in (1, 3):
                D = with_simd(simd, lambda: mpcf.pdist(mpcf.PcfCollection(fs, dtype=dtype), p,
                                                       layout="square", backend="cpu", threads=threads))
                want = np.where(np.add.outer(np.arange(40), np.arange(40)) % 2 == 1, 10.0, 0.0)
                np.testing.assert_array_equal(D.astype(np.float64), want, err_msg=f"{simd} p={p}")
                H = with_simd(simd, lambda: mpcf.pdist(mpcf.PcfCollection(hs, dtype=dtype), p,
                                                       layout="square", backend="cpu", threads=threads))
                want = np.where(np.add.outer(np.arange(40), np.arange(40)) % 2 == 1, np.inf, 0.0)
                np.testing.assert_array_equal(H.astype(np.float64), want, err_msg=f"{simd} p={p}")


@pytest.mark.skipif(_MACHINE not in _ARCH_SETS, reason="neither x86-64 nor aarch64")
def test_a_set_of_the_other_architecture_is_refused():
    other = "neon" if _MACHINE == "x86_64" else "avx2"
    X = mpcf.PcfCollection(inputs(np.float64, n=5), dtype=np.float64)
    with pytest.raises(mpcf.InvalidArgumentError, match=f"MPCF_CPU_SIMD={other} names an instruction set"):
        with_simd(other, lambda: mpcf.pdist(X, 1, backend="cpu"))
    # Unset again, the same call runs.
    assert mpcf.pdist(X, 1, backend="cpu").shape == (10,)
