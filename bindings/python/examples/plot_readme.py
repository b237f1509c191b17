#!/usr/bin/env python3
"""Makes docs/figures/landscape.png, the figure of the top-level README, with
the documented calls only: one barcode (mpcf.plot_barcode), its Betti curve
(a PCF, drawn as steps by mpcf.plot) and its first three persistence
landscapes (PLFs, drawn as lines by mpcf.plot).

    PYTHONPATH=build/bindings/python python3 bindings/python/examples/plot_readme.py [OUT.png]
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import mpcf  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
bars = [(0, 4), (1, 3), (2, 6.5), (3.5, 8), (5, float("inf"))]   # (birth, death)


def main(out):
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(10, 2.8), constrained_layout=True)
    mpcf.plot_barcode(bars, a, linewidth=3)
    a.set(title="a barcode (mpcf.plot_barcode)", xlabel="t", ylabel="bar")
    mpcf.plot(mpcf.betti_curve(bars), b, right=10)
    b.set(title="its Betti curve, a PCF (mpcf.plot)", xlabel="t")
    mpcf.plot(mpcf.landscape([bars], k=3, clip=10), c, right=10, label=["λ1", "λ2", "λ3"])
    c.set(title="its landscapes, PLFs (mpcf.plot)", xlabel="t")
    c.legend(frameon=False)
    fig.savefig(out, dpi=80, metadata={"Software": None})
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "figures", "landscape.png"))
