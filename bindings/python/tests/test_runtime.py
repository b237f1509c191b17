"""Ctrl-C, the GIL, memory, progress bars, versions and documentation."""

import _thread
import doctest
import inspect
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import types
from pathlib import Path

import numpy as np
import pytest

import mpcf
from mpcf import _lib

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent


def _block(n, m, dtype=np.float32, seed=7):
    """n PCFs with m breakpoints each (t_0 = 0, gaps in [0.05, 1), values in
    [0, 10), last value 0), as one (n, m, 2) array."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.05, 1.0, size=(n, m)), axis=1) - 0.05
    v = rng.uniform(0.0, 10.0, size=(n, m))
    v[:, -1] = 0.0
    return np.stack([t, v], axis=-1).astype(dtype)


def _threads_now():
    with open("/proc/self/status") as f:
        return int(re.search(r"^Threads:\s+(\d+)", f.read(), re.M).group(1))


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- Ctrl-C


@pytest.fixture
def held_tasks(monkeypatch):
    """Every task started in the test computes nothing until it is cancelled
    (libmpcf's testing hook MPCF_DEBUG_HOLD_TASKS): a computation is then
    still running when an interrupt arrives, however fast the machine."""
    monkeypatch.setenv("MPCF_DEBUG_HOLD_TASKS", "1")


def test_keyboard_interrupt_cancels_the_task(held_tasks):
    X = mpcf.PcfCollection(_block(50, 20))
    threads_before = _threads_now()
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        mpcf.pdist(X, threads=1, backend="cpu")
    timer.join()
    # The task has ended (its threads are gone) and the library still works.
    assert _threads_now() == threads_before
    os.environ.pop("MPCF_DEBUG_HOLD_TASKS")
    assert mpcf.pdist([[(0, 3), (1, 0)], [(0, 1), (2, 0)]]).tolist() == [3.0]


CHILD = textwrap.dedent(
    """
    import sys
    sys.modules["tqdm"] = None        # the plain bar: drawn at the first poll of the task
    import numpy as np
    import mpcf
    X = mpcf.PcfCollection(np.array([[[0, 3], [1, 0]], [[0, 1], [2, 0]]], dtype=np.float32))
    try:
        mpcf.pdist(X, threads=1, backend="cpu", progress=True)   # held until cancelled
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        raise
    print("finished", flush=True)
    """
)


def test_sigint_to_a_subprocess_raises_keyboard_interrupt():
    env = dict(os.environ, MPCF_DEBUG_HOLD_TASKS="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        # The bar appears once the child waits on its (held) task.
        seen = b""
        while b"pdist:" not in seen:
            chunk = proc.stderr.read1(4096)
            if not chunk:
                break
            seen += chunk
        assert b"pdist:" in seen, seen.decode(errors="replace")
        proc.send_signal(signal.SIGINT)
        # A generous guard against a hang, not a speed requirement.
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    out, err = out.decode(), (seen + err).decode(errors="replace")
    assert "KeyboardInterrupt" in err
    assert "interrupted" in out and "finished" not in out
    assert proc.returncode != 0


# ---------------------------------------------------------------- the GIL


def test_other_threads_run_during_a_long_computation(held_tasks, monkeypatch):
    """The GIL is released while Python waits on a task: another thread
    advances many times within one 0.1 s wait. The task is held (it cannot
    finish), and the other thread ends it with an interrupt after 20 ticks.
    With the GIL held during each wait the ticker could advance at most
    about once per wait call, so 20 ticks would need at least 20 calls."""
    X = mpcf.PcfCollection(_block(20, 10))
    calls = 0
    real_wait = _lib.swig.mpcf_task_wait

    def counting_wait(task, seconds):
        nonlocal calls
        calls += 1
        return real_wait(task, seconds)

    monkeypatch.setattr(_lib.swig, "mpcf_task_wait", counting_wait)
    ticks = 0
    calls_at_20 = None

    def ticker():
        nonlocal ticks, calls_at_20
        while ticks < 20:
            ticks += 1
            time.sleep(0.002)
        calls_at_20 = calls
        _thread.interrupt_main()

    thread = threading.Thread(target=ticker)
    with pytest.raises(KeyboardInterrupt):
        thread.start()
        mpcf.pdist(X, threads=1, backend="cpu")
    thread.join()
    assert ticks == 20
    assert calls_at_20 is not None and calls_at_20 < 20, f"20 ticks took {calls_at_20} waits"


# ---------------------------------------------------------------- memory


def test_no_memory_or_thread_growth_over_1000_calls():
    block = _block(50, 20, np.float64)
    f, g = block[0], block[1]

    def one_round():
        X = mpcf.PcfCollection(block)
        mpcf.pdist(X)
        mpcf.pdist(X, 2, layout="square", window=(1.0, 5.0))
        mpcf.cdist(X, block[:7])
        mpcf.l2_kernel(X)
        mpcf.lp_norm(X, np.inf)
        mpcf.lp_distance(f, g)
        with pytest.raises(mpcf.InvalidPcfError):
            mpcf.PcfCollection([f, f[::-1]])
        with pytest.raises(mpcf.InvalidArgumentError):
            mpcf.pdist(X, 0.5)

    for _ in range(100):
        one_round()
    threads = _threads_now()
    before = _rss_bytes()
    for _ in range(1000):
        one_round()
    growth = _rss_bytes() - before
    # One leaked collection per round alone would be 16 kB x 1000 = 16 MB.
    assert growth < 8 * 2**20, f"RSS grew by {growth / 2**20:.1f} MiB"
    assert _threads_now() == threads


def test_results_are_written_in_place_without_an_n2_copy():
    n = 2000
    X = mpcf.PcfCollection(_block(n, 2, np.float64))
    result_bytes = n * n * 8
    tracemalloc.start()
    try:
        D = mpcf.pdist(X, layout="square")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert D.shape == (n, n)
    assert peak < 1.25 * result_bytes, f"peak {peak} bytes for a {result_bytes}-byte result"
    # the square matrix is a view of the one buffer libmpcf wrote
    assert D.base is not None and D.base.nbytes == result_bytes


# ---------------------------------------------------------------- progress


def test_plain_progress_bar_without_tqdm(monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    X = mpcf.PcfCollection(_block(300, 50))
    D = mpcf.pdist(X, progress=True)
    assert D.shape == (300 * 299 // 2,)
    err = capfd.readouterr().err
    assert "pdist: [" in err and "100.0% (44850/44850 pairs)" in err and err.endswith("\n")
    mpcf.l2_kernel(X, progress=True)
    assert "l2_kernel: [" in capfd.readouterr().err


def test_progress_uses_tqdm_when_installed(monkeypatch):
    events = []

    class FakeTqdm:
        def __init__(self, total, desc, unit, unit_scale):
            self.total, self.n = total, 0
            events.append(("open", desc))

        def update(self, k):
            self.n += k

        def refresh(self):
            pass

        def close(self):
            events.append(("close", self.n, self.total))

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    mpcf.cdist(_block(40, 5), _block(30, 5), progress=True)
    assert events == [("open", "cdist"), ("close", 1200, 1200)]


def test_progress_with_real_tqdm(capfd):
    pytest.importorskip("tqdm")
    mpcf.pdist(_block(100, 10), progress=True)
    err = capfd.readouterr().err
    # The bar scales its units (unit_scale=True): 4950 pairs print as 4.95k.
    assert "100%" in err and "4.95k/4.95k" in err


# ---------------------------------------------------------------- versions


def _header_version():
    text = (REPO / "capi" / "include" / "mpcf" / "mpcf.h").read_text()
    parts = [re.search(rf"#define MPCF_VERSION_{k} (\d+)", text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_versions_agree():
    assert mpcf.__version__ == _header_version()
    pyproject = (HERE.parent / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == mpcf.__version__
    assert mpcf.build_info().startswith(f"libmpcf {mpcf.__version__};")


@pytest.mark.parametrize(
    "loaded, ok",
    [(10200, True), (10203, True), (10300, True), (10000, False), (10199, False), (20200, False), (200, False)],
)
def test_library_version_check(loaded, ok):
    if ok:
        _lib.check_library_version(loaded, (1, 2, 0), "x")
    else:
        with pytest.raises(ImportError, match="this package was built for libmpcf 1.2.0"):
            _lib.check_library_version(loaded, (1, 2, 0), "x")


def test_build_info_and_devices():
    info = mpcf.build_info()
    assert ("cuda=on" in info) == mpcf.has_cuda()
    count = mpcf.cuda_device_count()
    assert isinstance(count, int) and count >= 0
    if not mpcf.has_cuda():
        assert count == 0


def test_gpu_memory_kept_between_computations_without_a_device():
    limit = mpcf.gpu_cache_limit()
    try:
        mpcf.set_gpu_cache_limit(12345)
        assert mpcf.gpu_cache_limit() == 12345
        mpcf.set_gpu_cache_limit(np.uint64(2**40))
        assert mpcf.gpu_cache_limit() == 2**40
    finally:
        mpcf.set_gpu_cache_limit(limit)
    mpcf.release_gpu_memory()
    with pytest.raises(ValueError, match="nbytes = -1 is negative"):
        mpcf.set_gpu_cache_limit(-1)
    with pytest.raises(TypeError, match="nbytes must be an integer"):
        mpcf.set_gpu_cache_limit(1.5)
    with pytest.raises(TypeError, match="device must be an integer device id"):
        mpcf.gpu_cached_bytes(True)
    with pytest.raises(ValueError, match="not a valid device id"):
        mpcf.gpu_cached_bytes(2**40)
    with pytest.raises(mpcf.InvalidArgumentError, match="device id -1 is negative"):
        mpcf.gpu_cached_bytes(-1)
    with pytest.raises(mpcf.CudaUnavailableError):
        mpcf.gpu_cached_bytes(mpcf.cuda_device_count())


@pytest.mark.gpu
def test_gpu_memory_kept_between_computations():
    rng = np.random.default_rng(3)
    X = [list(zip(np.cumsum(rng.uniform(0.1, 1, 30)) - 0.1, np.append(rng.uniform(0, 1, 29), 0.0)))
         for _ in range(400)]
    limit = mpcf.gpu_cache_limit()
    try:
        mpcf.set_gpu_cache_limit(2**30)
        mpcf.release_gpu_memory()
        assert mpcf.gpu_cached_bytes(0) == 0
        first = mpcf.pdist(X, backend="cuda", devices=[0])
        kept = mpcf.gpu_cached_bytes(0)
        assert 0 < kept <= 2**30
        mpcf.knn(X[:150], 3, backend="cuda", devices=[0])
        again = mpcf.pdist(X, backend="cuda", devices=[0])
        assert np.array_equal(first, again)
        mpcf.set_gpu_cache_limit(0)
        assert mpcf.gpu_cached_bytes(0) == 0
    finally:
        mpcf.set_gpu_cache_limit(limit)
        mpcf.release_gpu_memory()


def test_last_task_info_is_libmpcfs_account():
    # m = 1, 2, 4 (7 breakpoints): pdist's pairs (2+1) + (4+1) + (4+2) = 14;
    # l2_kernel adds the diagonal 2 + 4 + 8: 28; against Y (m = 3, 1): each
    # of the 6 pairs once, 2 * 7 + 3 * 4 = 26; norms (1+1) + (2+1) + (4+1) = 10.
    X = [[(0.0, 0.0)], [(0.0, 1.0), (1.0, 0.0)], [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 0.0)]]
    Y = [[(0.0, 1.0), (1.0, 2.0), (2.0, 0.0)], [(0.0, 0.0)]]
    for call, steps in (
        (lambda: mpcf.pdist(X, backend="cpu", threads=3), 14.0),
        (lambda: mpcf.l2_kernel(X, backend="cpu", threads=3), 28.0),
        (lambda: mpcf.cdist(X, Y, backend="cpu", threads=3), 26.0),
        (lambda: mpcf.knn(X, 1, Y, backend="cpu", threads=3), 26.0),
    ):
        call()
        info = mpcf.last_task_info()
        assert (info["backend"], info["reason"], info["threads"], info["devices"]) == \
            ("cpu", "requested", 3, ())
        assert info["merge_steps"] == steps
        assert info["seconds"] >= 0.0
    mpcf.lp_norm(X)
    info = mpcf.last_task_info()
    assert (info["threads"], info["merge_steps"], info["reason"]) == (1, 10.0, "computed on the CPU only")
    # PLFs follow the backend rule of PCFs (both backends compute them).
    mpcf.pdist(X, threads=2)
    pcf_reason = mpcf.last_task_info()["reason"]
    mpcf.pdist(mpcf.PlfCollection(X), threads=2)
    assert mpcf.last_task_info()["reason"] == pcf_reason != "computed on the CPU only"
    # A failed call leaves the last successful one's account.
    with pytest.raises(mpcf.InvalidArgumentError):
        mpcf.pdist(X, p=0.5)
    assert mpcf.last_task_info()["threads"] == 2
    # Per thread: a new thread has none.
    seen = []
    t = threading.Thread(target=lambda: seen.append(mpcf.last_task_info()))
    t.start()
    t.join()
    assert seen == [None]


# ---------------------------------------------------------------- documentation


PUBLIC_CALLABLES = [
    mpcf.pdist, mpcf.cdist, mpcf.l2_kernel, mpcf.lp_distance, mpcf.l2_inner_product,
    mpcf.lp_norm, mpcf.build_info, mpcf.has_cuda, mpcf.cuda_device_count, mpcf.last_task_info,
    mpcf.gpu_cached_bytes, mpcf.gpu_cache_limit, mpcf.set_gpu_cache_limit, mpcf.release_gpu_memory,
    mpcf.PcfCollection, mpcf.PcfCollection.from_csr,
    mpcf.PlfCollection, mpcf.landscape, mpcf.silhouette,
]


@pytest.mark.parametrize("fn", PUBLIC_CALLABLES, ids=lambda f: f.__qualname__)
def test_public_functions_have_examples_and_type_hints(fn):
    doc = inspect.getdoc(fn)
    assert doc and "Examples" in doc and ">>>" in doc
    target = fn.__init__ if inspect.isclass(fn) else fn
    hints = inspect.signature(target)
    assert hints.return_annotation is not inspect.Signature.empty


def test_all_names_exist():
    for name in mpcf.__all__:
        assert hasattr(mpcf, name), name


@pytest.mark.parametrize("obj", PUBLIC_CALLABLES + [mpcf], ids=lambda f: getattr(f, "__qualname__", "mpcf"))
def test_docstring_examples_run(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(obj, globs={}) if t.examples]
    assert tests, "no examples"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_errors_pickle_and_show_as_mpcf():
    import pickle

    err = mpcf.InvalidPcfError("PCF 1 has no breakpoints", 2, "MPCF_ERROR_INVALID_PCF")
    assert repr(err).startswith("InvalidPcfError(")
    assert type(err).__module__ == "mpcf" and mpcf.PcfCollection.__module__ == "mpcf"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is mpcf.InvalidPcfError and str(again) == str(err)
    assert (again.status, again.status_name) == (2, "MPCF_ERROR_INVALID_PCF")
    with pytest.raises(mpcf.InvalidPcfError) as info:
        mpcf.PcfCollection([[(0.0, 1.0)], [(0.0, 1.0), (0.0, 2.0)]])
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.function_index, again.breakpoint_index) == (1, 1)


def test_package_is_typed():
    assert (Path(mpcf.__file__).parent / "py.typed").is_file()


def test_register_gpu_output():
    with pytest.raises(TypeError, match="must be a NumPy array"):
        mpcf.register_gpu_output([1.0, 2.0])
    with pytest.raises(ValueError, match="C-contiguous"):
        mpcf.register_gpu_output(np.zeros((4, 4))[:, ::2])
    with pytest.raises(ValueError, match="has 0 bytes"):  # the C API's check
        mpcf.register_gpu_output(np.zeros(0))
    X = _block(300, 40)
    size = 300 * 299 // 2
    mem = np.zeros(size + 8, dtype=np.float32)
    if mpcf.cuda_device_count() == 0:
        with pytest.raises(mpcf.CudaUnavailableError, match="CUDA not available"):
            mpcf.register_gpu_output(mem)
        return
    want = mpcf.pdist(X, backend="cuda")
    mpcf.register_gpu_output(mem)
    try:
        with pytest.raises(ValueError, match="overlaps"):
            mpcf.register_gpu_output(mem[4:])
        got = mpcf.pdist(X, backend="cuda", out=mem[4 : 4 + size])
        assert got.tobytes() == want.tobytes()
        assert not mem[:4].any() and not mem[4 + size :].any()
    finally:
        mpcf.unregister_gpu_output(mem)
    with pytest.raises(ValueError, match="is not the start of a range registered"):
        mpcf.unregister_gpu_output(mem)
