#!/usr/bin/env python3
"""Writes example_pcfs.csv, the example dataset of the mpcf command-line tool.

300 synthetic PCFs shaped like Betti curves: each starts at t = 0, its
breakpoints have growing gaps, its values are non-negative integers, and its
last value is 0 (so every distance and kernel between them is finite). Two
groups of 150 differ in how long their features live, so the distance matrix
has some structure. The generator is a fixed xorshift64* stream, so the file
is the same on every machine and Python version:

    python3 make_example_pcfs.py > example_pcfs.csv
"""
import sys

MASK = (1 << 64) - 1


class XorShift64Star:
    def __init__(self, seed):
        self.state = seed & MASK or 1

    def next(self):
        x = self.state
        x ^= x >> 12
        x ^= (x << 25) & MASK
        x ^= x >> 27
        self.state = x
        return (x * 0x2545F4914F6CDD1D) & MASK

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.next() >> 11) / float(1 << 53)

    def integer(self, lo, hi):
        """Uniform integer in [lo, hi]."""
        return lo + self.next() % (hi - lo + 1)


def betti_curve(rng, long_lived):
    m = rng.integer(10, 80)
    gap = rng.uniform(0.01, 0.05)
    growth = rng.uniform(1.02, 1.06) if long_lived else rng.uniform(1.0, 1.03)
    value = rng.integer(8, 40)
    t = 0.0
    points = []
    for k in range(m):
        if k == m - 1:
            value = 0
        elif k > 0:
            step = 0
            while step == 0:
                step = rng.integer(-3, 2) if long_lived else rng.integer(-4, 1)
            value = max(1, value + step)
        points.append((round(t, 4), value))
        t += gap * rng.uniform(0.5, 1.5)
        gap *= growth
    return points


def main():
    rng = XorShift64Star(20240601)
    out = sys.stdout
    out.write("# libmpcf example dataset: 300 synthetic Betti-curve-like PCFs\n")
    out.write("# written by capi/cli/data/make_example_pcfs.py; format: id,t,v (see capi/cli/README.md)\n")
    out.write("id,t,v\n")
    for i in range(300):
        points = betti_curve(rng, long_lived=i >= 150)
        for t, v in points:
            out.write("betti_%03d,%.4f,%d\n" % (i, t, v))


if __name__ == "__main__":
    main()
