#!/usr/bin/env python3
"""Tests of the `mpcf` command-line tool, run as a subprocess.

Usage: test_cli.py --mpcf PATH/TO/mpcf --example PATH/TO/example_pcfs.csv [GROUP ...]

GROUP names a test class below (KnownValues, Reference, Formats, Errors,
Usage, DefaultRun, Signals, Barcodes, PcfFiles, Plfs, Summary); without one, all run. Expected values are either
written out by hand or come from the brute-force reference in this file
(exact rational arithmetic over the union of breakpoints), which shares no
code with libmpcf. Groups that need NumPy exit with 77 (ctest's skip code)
when NumPy is missing.
"""
import argparse
import ast
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from fractions import Fraction

MPCF = None
EXAMPLE = None
INF = math.inf

try:
    import numpy as np
except ImportError:  # the groups that need it are skipped
    np = None


# ----------------------------------------------------------------------
# Running the tool
# ----------------------------------------------------------------------

def run(args, stdin=None, env_extra=None, env_drop=(), cwd=None, timeout=300):
    env = dict(os.environ)
    for k in env_drop:
        env.pop(k, None)
    if env_extra:
        env.update(env_extra)
    return subprocess.run([MPCF] + list(args), input=stdin, capture_output=True, env=env,
                          cwd=cwd, timeout=timeout)


def text(b):
    return b.decode("utf-8", "replace")


class ToolTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="mpcf-cli-test-")
        self.dir = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, content):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        return p

    def ok(self, args, **kw):
        r = run(args, **kw)
        self.assertEqual(r.returncode, 0, "mpcf %s failed (%d): %s" % (" ".join(args), r.returncode,
                                                                       text(r.stderr)))
        return r

    def load(self, path):
        self.assertIsNotNone(np, "numpy is required")
        return np.load(path)


def write_pcfs_csv(path, pcfs, ids=None, header=True):
    """pcfs: list of lists of (t_text, v_text) strings."""
    with open(path, "w") as f:
        if header:
            f.write("id,t,v\n")
        for i, pcf in enumerate(pcfs):
            name = ids[i] if ids else "f%d" % i
            for t, v in pcf:
                f.write("%s,%s,%s\n" % (name, t, v))


# ----------------------------------------------------------------------
# The independent reference
# ----------------------------------------------------------------------

def as_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def value_at(pcf, x):
    v = 0.0
    for t, val in pcf:
        if t <= x:
            v = val
        else:
            break
    return v


def reference(f, g, kind, p=1.0, a=-INF, b=INF):
    """kind 'distance' (Lp, p may be INF) or 'kernel' (integral of f*g).
    f, g: lists of (t, v) floats. Returns (value, scale), scale being the sum
    of the absolute contributions (the size rounding errors are relative to)."""
    cuts = sorted(set([t for t, _ in f] + [t for t, _ in g]))
    edges = [a] + [c for c in cuts if a < c < b] + [b]
    total = Fraction(0)
    floats = []  # contributions for non-integer p
    scale = Fraction(0)
    biggest = Fraction(0)
    for left, right in zip(edges[:-1], edges[1:]):
        x = left if left != -INF else right - 1.0
        fv = Fraction(value_at(f, x))
        gv = Fraction(value_at(g, x))
        if kind == "kernel":
            h = fv * gv
        else:
            h = abs(fv - gv)
            biggest = max(biggest, h)
        if h == 0:
            continue
        if left == -INF or right == INF:
            if kind == "kernel":
                return (INF if h > 0 else -INF), 1.0
            if p != INF:
                return INF, 1.0
            continue
        width = Fraction(right) - Fraction(left)
        if kind == "kernel" or p == 1.0:
            total += h * width
            scale += abs(h * width)
        elif p == 2.0:
            total += h * h * width
            scale += h * h * width
        elif p != INF:
            floats.append(float(h) ** p * float(width))
    if kind == "distance" and p == INF:
        return float(biggest), float(biggest)
    if kind == "kernel" or p == 1.0:
        return float(total), float(scale)
    if p == 2.0:
        return math.sqrt(total), math.sqrt(scale)
    s = math.fsum(floats)
    return s ** (1.0 / p), s ** (1.0 / p)


def random_pcfs(rng, n, max_m, nonzero_tails=True):
    """Returns (texts, values): decimal strings for the CSV and the floats
    they denote."""
    texts = []
    for i in range(n):
        m = rng.randint(1, max_m)
        t = round(rng.uniform(-3, 3), 3)
        pts = []
        for k in range(m):
            v = round(rng.uniform(-5, 5), 2)
            if k == m - 1 and not (nonzero_tails and rng.random() < 0.2):
                v = 0.0
            pts.append(("%.3f" % t, "%.2f" % v))
            t = round(t + rng.uniform(0.05, 1.5), 3)
        texts.append(pts)
    values = [[(float(t), float(v)) for t, v in pcf] for pcf in texts]
    return texts, values


def assert_close(test, got, want, scale, rtol, what):
    if math.isinf(want):
        test.assertEqual(got, want, what)
        return
    test.assertTrue(math.isfinite(got), "%s: got %r, want %r" % (what, got, want))
    test.assertLessEqual(abs(got - want), rtol * max(scale, 1e-300) + 1e-300,
                         "%s: got %r, want %r" % (what, got, want))


def condensed_pairs(n):
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def packed_index(i, j, diagonal):
    hi, lo = max(i, j), min(i, j)
    return hi * (hi + 1) // 2 + lo if diagonal else hi * (hi - 1) // 2 + lo


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# ----------------------------------------------------------------------
# Hand-computed values
# ----------------------------------------------------------------------

F = [("0", "3"), ("1", "0")]          # 3 on [0,1)
G = [("0", "1"), ("2", "0")]          # 1 on [0,2)
H = [("0", "10"), ("2", "5"), ("3", "0")]
K = [("0", "5"), ("6", "0")]


class KnownValues(ToolTest):
    NEEDS_NUMPY = True

    def test_l1_distance_of_f_and_g_is_3(self):
        src = self.write("fg.csv", "id,t,v\nf,0,3\nf,1,0\ng,0,1\ng,2,0\n")
        self.ok(["pdist", src, "-o", self.path("d.npy")])
        d = self.load(self.path("d.npy"))
        self.assertEqual(d.dtype, np.dtype("<f8"))
        self.assertEqual(d.shape, (1,))
        self.assertEqual(d.tolist(), [3.0])

    def test_l1_distance_of_h_and_k_is_25(self):
        write_pcfs_csv(self.path("hk.csv"), [H, K])
        self.ok(["pdist", self.path("hk.csv"), "-o", self.path("d.npy")])
        self.assertEqual(self.load(self.path("d.npy")).tolist(), [25.0])

    def test_l2_and_linf_distances_of_f_and_g(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        self.ok(["pdist", self.path("fg.csv"), "-p", "2", "-o", self.path("d2.npy")])
        self.ok(["pdist", self.path("fg.csv"), "-p", "inf", "-o", self.path("dinf.npy")])
        # |f - g| is 2 on [0,1) and 1 on [1,2): sqrt(4 + 1), and max 2.
        self.assertAlmostEqual(self.load(self.path("d2.npy"))[0], math.sqrt(5.0), places=14)
        self.assertEqual(self.load(self.path("dinf.npy")).tolist(), [2.0])

    def test_dense_condensed_and_packed_layouts_of_four_functions(self):
        write_pcfs_csv(self.path("four.csv"), [F, G, H, K])
        # By hand, piece by piece: F,G: 2 + 1 = 3.
        # F,H: [0,1) |3-10|=7, [1,2) 10, [2,3) 5 -> 22.  F,K: 2 + 5*5 = 27.
        # G,H: 9*2 + 5 = 23.  G,K: 4*2 + 5*4 = 28.  H,K: 5*2 + 0 + 5*3 = 25.
        want = [3, 22, 27, 23, 28, 25]
        self.ok(["pdist", self.path("four.csv"), "-o", self.path("c.npy")])
        self.ok(["pdist", self.path("four.csv"), "--layout", "dense", "-o", self.path("d.npy")])
        self.ok(["pdist", self.path("four.csv"), "--layout", "packed", "-o", self.path("p.npy")])
        self.assertEqual(self.load(self.path("c.npy")).tolist(), want)
        dense = self.load(self.path("d.npy"))
        self.assertEqual(dense.shape, (4, 4))
        self.assertEqual(dense.tolist(), [[0, 3, 22, 27], [3, 0, 23, 28], [22, 23, 0, 25],
                                          [27, 28, 25, 0]])
        # packed lower: (1,0), (2,0), (2,1), (3,0), (3,1), (3,2)
        self.assertEqual(self.load(self.path("p.npy")).tolist(), [3, 22, 23, 27, 28, 25])

    def test_kernel_is_48_24_12(self):
        src = self.write("k.csv", "a,0,4\na,3,0\nb,0,2\nb,3,0\n")
        self.ok(["kernel", src, "-o", self.path("k.npy")])
        k = self.load(self.path("k.npy"))
        self.assertEqual(k.shape, (2, 2))
        self.assertEqual(k.tolist(), [[48, 24], [24, 12]])
        self.ok(["kernel", src, "--layout", "packed", "-o", self.path("kp.npy")])
        self.assertEqual(self.load(self.path("kp.npy")).tolist(), [48, 24, 12])

    def test_norms(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        self.ok(["norm", self.path("fg.csv"), "-o", self.path("n1.npy")])
        self.ok(["norm", self.path("fg.csv"), "-p", "2", "-o", self.path("n2.npy")])
        self.assertEqual(self.load(self.path("n1.npy")).tolist(), [3.0, 2.0])
        n2 = self.load(self.path("n2.npy"))
        self.assertEqual(n2.shape, (2,))
        self.assertAlmostEqual(n2[0], 3.0, places=14)
        self.assertAlmostEqual(n2[1], math.sqrt(2.0), places=14)

    def test_cdist_shape_and_values(self):
        write_pcfs_csv(self.path("x.csv"), [F, G])
        write_pcfs_csv(self.path("y.csv"), [H, K, F])
        self.ok(["cdist", self.path("x.csv"), self.path("y.csv"), "-o", self.path("c.npy")])
        c = self.load(self.path("c.npy"))
        self.assertEqual(c.shape, (2, 3))
        self.assertEqual(c.tolist(), [[22, 27, 0], [23, 28, 3]])
        self.ok(["cdist", self.path("x.csv"), self.path("y.csv"), "--metric", "kernel",
                 "-o", self.path("k.npy")])
        # F.H = 3*10 = 30, F.K = 15, F.F = 9; G.H = 20, G.K = 10, G.F = 3.
        self.assertEqual(self.load(self.path("k.npy")).tolist(), [[30, 15, 9], [20, 10, 3]])

    def test_window(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        self.ok(["pdist", self.path("fg.csv"), "--window", "0:1", "-o", self.path("a.npy")])
        self.ok(["pdist", self.path("fg.csv"), "--window", "1.5:", "-o", self.path("b.npy")])
        self.ok(["pdist", self.path("fg.csv"), "--window", ":0.5", "-o", self.path("c.npy")])
        self.assertEqual(self.load(self.path("a.npy")).tolist(), [2.0])
        self.assertEqual(self.load(self.path("b.npy")).tolist(), [0.5])
        self.assertEqual(self.load(self.path("c.npy")).tolist(), [1.0])

    def test_non_vanishing_functions_are_infinitely_far_unless_windowed(self):
        src = self.write("c.csv", "one,0,1\ntwo,0,2\nsame,0,1\n")
        self.ok(["pdist", src, "-o", self.path("d.npy")])
        # (one,two) differ for ever: inf; (one,same) are equal: exactly 0.
        self.assertEqual(self.load(self.path("d.npy")).tolist(), [INF, 0.0, INF])
        self.ok(["pdist", src, "--window", "0:3", "-o", self.path("w.npy")])
        self.assertEqual(self.load(self.path("w.npy")).tolist(), [3.0, 0.0, 3.0])
        self.ok(["kernel", src, "-o", self.path("k.npy")])
        self.assertTrue(np.all(np.isposinf(self.load(self.path("k.npy")))))

    def test_float32(self):
        write_pcfs_csv(self.path("four.csv"), [F, G, H, K])
        self.ok(["pdist", self.path("four.csv"), "--dtype", "float32", "-o", self.path("d.npy")])
        d = self.load(self.path("d.npy"))
        self.assertEqual(d.dtype, np.dtype("<f4"))
        self.assertEqual(d.tolist(), [3, 22, 27, 23, 28, 25])


# ----------------------------------------------------------------------
# Against the brute-force reference
# ----------------------------------------------------------------------

class Reference(ToolTest):
    NEEDS_NUMPY = True

    @classmethod
    def setUpClass(cls):
        rng = random.Random(12345)
        cls.texts_x, cls.x = random_pcfs(rng, 23, 12)
        cls.texts_y, cls.y = random_pcfs(rng, 9, 7)
        cls.ids_x = ["x-%02d" % i for i in range(len(cls.x))]
        rng.shuffle(cls.ids_x)  # ids need not be sorted; order of first appearance counts

    def setUp(self):
        super().setUp()
        write_pcfs_csv(self.path("x.csv"), self.texts_x, ids=self.ids_x)
        write_pcfs_csv(self.path("y.csv"), self.texts_y, header=False)

    def check_pdist(self, extra, p, a=-INF, b=INF, f32=False):
        x = [[(as_f32(t), as_f32(v)) for t, v in pcf] for pcf in self.x] if f32 else self.x
        rtol = 2e-5 if f32 else 1e-12
        args = ["pdist", self.path("x.csv"), "-o", self.path("d.npy")] + extra
        self.ok(args)
        d = self.load(self.path("d.npy"))
        n = len(x)
        self.assertEqual(d.shape, (n * (n - 1) // 2,))
        for k, (i, j) in enumerate(condensed_pairs(n)):
            want, scale = reference(x[i], x[j], "distance", p, a, b)
            assert_close(self, float(d[k]), want, scale, rtol, "%s pair (%d,%d)" % (args, i, j))

    def test_pdist_l1(self):
        self.check_pdist([], 1.0)

    def test_pdist_l2(self):
        self.check_pdist(["-p", "2"], 2.0)

    def test_pdist_p_3_5(self):
        self.check_pdist(["-p", "3.5"], 3.5)

    def test_pdist_linf(self):
        self.check_pdist(["-p", "inf"], INF)

    def test_pdist_window(self):
        self.check_pdist(["--window", "-1:2.5"], 1.0, -1.0, 2.5)
        self.check_pdist(["-p", "2", "--window", "0.25:"], 2.0, 0.25, INF)

    def test_pdist_float32(self):
        self.check_pdist(["--dtype", "float32"], 1.0, f32=True)

    def test_pdist_one_thread_equals_all_threads(self):
        self.ok(["pdist", self.path("x.csv"), "--threads", "1", "-o", self.path("one.npy")])
        self.ok(["pdist", self.path("x.csv"), "--threads", "0", "-o", self.path("all.npy")])
        with open(self.path("one.npy"), "rb") as f1, open(self.path("all.npy"), "rb") as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_pdist_dense_and_packed(self):
        n = len(self.x)
        self.ok(["pdist", self.path("x.csv"), "--layout", "dense", "-o", self.path("d.npy")])
        self.ok(["pdist", self.path("x.csv"), "--layout", "packed", "-o", self.path("p.npy")])
        dense = self.load(self.path("d.npy"))
        packed = self.load(self.path("p.npy"))
        self.assertEqual(dense.shape, (n, n))
        self.assertEqual(packed.shape, (n * (n - 1) // 2,))
        for i in range(n):
            self.assertEqual(dense[i, i], 0.0)
            for j in range(n):
                if i == j:
                    continue
                want, scale = reference(self.x[i], self.x[j], "distance")
                assert_close(self, float(dense[i, j]), want, scale, 1e-12, "dense %d,%d" % (i, j))
                self.assertEqual(float(packed[packed_index(i, j, False)]), float(dense[i, j]))

    def test_kernel_dense_and_packed(self):
        n = len(self.x)
        self.ok(["kernel", self.path("x.csv"), "-o", self.path("k.npy")])
        self.ok(["kernel", self.path("x.csv"), "--layout", "packed", "-o", self.path("p.npy")])
        k = self.load(self.path("k.npy"))
        packed = self.load(self.path("p.npy"))
        self.assertEqual(k.shape, (n, n))
        self.assertEqual(packed.shape, (n * (n + 1) // 2,))
        for i in range(n):
            for j in range(n):
                want, scale = reference(self.x[i], self.x[j], "kernel")
                assert_close(self, float(k[i, j]), want, scale, 1e-12, "kernel %d,%d" % (i, j))
                self.assertEqual(float(packed[packed_index(i, j, True)]), float(k[i, j]))

    def test_kernel_window(self):
        n = len(self.x)
        self.ok(["kernel", self.path("x.csv"), "--window", "-2:1", "-o", self.path("k.npy")])
        k = self.load(self.path("k.npy"))
        for i in range(n):
            for j in range(n):
                want, scale = reference(self.x[i], self.x[j], "kernel", a=-2.0, b=1.0)
                assert_close(self, float(k[i, j]), want, scale, 1e-12, "kernel %d,%d" % (i, j))

    def test_cdist_distance_and_kernel(self):
        self.ok(["cdist", self.path("x.csv"), self.path("y.csv"), "-p", "2",
                 "-o", self.path("c.npy")])
        self.ok(["cdist", self.path("x.csv"), self.path("y.csv"), "--metric", "kernel",
                 "-o", self.path("k.npy")])
        c = self.load(self.path("c.npy"))
        k = self.load(self.path("k.npy"))
        self.assertEqual(c.shape, (len(self.x), len(self.y)))
        self.assertEqual(k.shape, (len(self.x), len(self.y)))
        for i, f in enumerate(self.x):
            for j, g in enumerate(self.y):
                want, scale = reference(f, g, "distance", 2.0)
                assert_close(self, float(c[i, j]), want, scale, 1e-12, "cdist %d,%d" % (i, j))
                want, scale = reference(f, g, "kernel")
                assert_close(self, float(k[i, j]), want, scale, 1e-12, "cdist kernel %d,%d" % (i, j))

    def test_norms(self):
        zero = [(0.0, 0.0)]
        for p, flag in ((1.0, "1"), (2.0, "2"), (INF, "inf")):
            self.ok(["norm", self.path("x.csv"), "-p", flag, "-o", self.path("n.npy")])
            got = self.load(self.path("n.npy"))
            self.assertEqual(got.shape, (len(self.x),))
            for i, f in enumerate(self.x):
                want, scale = reference(f, zero, "distance", p)
                assert_close(self, float(got[i]), want, scale, 1e-12, "norm p=%s %d" % (flag, i))

    def test_csv_output_matches_npy(self):
        self.ok(["pdist", self.path("x.csv"), "-o", self.path("d.npy")])
        self.ok(["pdist", self.path("x.csv"), "-o", self.path("d.csv")])
        from_npy = self.load(self.path("d.npy"))
        with open(self.path("d.csv")) as f:
            from_csv = [float(line) for line in f]
        # 17 significant digits read back to the same double.
        self.assertEqual(from_csv, from_npy.tolist())


    def knn_reference(self, extra, second, k, exclude_self):
        """Rows of the tool's own full matrix (pdist --layout dense, or cdist;
        checked against the reference above) sorted by (distance, index)."""
        if second is None:
            self.ok(["pdist", self.path("x.csv"), "--layout", "dense", "-o",
                     self.path("full.npy")] + extra)
        else:
            self.ok(["cdist", self.path("x.csv"), second, "-o", self.path("full.npy")] + extra)
        D = self.load(self.path("full.npy"))
        out = []
        for i in range(D.shape[0]):
            cands = sorted((float(D[i, j]), j) for j in range(D.shape[1])
                           if not (exclude_self and j == i))
            out.append(cands[:k])
        return out

    def test_knn_npy_and_csv(self):
        for extra in ([], ["-p", "2"]):
            self.ok(["knn", self.path("x.csv"), "-k", "5", "-o", self.path("d.npy"),
                     "--indices", self.path("i.npy")] + extra)
            d = self.load(self.path("d.npy"))
            i = self.load(self.path("i.npy"))
            self.assertEqual((d.shape, i.shape, i.dtype), ((23, 5), (23, 5), np.dtype("<i8")))
            want = self.knn_reference(extra, None, 5, True)
            for row in range(23):
                self.assertEqual(i[row].tolist(), [j for _, j in want[row]])
                self.assertEqual(d[row].tolist(), [v for v, _ in want[row]])
            self.ok(["knn", self.path("x.csv"), "-k", "5", "-o", self.path("n.csv")] + extra)
            with open(self.path("n.csv")) as f:
                rows = [line.strip().split(",") for line in f]
            self.assertEqual(rows[0], ["i", "j", "distance"])
            self.assertEqual([(int(a), int(b)) for a, b, _ in rows[1:]],
                             [(r, j) for r in range(23) for j in i[r].tolist()])
            self.assertEqual([float(c) for _, _, c in rows[1:]], d.ravel().tolist())

    def test_knn_against_a_second_file_with_ids(self):
        self.ok(["knn", self.path("x.csv"), self.path("y.csv"), "-k", "9", "-o",
                 self.path("n.csv"), "--with-ids"])
        want = self.knn_reference([], self.path("y.csv"), 9, False)
        with open(self.path("n.csv")) as f:
            rows = [line.strip().split(",") for line in f]
        self.assertEqual(rows[0], ["id", "neighbour_id", "distance"])
        got = [(a, b) for a, b, _ in rows[1:]]
        self.assertEqual(got, [(self.ids_x[r], "f%d" % j) for r in range(23) for _, j in want[r]])
        r = run(["knn", self.path("x.csv"), self.path("y.csv"), "-k", "10"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("knn -k 10: k = 10 is more than the 9 functions of Y", text(r.stderr))
        r = run(["knn", self.path("x.csv"), "-k", "23"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("knn -k 23: k = 23 is more than the 22 other functions of X", text(r.stderr))


# ----------------------------------------------------------------------
# Formats: CSV input dialect, .npy bytes, CSV output, stdin/stdout
# ----------------------------------------------------------------------

def parse_npy(path):
    """Reads a .npy file without NumPy and checks the version 1.0 layout."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:6] == b"\x93NUMPY", raw[:6]
    assert raw[6:8] == b"\x01\x00", raw[6:8]
    hlen = raw[8] | (raw[9] << 8)
    header = raw[10:10 + hlen]
    assert (10 + hlen) % 64 == 0, hlen
    assert header.endswith(b"\n"), header
    meta = ast.literal_eval(header.decode("latin1").strip())
    fmt = {"<f8": "d", "<f4": "f"}[meta["descr"]]
    count = 1
    for s in meta["shape"]:
        count *= s
    data = raw[10 + hlen:]
    assert len(data) == count * struct.calcsize(fmt), (len(data), count)
    return meta, list(struct.unpack("<%d%s" % (count, fmt), data)), data


class Formats(ToolTest):
    NEEDS_NUMPY = False

    def test_npy_header_and_bytes(self):
        write_pcfs_csv(self.path("four.csv"), [F, G, H, K])
        self.ok(["pdist", self.path("four.csv"), "-o", self.path("c.npy")])
        meta, values, _ = parse_npy(self.path("c.npy"))
        self.assertEqual(meta, {"descr": "<f8", "fortran_order": False, "shape": (6,)})
        self.assertEqual(values, [3, 22, 27, 23, 28, 25])
        self.ok(["kernel", self.path("four.csv"), "--dtype", "float32", "-o", self.path("k.npy")])
        meta, values, _ = parse_npy(self.path("k.npy"))
        self.assertEqual(meta, {"descr": "<f4", "fortran_order": False, "shape": (4, 4)})
        self.assertEqual(values[0], 9.0)  # F.F = 3*3*1

    def test_npy_extension_is_case_insensitive_and_format_overrides_it(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        self.ok(["pdist", self.path("fg.csv"), "-o", self.path("D.NPY")])
        self.assertEqual(parse_npy(self.path("D.NPY"))[1], [3.0])
        self.ok(["pdist", self.path("fg.csv"), "-o", self.path("d.bin"), "--format", "npy"])
        self.assertEqual(parse_npy(self.path("d.bin"))[1], [3.0])
        self.ok(["pdist", self.path("fg.csv"), "-o", self.path("d.npy"), "--format", "csv"])
        with open(self.path("d.npy")) as f:
            self.assertEqual(f.read(), "3\n")

    def test_csv_input_dialect(self):
        # BOM, CRLF, comments, blank lines, blanks around fields, quoted ids
        # with commas and quotes, a header with other names, exponents.
        content = ("\ufeffname,time,value\r\n"
                   "# a comment\r\n"
                   "\r\n"
                   '"x,1",0,3\r\n'
                   '"x,1", 1 ,0\r\n'
                   "  y  ,0,1e0\r\n"
                   "   # indented comment\n"
                   "y,2E0,0\n"
                   '"q""uote",0,1\n'
                   '"q""uote",0.5,1')  # no final newline
        self.write("d.csv", content.encode("utf-8"))
        r = self.ok(["pdist", self.path("d.csv"), "--layout", "dense", "--with-ids", "-o", "-"])
        lines = text(r.stdout).splitlines()
        self.assertEqual(lines[0], 'id,"x,1",y,"q""uote"')
        self.assertEqual(lines[1], '"x,1",0,3,inf')
        self.assertEqual(lines[2], "y,3,0,inf")
        self.assertEqual(lines[3], '"q""uote",inf,inf,0')

    def test_lines_longer_than_the_read_buffer(self):
        long_id = "L" * 200000  # several read chunks on one line
        self.write("d.csv", "%s,0,1\n%s,1,0\nb,0,2\nb,1,0\n" % (long_id, long_id))
        r = self.ok(["norm", self.path("d.csv"), "--with-ids", "-o", "-"])
        self.assertEqual(text(r.stdout), "id,norm\n%s,1\nb,2\n" % long_id)
        r = run(["pdist", self.write("e.csv", "%s,0,1\nx,0,1\n%s,1,0\n" % (long_id, long_id))])
        self.assertEqual(r.returncode, 1)
        # The message shows the id cut to 40 characters.
        self.assertIn("e.csv:3: id '%s...' appears again" % ("L" * 40), text(r.stderr))

    def test_functions_keep_the_order_of_first_appearance(self):
        self.write("d.csv", "zeta,0,1\nzeta,1,0\nalpha,0,2\nalpha,1,0\nmid,0,4\nmid,1,0\n")
        r = self.ok(["norm", self.path("d.csv"), "--with-ids", "-o", "-"])
        self.assertEqual(text(r.stdout), "id,norm\nzeta,1\nalpha,2\nmid,4\n")

    def test_csv_output_shapes(self):
        write_pcfs_csv(self.path("four.csv"), [F, G, H, K], ids=["f", "g", "h", "k"])
        r = self.ok(["pdist", self.path("four.csv"), "-o", "-"])
        self.assertEqual(text(r.stdout), "3\n22\n27\n23\n28\n25\n")
        r = self.ok(["pdist", self.path("four.csv"), "-o", "-", "--with-ids"])
        self.assertEqual(text(r.stdout), "id_1,id_2,distance\nf,g,3\nf,h,22\nf,k,27\ng,h,23\n"
                                         "g,k,28\nh,k,25\n")
        r = self.ok(["pdist", self.path("four.csv"), "-o", "-", "--with-ids", "--layout", "packed"])
        self.assertEqual(text(r.stdout), "id_1,id_2,distance\ng,f,3\nh,f,22\nh,g,23\nk,f,27\n"
                                         "k,g,28\nk,h,25\n")
        r = self.ok(["kernel", self.path("four.csv"), "-o", "-", "--layout", "packed",
                     "--with-ids"])
        self.assertEqual(text(r.stdout).splitlines()[:4],
                         ["id_1,id_2,kernel", "f,f,9", "g,f,3", "g,g,2"])
        r = self.ok(["pdist", self.path("four.csv"), "-o", self.path("dense.csv"),
                     "--layout", "dense"])
        with open(self.path("dense.csv")) as f:
            self.assertEqual(f.read(), "0,3,22,27\n3,0,23,28\n22,23,0,25\n27,28,25,0\n")
        write_pcfs_csv(self.path("y.csv"), [H], ids=["h"])
        r = self.ok(["cdist", self.path("four.csv"), self.path("y.csv"), "-o", "-", "--with-ids"])
        self.assertEqual(text(r.stdout), "id,h\nf,22\ng,23\nh,0\nk,25\n")

    def test_csv_output_round_trips_float32_and_inf(self):
        # a = 0.1 on [0,1), b = 0.3 on [0,1), c = 0.1 for ever.
        self.write("d.csv", "a,0,0.1\na,1,0\nb,0,0.3\nb,1,0\nc,0,0.1\n")
        r = self.ok(["pdist", self.path("d.csv"), "--dtype", "float32", "--window", "0:1",
                     "-o", "-"])
        got = [float(s) for s in text(r.stdout).split()]
        want = [abs(as_f32(0.3) - as_f32(0.1)), 0.0, as_f32(0.3) - as_f32(0.1)]
        self.assertEqual([as_f32(g) for g in got], [as_f32(w) for w in want])
        r = self.ok(["pdist", self.path("d.csv"), "-o", "-"])
        # |0.1 - 0.3| in double is 0.19999999999999998; c differs from a and b for ever.
        self.assertEqual(text(r.stdout).split(), ["0.19999999999999998", "inf", "inf"])

    def test_stdin_input(self):
        data = "f,0,3\nf,1,0\ng,0,1\ng,2,0\n"
        r = self.ok(["pdist", "-", "-o", "-"], stdin=data.encode())
        self.assertEqual(text(r.stdout), "3\n")
        self.write("y.csv", "h,0,1\nh,2,0\n")
        r = self.ok(["cdist", "-", self.path("y.csv"), "-o", "-"], stdin=data.encode())
        self.assertEqual(text(r.stdout), "3\n0\n")

    def test_output_replaces_an_existing_file(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        self.write("out.csv", "old content that is longer than the new one\n")
        self.ok(["pdist", self.path("fg.csv"), "-o", self.path("out.csv")])
        with open(self.path("out.csv")) as f:
            self.assertEqual(f.read(), "3\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["fg.csv", "out.csv"])

    def test_writing_a_result_prints_nothing_unless_asked(self):
        write_pcfs_csv(self.path("fg.csv"), [F, G])
        r = self.ok(["pdist", self.path("fg.csv"), "-o", self.path("d.npy")])
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr, b"")  # not a terminal: no progress bar
        r = self.ok(["pdist", self.path("fg.csv"), "-o", self.path("d.npy"), "--summary"])
        self.assertIn("n = 2 functions", text(r.stdout))
        r = self.ok(["pdist", self.path("fg.csv"), "-o", "-", "--summary"])
        self.assertEqual(text(r.stdout), "3\n")      # the result alone on stdout
        self.assertIn("checksum", text(r.stderr))   # the summary on stderr

    def test_progress_bar_when_forced(self):
        rng = random.Random(7)
        texts, _ = random_pcfs(rng, 60, 20)
        write_pcfs_csv(self.path("x.csv"), texts)
        r = self.ok(["pdist", self.path("x.csv"), "--progress", "-o", self.path("d.npy")])
        err = text(r.stderr)
        self.assertIn("100.0%", err)
        self.assertIn("1770/1770 entries", err)  # 60 * 59 / 2
        self.assertTrue(err.endswith("\n"))
        r = self.ok(["pdist", self.path("x.csv"), "--quiet"])
        self.assertEqual(r.stdout + r.stderr, b"")

    def test_summary_of_a_file(self):
        write_pcfs_csv(self.path("four.csv"), [F, G, H, K])
        r = self.ok(["pdist", self.path("four.csv")])
        out = text(r.stdout)
        self.assertIn("n = 4 functions, 9 breakpoints", out)
        # merge steps of pdist: (n - 1) * total breakpoints
        self.assertRegex(out, r"merge steps\s+27 ")
        self.assertIn("sum = 128,", out)  # 3 + 22 + 27 + 23 + 28 + 25
        r = self.ok(["kernel", self.path("four.csv")])
        self.assertRegex(text(r.stdout), r"merge steps\s+45 ")  # (n + 1) * total
        r = self.ok(["norm", self.path("four.csv")])
        self.assertRegex(text(r.stdout), r"merge steps\s+13")   # total + n

    def test_help_and_version(self):
        for args in (["--help"], ["-h"], ["help"], ["pdist", "--help"]):
            r = self.ok(args)
            self.assertIn("Usage: mpcf", text(r.stdout))
            self.assertIn("Exit codes", text(r.stdout))
        r = self.ok(["--version"])
        out = text(r.stdout)
        self.assertRegex(out, r"^mpcf \d+\.\d+\.\d+ ")
        self.assertIn("libmpcf", out.splitlines()[1])


# ----------------------------------------------------------------------
# Bad input files: exit 1 and a message naming the line
# ----------------------------------------------------------------------

BAD_FILES = [
    # name, content, extra args, message fragment (":LINE:" included where there is a line).
    # The CSV reader checks the CSV; the numbers (finite, strictly increasing
    # times) are libmpcf's rule, its message behind the line and id.
    ("missing field", "id,t,v\na,0,1\na,1\n", [], "bad.csv:3: expected 3 fields (id,t,v), found 2"),
    ("extra field", "a,0,1,7\n", [], "bad.csv:1: expected 3 fields (id,t,v), found 4"),
    ("bad number", "a,0,1\n\na,1,abc\n", [], "bad.csv:3: value 'abc' is not a number"),
    ("bad time", "a,0,1\na,1x,0\n", [], "bad.csv:2: time '1x' is not a number"),
    ("empty time", "a,0,1\na,,0\n", [], "bad.csv:2: time is empty"),
    ("NaN value", "a,0,1\n# c\na,1,nan\n", [],
     "bad.csv:3: id 'a': PCF 0, breakpoint 1: value is nan; values must be finite"),
    ("NaN time", "a,NaN,1\n", [],
     "bad.csv:1: id 'a': PCF 0, breakpoint 0: time is nan; breakpoint times must be finite"),
    ("inf value", "b,0,1\na,0,inf\n", [],
     "bad.csv:2: id 'a': PCF 1, breakpoint 0: value is inf; values must be finite"),
    ("-inf time", "a,-inf,1\n", [],
     "bad.csv:1: id 'a': PCF 0, breakpoint 0: time is -inf; breakpoint times must be finite"),
    ("overflow", "a,0,1e400\n", [], "bad.csv:1: value '1e400' is out of the float64 range"),
    ("float32 overflow", "a,0,1e39\n", ["--dtype", "float32"],
     "bad.csv:1: value '1e39' is out of the float32 range"),
    ("duplicate t", "id,t,v\na,0,1\na,1,2\na,1,0\n", [],
     "bad.csv:4: id 'a': PCF 0, breakpoint 2: time 1 repeats the previous time 1; "
     "times must be strictly increasing\n"),
    ("unsorted t", "a,0,1\n\n# two lines between\na,2,2\na,1.5,0\n", [],
     "bad.csv:5: id 'a': PCF 0, breakpoint 2: time 1.5 is smaller than the previous time 2; "
     "times must be strictly increasing\n"),
    ("t equal in float32", "a,1,1\na,1.00000001,0\n", ["--dtype", "float32"],
     "bad.csv:2: id 'a': PCF 0, breakpoint 1: time 1 repeats the previous time 1; times must be "
     "strictly increasing (read as float32; --dtype float64 keeps apart times that float32 rounds "
     "to one)"),
    ("PLF times", "a,0,1\na,0,0\n", ["--type", "linear"],
     "bad.csv:2: id 'a': PCF 0, breakpoint 1: time 0 repeats the previous time 0"),
    ("non-contiguous id", "a,0,1\na,1,0\nb,0,1\nb,1,0\na,2,3\n", [],
     "bad.csv:5: id 'a' appears again after other ids (its earlier rows are on lines 1-2)"),
    ("empty id", "a,0,1\n,1,0\n", [], "bad.csv:2: the id (first field) is empty"),
    ("unterminated quote", 'a,0,1\n"b,0,1\n', [], "bad.csv:2: a quoted field has no closing quote"),
    ("text after quote", '"b"c,0,1\n', [], "bad.csv:1: unexpected text after the closing quote"),
    ("NUL byte", "a,0,1\na,1\x00,0\n", [], "bad.csv:2: the line contains a NUL byte"),
    ("empty file", "", [], "bad.csv: no data rows"),
    ("header only", "id,t,v\n# nothing\n\n", [], "bad.csv: no data rows"),
]


class Errors(ToolTest):
    NEEDS_NUMPY = False

    def check_bad(self, content, extra, fragment, command="pdist"):
        src = self.write("bad.csv", content)
        self.write("out.npy", "previous result")
        r = run([command, src, "-o", self.path("out.npy")] + extra, cwd=self.dir)
        err = text(r.stderr)
        self.assertEqual(r.returncode, 1, "exit code for %r: %s" % (content, err))
        self.assertTrue(err.startswith("mpcf: error: "), err)
        self.assertIn(fragment, err)
        self.assertEqual(r.stdout, b"")
        # Nothing written: the old output is intact and no temporary is left.
        with open(self.path("out.npy")) as f:
            self.assertEqual(f.read(), "previous result")
        self.assertEqual(sorted(os.listdir(self.dir)), ["bad.csv", "out.npy"])

    def test_bad_files(self):
        for name, content, extra, fragment in BAD_FILES:
            with self.subTest(name):
                self.check_bad(content, extra, fragment)

    def test_bad_files_for_every_command(self):
        for command in ("kernel", "norm"):
            with self.subTest(command):
                self.check_bad("a,0,1\na,1,abc\n", [], "bad.csv:2: value 'abc' is not a number",
                               command)

    def test_cdist_names_the_bad_file(self):
        good = self.write("good.csv", "a,0,1\na,1,0\n")
        bad = self.write("bad.csv", "a,0,1\nb,0,x\n")
        for args in ([good, bad], [bad, good]):
            r = run(["cdist"] + args)
            self.assertEqual(r.returncode, 1)
            self.assertIn("bad.csv:2: value 'x' is not a number", text(r.stderr))

    def test_missing_file(self):
        r = run(["pdist", self.path("nope.csv")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open '%s': No such file or directory" % self.path("nope.csv"),
                      text(r.stderr))

    def test_directory_as_input(self):
        r = run(["pdist", self.dir])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot read '%s'" % self.dir, text(r.stderr))

    def test_unwritable_output(self):
        src = self.write("fg.csv", "f,0,3\nf,1,0\ng,0,1\ng,2,0\n")
        r = run(["pdist", src, "-o", self.path("no/such/dir/d.npy")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("the directory '%s' does not exist" % self.path("no/such/dir"),
                      text(r.stderr))
        # A file that exists but cannot be replaced (procfs refuses new files
        # next to it; non-root users may not write it at all): the message
        # names that cause, not the temporary file's ENOENT.
        if os.path.isfile("/proc/version"):
            r = run(["pdist", src, "-o", "/proc/version"])
            self.assertEqual(r.returncode, 1)
            err = text(r.stderr)
            self.assertTrue("Permission denied" in err or
                            "its directory does not accept the temporary file" in err, err)
        r = run(["pdist", src, "-o", self.dir])
        self.assertEqual(r.returncode, 1)
        self.assertIn("is a directory", text(r.stderr))
        if os.path.exists("/dev/full"):
            r = run(["pdist", src, "-o", "/dev/full"])
            self.assertEqual(r.returncode, 1)
            self.assertIn("cannot write '/dev/full'", text(r.stderr))

    def test_missing_example_dataset(self):
        r = run([], env_extra={"MPCF_EXAMPLE_DATA": self.path("nope.csv")})
        self.assertEqual(r.returncode, 1)
        self.assertIn("MPCF_EXAMPLE_DATA is set to '%s'" % self.path("nope.csv"), text(r.stderr))

    def test_cuda_backend_without_cuda_is_a_runtime_error(self):
        src = self.write("fg.csv", "f,0,3\nf,1,0\ng,0,1\ng,2,0\n")
        r = run(["pdist", src, "--backend", "cuda", "-o", self.path("d.npy")])
        if r.returncode == 0:
            self.skipTest("this libmpcf has a usable CUDA device")
        self.assertEqual(r.returncode, 3, text(r.stderr))
        self.assertIn("MPCF_ERROR_CUDA_UNAVAILABLE", text(r.stderr))
        self.assertFalse(os.path.exists(self.path("d.npy")))


# ----------------------------------------------------------------------
# Bad command lines: exit 2
# ----------------------------------------------------------------------

BAD_USAGE = [
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["data.csv"], "unknown command 'data.csv'"),
    (["pdist", "--bogus"], "unknown option '--bogus'"),
    (["pdist", "-x"], "unknown option '-x'"),
    # p, the window, threads, the CUDA threshold and k are judged by libmpcf
    # (its message after the option).
    (["pdist", "-p", "0.5"], "-p 0.5: p = 0.5 is not a valid exponent; p must be >= 1"),
    (["pdist", "-p", "0"], "-p 0: p = 0 is not a valid exponent"),
    (["pdist", "-p", "-inf"], "-p -inf: p = -inf is not a valid exponent"),
    (["pdist", "-p", "nan"], "-p nan: p = nan is not a valid exponent"),
    (["pdist", "-p", "two"], "-p 'two' is not a number"),
    (["pdist", "-p"], "option -p needs a value"),
    (["pdist", "--window", "5:1"], "--window '5:1': window [5, 1) is invalid; it needs a < b"),
    (["pdist", "--window", "2:2"], "--window '2:2': window [2, 2) is invalid; it needs a < b"),
    (["pdist", "--window", "5"], "--window '5' is not of the form A:B"),
    (["pdist", "--window", "1:2:3"], "--window '1:2:3' is not of the form A:B"),
    (["pdist", "--window", "a:1"], "--window 'a:1': A = 'a' is not a number"),
    (["pdist", "--window=0:nan"], "--window '0:nan': window [0, nan) is invalid"),
    (["pdist", "--dtype", "float16"], "--dtype 'float16' is not one of float32, float64"),
    (["pdist", "--backend", "tpu"], "--backend 'tpu' is not one of auto, cpu, cuda"),
    (["pdist", "--threads", "-1"], "--threads -1: threads = -1 is outside 0..4096"),
    (["pdist", "--threads", "5000"], "--threads 5000: threads = 5000 is outside 0..4096"),
    (["pdist", "--threads", "two"], "--threads 'two' is not a whole number"),
    (["pdist", "--layout", "square"], "--layout 'square' is not one of"),
    (["kernel", "--layout", "condensed"], "--layout condensed is not available for kernel"),
    (["kernel", "-p", "2"], "-p has no meaning for kernel"),
    (["cdist", "a.csv", "b.csv", "--metric", "kernel", "-p", "2"], "-p has no meaning for cdist"),
    (["cdist", "a.csv"], "cdist needs two input files"),
    (["cdist", "-", "-"], "only one of FILE_X and FILE_Y can be '-'"),
    (["pdist", "a.csv", "b.csv"], "pdist takes at most one input FILE (got 2)"),
    (["pdist", "a", "b", "c"], "too many input files ('c')"),
    (["norm", "--layout", "dense"], "--layout applies to pdist and kernel only"),
    (["pdist", "--metric", "kernel"], "--metric applies to cdist only"),
    (["pdist", "--format", "npy"], "--format needs an output path"),
    (["pdist", "--with-ids", "-o", "x.npy"], "--with-ids needs CSV output"),
    (["pdist", "--with-ids"], "--with-ids needs CSV output"),
    (["pdist", "--quiet", "--progress"], "--quiet cannot be combined with --progress"),
    (["pdist", "--quiet=yes"], "option --quiet takes no value"),
    (["pdist", "-o", ""], "-o/--output needs a path"),
    (["pdist", "--cuda-threshold", "-5"],
     "--cuda-threshold -5: CUDA threshold must be a non-negative number of merge steps"),
    (["pdist", "--cuda-threshold", "lots"], "--cuda-threshold 'lots' is not a number"),
    (["knn"], "knn needs -k K"),
    (["knn", "-k", "0"], "knn -k 0: k = 0; k must be at least 1"),  # after reading the example
    (["knn", "-k", "two"], "-k 'two' is not a whole number"),
    (["knn", "-k", "-3"], "-k '-3' is not a whole number"),
    (["knn", "-k", "2", "--layout", "dense"], "--layout applies to pdist and kernel only"),
    (["knn", "a", "b", "c", "-k", "1"], "too many input files ('c'); knn takes at most two"),
    (["knn", "-", "-", "-k", "1"], "only one of FILE and FILE_Y can be '-'"),
    (["pdist", "-k", "2"], "-k applies to knn only"),
    (["knn", "-k", "2", "--indices", "i.npy", "-o", "d.csv"], "--indices goes with .npy output"),
    (["knn", "-k", "2", "--indices", "d.npy", "-o", "d.npy"], "--indices and -o name the same file"),
]


class Usage(ToolTest):
    NEEDS_NUMPY = False

    def test_bad_command_lines(self):
        for args, fragment in BAD_USAGE:
            with self.subTest(" ".join(args)):
                r = run(args, cwd=self.dir)
                err = text(r.stderr)
                self.assertEqual(r.returncode, 2, "%s: %s" % (args, err))
                self.assertTrue(err.startswith("mpcf: error: "), err)
                self.assertIn(fragment, err)
                self.assertIn("Try 'mpcf --help'", err)
                self.assertEqual(r.stdout, b"")
                self.assertEqual(os.listdir(self.dir), [])

    def test_options_may_follow_files_and_take_attached_values(self):
        src = self.write("fg.csv", "f,0,3\nf,1,0\ng,0,1\ng,2,0\n")
        r = self.ok(["pdist", src, "-p2", "--output=-", "--window=0:1"])
        self.assertEqual(text(r.stdout), "2\n")  # |3 - 1| on [0, 1), p = 2: sqrt(4)
        r = self.ok(["pdist", "-o", "-", "--", src])
        self.assertEqual(text(r.stdout), "3\n")


# ----------------------------------------------------------------------
# The default run on the example dataset
# ----------------------------------------------------------------------

def read_example(path):
    pcfs = {}
    order = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line == "id,t,v":
                continue
            i, t, v = line.split(",")
            if i not in pcfs:
                pcfs[i] = []
                order.append(i)
            pcfs[i].append((float(t), float(v)))
    return [pcfs[i] for i in order]


def parse_summary(out):
    m = re.search(r"n = (\d+) functions, (\d+) breakpoints", out)
    s = re.search(r"sum = (\S+), fnv1a64 = ([0-9a-f]{16})", out)
    steps = re.search(r"merge steps\s+(\d+)", out)
    return int(m.group(1)), int(m.group(2)), float(s.group(1)), int(s.group(2), 16), \
        int(steps.group(1))


class DefaultRun(ToolTest):
    NEEDS_NUMPY = True

    def test_example_dataset_is_small_and_betti_like(self):
        self.assertLess(os.path.getsize(EXAMPLE), 1 << 20)
        pcfs = read_example(EXAMPLE)
        self.assertGreaterEqual(len(pcfs), 200)
        for f in pcfs:
            self.assertEqual(f[0][0], 0.0)
            self.assertEqual(f[-1][1], 0.0)
            self.assertTrue(all(v >= 0 and v == int(v) for _, v in f))
            gaps = [b[0] - a[0] for a, b in zip(f, f[1:])]
            self.assertTrue(all(g > 0 for g in gaps))

    def test_no_arguments_prints_the_summary(self):
        r = self.ok([], env_drop=["MPCF_EXAMPLE_DATA"])
        out = text(r.stdout)
        self.assertIn("example dataset", out)
        for word in ("backend", "time", "merge steps/s", "checksum"):
            self.assertIn(word, out)
        self.assertLessEqual(len(out.splitlines()), 24)  # one screen
        used = re.search(r"^\s+input\s+(.+)$", out, re.M).group(1)
        pcfs = read_example(used)
        n, total, _, _, steps = parse_summary(out)
        self.assertEqual(n, len(pcfs))
        self.assertEqual(total, sum(len(f) for f in pcfs))
        self.assertEqual(steps, (n - 1) * total)
        r2 = self.ok(["pdist"], env_drop=["MPCF_EXAMPLE_DATA"])
        self.assertEqual(parse_summary(text(r2.stdout))[:4], parse_summary(out)[:4])

    def test_checksum_and_values_of_the_example(self):
        r = self.ok(["pdist", "-o", self.path("d.npy")],
                    env_extra={"MPCF_EXAMPLE_DATA": EXAMPLE})
        _, _, s, h, _ = parse_summary(text(r.stdout))
        d = self.load(self.path("d.npy"))
        pcfs = read_example(EXAMPLE)
        n = len(pcfs)
        self.assertEqual(d.shape, (n * (n - 1) // 2,))
        # The checksum: the plain double sum in index order and FNV-1a-64 of
        # the little-endian bytes.
        total = 0.0
        for x in d.tolist():
            total += x
        self.assertEqual(s, total)
        self.assertEqual(h, fnv1a64(d.astype("<f8").tobytes()))
        # A sample of the distances against the reference.
        rng = random.Random(99)
        pairs = condensed_pairs(n)
        for k in rng.sample(range(len(pairs)), 300):
            i, j = pairs[k]
            want, scale = reference(pcfs[i], pcfs[j], "distance")
            assert_close(self, float(d[k]), want, scale, 1e-12, "example pair (%d,%d)" % (i, j))

    def test_environment_variable_overrides_the_example(self):
        tiny = self.write("tiny.csv", "f,0,3\nf,1,0\ng,0,1\ng,2,0\n")
        r = self.ok([], env_extra={"MPCF_EXAMPLE_DATA": tiny})
        out = text(r.stdout)
        self.assertIn(tiny, out)
        n, total, s, h, steps = parse_summary(out)
        self.assertEqual((n, total, s, steps), (2, 4, 3.0, 4))
        self.assertEqual(h, fnv1a64(struct.pack("<d", 3.0)))
        for command in ("kernel", "norm"):
            r = self.ok([command], env_extra={"MPCF_EXAMPLE_DATA": tiny})
            self.assertIn("example dataset", text(r.stdout))


# ----------------------------------------------------------------------
# Signals: Ctrl-C and SIGTERM cancel, free everything, write nothing
# ----------------------------------------------------------------------

class Signals(ToolTest):
    NEEDS_NUMPY = False

    def interrupt(self, sig, code):
        out = self.path("d.npy")
        # libmpcf's testing hook holds the task until it is cancelled, so the
        # signal always arrives while the computation runs.
        env = dict(os.environ, MPCF_DEBUG_HOLD_TASKS="1")
        p = subprocess.Popen([MPCF, "pdist", EXAMPLE, "--backend", "cpu", "--threads", "1",
                              "--progress", "-o", out], stderr=subprocess.PIPE, env=env)
        seen = b""
        while b"starting" not in seen and b"%" not in seen:
            chunk = p.stderr.read1(4096) if hasattr(p.stderr, "read1") else p.stderr.read(1)
            if not chunk:
                break
            seen += chunk
        self.assertTrue(b"starting" in seen or b"%" in seen, "no progress was reported")
        self.assertIsNone(p.poll(), "the computation ended before the signal was sent")
        p.send_signal(sig)
        rest = p.stderr.read()
        rc = p.wait(timeout=300)  # a guard against a hang, not a speed requirement
        err = text(seen + rest)
        self.assertEqual(rc, code, err)
        self.assertIn("interrupted by", err)
        self.assertIn("nothing was written", err)
        self.assertEqual(os.listdir(self.dir), [])  # neither result nor temporary

    def test_ctrl_c_cancels(self):
        self.interrupt(signal.SIGINT, 130)

    def test_sigterm_cancels(self):
        self.interrupt(signal.SIGTERM, 143)


# ----------------------------------------------------------------------
# Barcodes (--from-barcodes) and PCF files (the mpcf binary format)
# ----------------------------------------------------------------------

def ref_betti(bars):
    """The Betti curve of `bars` as breakpoints, from the definition: the
    number of bars with birth <= t < death at each bar end where it changes."""
    out, previous = [], 0
    for t in sorted({x for b, d in bars for x in (b, d) if x != INF}):
        v = sum(1 for b, d in bars if b <= t < d)
        if v != previous:
            out.append((t, float(v)))
            previous = v
    return out or [(0.0, 0.0)]


def ref_stable_rank(bars):
    out, previous = [], 0
    for t in sorted({0.0} | {d - b for b, d in bars if d != INF}):
        v = sum(1 for b, d in bars if d - b > t)
        if v != previous:
            out.append((t, float(v)))
            previous = v
    return out or [(0.0, 0.0)]


def write_barcodes_csv(path, barcodes, header=True):
    with open(path, "w") as f:
        if header:
            f.write("id,birth,death\n")
        for name, bars in barcodes:
            for b, d in bars:
                f.write("%s,%s,%s\n" % (name, repr(b), "inf" if d == INF else repr(d)))


def pcf_file_bytes(pcfs, shape=None, dtype="float64"):
    """The mpcf PCF file of `pcfs` (lists of (t, v)), written from the format's
    definition (README, "Persistence barcodes, means and files")."""
    code, fmt = (1, "f") if dtype == "float32" else (2, "d")
    shape = shape or [len(pcfs)]
    offsets = [0]
    for pcf in pcfs:
        offsets.append(offsets[-1] + len(pcf))
    times = [t for pcf in pcfs for t, _ in pcf]
    values = [v for pcf in pcfs for _, v in pcf]
    body = b"\x89MPCF\r\n\x1a" + struct.pack("<IIQQQ", 1, code, len(shape), len(pcfs), len(times))
    body += struct.pack("<%dQ" % len(shape), *shape) + struct.pack("<%dQ" % len(offsets), *offsets)
    body += struct.pack("<%d%s" % (len(times), fmt), *times)
    body += struct.pack("<%d%s" % (len(values), fmt), *values)
    return body + struct.pack("<Q", fnv1a64(body))


def csv_rows(out):
    return [line.split(",") for line in text(out).strip().splitlines()]


class Barcodes(ToolTest):
    NEEDS_NUMPY = False

    def test_the_hand_worked_barcode(self):
        # a: bars (0,2), (1,3), (1,inf): Betti 1, 3, 2 on [0,1), [1,2), [2,3), then 1;
        # b: (0,1). On [0, 10): |1-1| + |3-0| + |2-0| + 7 * |1-0| = 12.
        src = self.write("bars.csv", "id,birth,death\na,0,2\na,1,3\na,1,inf\nb,0,1\n")
        r = self.ok(["pdist", src, "--from-barcodes", "betti", "--window", "0:10", "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["12"]])
        # stable ranks: a is 3 on [0,2) then 1 (14 on [0,10)), b is 1 on [0,1)
        r = self.ok(["norm", src, "--from-barcodes", "stable-rank", "--window", "0:10", "-o", "-",
                     "--with-ids"])
        self.assertEqual(csv_rows(r.stdout), [["id", "norm"], ["a", "14"], ["b", "1"]])
        # accumulated persistence: a is 2 from 1, 4 from 2; b is 1 from 0.5
        r = self.ok(["norm", src, "--from-barcodes", "accumulated-persistence", "--window", "0:3",
                     "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["6"], ["2.5"]])

    def test_random_barcodes_against_the_reference(self):
        rng = random.Random(19)
        barcodes = []
        for i in range(12):
            bars = []
            for _ in range(rng.randint(1, 8)):
                b = rng.randint(-16, 16) / 4
                d = INF if rng.random() < 0.15 else b + rng.randint(0, 12) / 4
                bars.append((b, d))
            rng.shuffle(bars)
            barcodes.append(("bc%d" % i, bars))
        write_barcodes_csv(self.path("bars.csv"), barcodes)
        for kind, ref in (("betti", ref_betti), ("stable-rank", ref_stable_rank)):
            r = self.ok(["pdist", self.path("bars.csv"), "--from-barcodes", kind, "--window", "-5:20",
                         "-o", "-", "--layout", "dense"])
            got = [[float(x) for x in row] for row in csv_rows(r.stdout)]
            pcfs = [ref(bars) for _, bars in barcodes]
            for i, j in condensed_pairs(len(pcfs)):
                want, _ = reference(pcfs[i], pcfs[j], "distance", 1.0, -5.0, 20.0)
                self.assertEqual(got[i][j], want, (kind, i, j))

    def test_ids_and_float32(self):
        src = self.write("bars.csv", "x,0,1\nx,0.5,2\ny,1,1.25\n")
        r = self.ok(["norm", src, "--from-barcodes", "betti", "--dtype", "float32", "--with-ids",
                     "-o", "-"])
        # x: 1 on [0, 0.5), 2 on [0.5, 1), 1 on [1, 2): 2.5; y: 0.25
        self.assertEqual(csv_rows(r.stdout), [["id", "norm"], ["x", "2.5"], ["y", "0.25"]])

    def test_bad_bars_name_the_line(self):
        cases = [
            # libmpcf checks the bars; its message follows the line and id.
            ("a,0,2\na,3,1\n", "bars.csv:2: id 'a': barcode 0, bar 1 (birth 3, death 1): the "
                                "death is smaller than the birth; a bar needs birth <= death"),
            ("b,0,1\na,inf,inf\n", "bars.csv:2: id 'a': barcode 1, bar 0 (birth inf, death inf): "
                                   "the birth is infinite"),
            ("a,0,1\n# c\na,0,nan\n", "bars.csv:3: id 'a': barcode 0, bar 1 (birth 0, death nan): "
                                      "the death is NaN"),
            ("a,0,-inf\n", "bars.csv:1: id 'a': barcode 0, bar 0 (birth 0, death -inf): the death "
                           "is smaller than the birth"),
            ("a,0\n", "bars.csv:1: expected 3 fields (id,birth,death), found 2"),
            ("a,0,1\nb,0,1\na,1,2\n", "bars.csv:3: id 'a' appears again"),
        ]
        for content, message in cases:
            src = self.write("bars.csv", content)
            r = run(["pdist", src, "--from-barcodes", "stable-rank", "-o", self.path("d.npy")])
            self.assertEqual(r.returncode, 1, content)
            self.assertIn(message, text(r.stderr))
            self.assertFalse(os.path.exists(self.path("d.npy")))
        src = self.write("bars.csv", "a,0,1e300\n")
        r = run(["pdist", src, "--from-barcodes", "betti", "--dtype", "float32"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("bars.csv:1: id 'a': barcode 0, bar 0 (birth 0, death 1e+300): an end point "
                      "overflows float32", text(r.stderr))

    def test_usage(self):
        r = run(["pdist", "x.csv", "--from-barcodes", "euler"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--from-barcodes 'euler' is not one of betti, stable-rank", text(r.stderr))
        r = run(["--help"])
        self.assertIn("--from-barcodes", text(r.stdout))


class PcfFiles(ToolTest):
    NEEDS_NUMPY = False

    PCFS = [[(0.0, 3.0), (1.0, 0.0)], [(0.0, 1.0), (2.0, 0.0)], [(0.0, 10.0), (2.0, 5.0), (3.0, 0.0)]]

    def test_a_pcf_file_is_read_like_the_csv(self):
        path = self.write("x.mpcf", pcf_file_bytes(self.PCFS, shape=[3, 1]))
        r = self.ok(["pdist", path, "-o", "-", "--with-ids"])
        self.assertEqual(csv_rows(r.stdout)[1:], [["0", "1", "3"], ["0", "2", "22"], ["1", "2", "23"]])
        # from standard input too
        with open(path, "rb") as f:
            r = self.ok(["pdist", "-", "-o", "-"], stdin=f.read())
        self.assertEqual(csv_rows(r.stdout), [["3"], ["22"], ["23"]])
        # cdist of a PCF file and a CSV file; a float32 file read in float64
        write_pcfs_csv(self.path("y.csv"), [G])
        f32 = self.write("x32.mpcf", pcf_file_bytes(self.PCFS, dtype="float32"))
        r = self.ok(["cdist", f32, self.path("y.csv"), "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["3"], ["0"], ["23"]])

    def test_bad_pcf_files(self):
        good = pcf_file_bytes(self.PCFS)
        cases = [
            ("cut.mpcf", good[:-3], "cut.mpcf' is truncated"),
            ("flip.mpcf", good[:90] + bytes([good[90] ^ 4]) + good[91:], "checksum"),
            ("magic.mpcf", b"\x89PNG\r\n\x1a\n" + good[8:], "not an mpcf PCF file"),
            ("bad.mpcf", pcf_file_bytes([[(1.0, 1.0), (0.0, 0.0)]]), "PCF 0, breakpoint 1"),
        ]
        for name, data, message in cases:
            path = self.write(name, data)
            r = run(["pdist", path])
            self.assertEqual(r.returncode, 1, name)
            self.assertIn(message, text(r.stderr))
        r = run(["pdist", self.write("x.mpcf", good), "--from-barcodes", "betti"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("is a PCF file (mpcf binary format), not a barcode CSV", text(r.stderr))


class Plfs(ToolTest):
    """--type linear, landscapes and silhouettes, worked out by hand."""
    NEEDS_NUMPY = False

    # f: the tent (0,0),(1,1),(2,0); g: zero.
    TENT = "id,t,v\nf,0,0\nf,1,1\nf,2,0\ng,0,0\n"
    # a: (0, 2): lambda_1 = (0,0),(1,1),(2,0), lambda_2 = 0. b: (0, 4), (1, 3):
    # lambda_1 = (0,0),(2,2),(4,0), lambda_2 = (1,0),(2,1),(3,0).
    BARS = "id,birth,death\na,0,2\nb,0,4\nb,1,3\n"

    def test_linear_csv(self):
        src = self.write("tent.csv", self.TENT)
        r = self.ok(["pdist", src, "--type", "linear", "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["1"]])  # the area of the tent
        r = self.ok(["pdist", src, "-o", "-", "-p", "2"])  # as PCFs: 1 on [1, 2)
        self.assertEqual(csv_rows(r.stdout), [["1"]])
        r = self.ok(["pdist", src, "--type", "linear", "-p", "2", "-o", "-"])
        self.assertAlmostEqual(float(csv_rows(r.stdout)[0][0]), math.sqrt(2 / 3), places=14)
        r = self.ok(["kernel", src, "--type", "linear", "-o", "-"])
        self.assertAlmostEqual(float(csv_rows(r.stdout)[0][0]), 2 / 3, places=14)
        r = self.ok(["cdist", src, src, "--type", "linear", "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["0", "1"], ["1", "0"]])

    def test_landscape_distances(self):
        src = self.write("bars.csv", self.BARS)
        # L1: |lambda_1 - lambda_1'| integrates to 4 - 1 = 3, lambda_2' to 1.
        r = self.ok(["pdist", "--from-barcodes", "landscape", "--k", "2", src, "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["4"]])
        r = self.ok(["pdist", "--from-barcodes", "landscape", "--levels", "2", src, "-o", "-",
                     "--layout", "dense", "--with-ids"])
        self.assertEqual(csv_rows(r.stdout), [["id", "a", "b"], ["a", "0", "4"], ["b", "4", "0"]])
        # L2: the lambda_1 difference squared integrates to 4, lambda_2' squared to 2/3.
        r = self.ok(["pdist", "--from-barcodes", "landscape", "-k", "2", "-p", "2", src, "-o", "-"])
        self.assertAlmostEqual(float(csv_rows(r.stdout)[0][0]), math.sqrt(4 + 2 / 3), places=14)
        # Kernel over objects: 2/3, 16/3 + 2/3 = 6 and the cross term 1/3 + 1 - 1/3 = 1.
        r = self.ok(["kernel", "--from-barcodes", "landscape", "--k", "2", src, "-o", "-"])
        got = [[float(v) for v in row] for row in csv_rows(r.stdout)]
        for row, want in zip(got, [[2 / 3, 1], [1, 6]]):
            for g, w in zip(row, want):
                self.assertAlmostEqual(g, w, places=14)
        # knn: -k counts neighbours, --levels the landscapes.
        r = self.ok(["knn", "--from-barcodes", "landscape", "--levels", "2", "-k", "1", src,
                     "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["i", "j", "distance"], ["0", "1", "4"],
                                              ["1", "0", "4"]])
        # A single landscape: lambda_1 only, 4 - 1 = 3.
        r = self.ok(["pdist", "--from-barcodes", "landscape", "--k", "1", src, "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["3"]])

    def test_infinite_bars_and_silhouettes(self):
        inf = self.write("inf.csv", "id,birth,death\na,1,inf\n")
        r = run(["norm", "--from-barcodes", "landscape", "--k", "1", inf, "-o", "-"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("barcode 0, bar 0", text(r.stderr))
        self.assertIn("id 'a'", text(r.stderr))
        r = self.ok(["norm", "--from-barcodes", "landscape", "--k", "1", "--clip", "3", inf,
                     "-o", "-"])
        self.assertEqual(csv_rows(r.stdout), [["1"]])  # the tent (1, 3)
        # Silhouettes, q = 1: a is its tent (area 1); b is (4 tent(0,4) + 2 tent(1,3)) / 6,
        # of area (4 * 4 + 2 * 1) / 6 = 3. q = 0: (4 + 1) / 2.
        src = self.write("bars.csv", self.BARS)
        r = self.ok(["norm", "--from-barcodes", "silhouette", src, "-o", "-"])
        got = [float(row[0]) for row in csv_rows(r.stdout)]
        self.assertAlmostEqual(got[0], 1, places=14)
        self.assertAlmostEqual(got[1], 3, places=14)
        r = self.ok(["norm", "--from-barcodes", "silhouette", "--q", "0", src, "-o", "-"])
        self.assertAlmostEqual(float(csv_rows(r.stdout)[1][0]), 2.5, places=14)

    def test_usage_errors(self):
        src = self.write("bars.csv", self.BARS)
        for args, part in [
            (["pdist", "--from-barcodes", "landscape", src], "--levels K"),
            (["knn", "-k", "1", "--from-barcodes", "landscape", src], "--levels K"),
            (["pdist", "--levels", "2", src], "--levels applies"),
            (["pdist", "--from-barcodes", "landscape", "--k", "2", "--q", "1", src], "--q applies"),
            (["pdist", "--clip", "3", src], "--clip applies"),
            (["pdist", "--type", "cubic", src], "--type 'cubic'"),
            (["pdist", "--type", "linear", "--from-barcodes", "betti", src], "--type applies"),
            # K, Q and the clip are libmpcf's to judge, before any file is read.
            (["pdist", "--from-barcodes", "silhouette", "--q", "-1", src],
             "--from-barcodes silhouette: q = -1: the weight exponent of a silhouette must be "
             "finite and >= 0"),
            (["pdist", "--from-barcodes", "landscape", "--levels", "0", src],
             "--from-barcodes landscape: k = 0: ask for at least one landscape (k >= 1)"),
            (["pdist", "--from-barcodes", "landscape", "--k", "2", "--clip", "nan", src],
             "--from-barcodes landscape: clip is nan; give the time to cut infinite bars at"),
            (["pdist", "--from-barcodes", "silhouette", "--clip", "1e39", "--dtype", "float32",
              src], "--from-barcodes silhouette: clip = 1e+39 overflows float32"),
            (["pdist", "--from-barcodes", "silhouette", "--q", "x", src], "--q 'x' is not a number"),
            (["pdist", "--from-barcodes", "landscape", "--levels", "-1", src],
             "--levels '-1' is not a whole number"),
        ]:
            r = run(args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(part, text(r.stderr), args)

    def test_mixing_kinds_is_an_error_naming_both(self):
        pcf = self.write("x.mpcf", pcf_file_bytes([[(0.0, 1.0), (1.0, 0.0)]]))
        plf = self.write("tent.csv", self.TENT)
        r = run(["cdist", pcf, plf, "--type", "linear", "-o", "-"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("piecewise constant functions (PCFs)", text(r.stderr))
        self.assertIn("piecewise linear functions (PLFs)", text(r.stderr))


class Summary(ToolTest):
    """The summary shows libmpcf's own figures (mpcf_task_info): backend,
    threads and merge steps, here worked out by hand."""
    NEEDS_NUMPY = False

    # X: m = 1, 2, 4 (7 breakpoints); Y: m = 3, 1 (4 breakpoints).
    X = "id,t,v\na,0,0\nb,0,1\nb,1,0\nc,0,1\nc,1,2\nc,2,3\nc,3,0\n"
    Y = "id,t,v\nd,0,1\nd,1,2\nd,2,0\ne,0,0\n"

    def summary(self, args):
        return text(self.ok(args).stdout)

    def field(self, out, name):
        return re.search(r"^  %s\s+(.*)$" % re.escape(name), out, re.M).group(1)

    def test_threads_and_merge_steps(self):
        x, y = self.write("x.csv", self.X), self.write("y.csv", self.Y)
        # pdist: the pairs (b,a), (c,a), (c,b): (2+1) + (4+1) + (4+2) = 14.
        out = self.summary(["pdist", x, "--backend", "cpu", "--threads", "3"])
        self.assertEqual(self.field(out, "backend"), "cpu, 3 threads")
        self.assertRegex(self.field(out, "merge steps"), r"^14 \(")
        self.assertRegex(self.field(out, "time"), r"^read \d+\.\d{3} s, compute \d+\.\d{3} s$")
        # kernel adds the diagonal (1+1) + (2+2) + (4+4): 28.
        out = self.summary(["kernel", x, "--backend", "cpu", "--threads", "1"])
        self.assertEqual(self.field(out, "backend"), "cpu, 1 thread")
        self.assertRegex(self.field(out, "merge steps"), r"^28 ")
        # cdist, all six pairs: (1+3)+(1+1)+(2+3)+(2+1)+(4+3)+(4+1) = 26; knn
        # computes the pairs of cdist (with FILE_Y) and of pdist (without).
        for args, steps in ((["cdist", x, y], 26), (["knn", x, y, "-k", "2"], 26),
                            (["knn", x, "-k", "1"], 14)):
            out = self.summary(args + ["--backend", "cpu", "--threads", "2"])
            self.assertEqual(self.field(out, "backend"), "cpu, 2 threads", args)
            self.assertRegex(self.field(out, "merge steps"), r"^%d " % steps, args)
        # norm: each function against the zero function: (1+1) + (2+1) + (4+1).
        out = self.summary(["norm", x, "--backend", "cpu"])
        self.assertEqual(self.field(out, "backend"), "cpu, 1 thread")
        self.assertRegex(self.field(out, "merge steps"), r"^10\b")

    def test_why_this_backend(self):
        x = self.write("x.csv", self.X)
        build = text(self.ok(["--version"]).stdout)
        out = self.summary(["pdist", x, "--threads", "2"])
        if "cuda=on" not in build:
            self.assertEqual(self.field(out, "backend"),
                             "cpu, 2 threads (auto: libmpcf was built without CUDA)")
        elif "devices=0" in build:
            self.assertEqual(self.field(out, "backend"), "cpu, 2 threads (auto: no CUDA device)")
        else:  # 14 merge steps are far below the default threshold
            self.assertEqual(self.field(out, "backend"),
                             "cpu, 2 threads (auto: below the CUDA threshold)")
        # PLFs follow the rule of PCFs (both backends compute them); norms run
        # on the CPU only; asked for, the CPU is no surprise.
        args = ["pdist", x, "--threads", "2", "--cuda-threshold", "0"]
        self.assertEqual(self.field(self.summary(args + ["--type", "linear"]), "backend"),
                         self.field(self.summary(args), "backend"))
        out = self.summary(["norm", x])
        self.assertEqual(self.field(out, "backend"),
                         "cpu, 1 thread (libmpcf computes this on the CPU only)")
        out = self.summary(["pdist", x, "--type", "linear", "--backend", "cpu", "--threads", "2"])
        self.assertEqual(self.field(out, "backend"), "cpu, 2 threads")

    def test_objects_count_the_breakpoints_of_all_their_landscapes(self):
        # Two barcodes, two landscapes each: pdist computes the one pair of
        # objects, whose merge steps are the breakpoints of both objects: all
        # the breakpoints the input line reports (not (4 - 1) times them, as
        # if the four functions were compared one by one).
        src = self.write("bars.csv", Plfs.BARS)
        out = self.summary(["pdist", "--from-barcodes", "landscape", "--levels", "2", src])
        total = int(re.search(r"n = 2 functions, (\d+) breakpoints", out).group(1))
        self.assertRegex(self.field(out, "merge steps"), r"^%d " % total)


GROUPS = [KnownValues, Reference, Formats, Errors, Usage, DefaultRun, Signals, Barcodes, PcfFiles,
          Plfs, Summary]


def main():
    global MPCF, EXAMPLE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpcf", required=True, help="the mpcf executable")
    parser.add_argument("--example", required=True, help="capi/cli/data/example_pcfs.csv")
    parser.add_argument("groups", nargs="*", help="test classes to run (default: all)")
    args = parser.parse_args()
    MPCF = os.path.abspath(args.mpcf)
    EXAMPLE = os.path.abspath(args.example)
    by_name = {g.__name__: g for g in GROUPS}
    unknown = [g for g in args.groups if g not in by_name]
    if unknown:
        parser.error("unknown group(s) %s; the groups are %s" % (unknown, sorted(by_name)))
    groups = [by_name[g] for g in args.groups] if args.groups else GROUPS
    if np is None and any(g.NEEDS_NUMPY for g in groups):
        if all(g.NEEDS_NUMPY for g in groups):
            print("SKIP: numpy is not installed (pip install numpy or apt-get install python3-numpy)")
            return 77
        groups = [g for g in groups if not g.NEEDS_NUMPY]
        print("note: numpy is not installed; skipping the groups that need it")
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for g in groups:
        suite.addTests(loader.loadTestsFromTestCase(g))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
