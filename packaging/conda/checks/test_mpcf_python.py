"""Test of the mpcf (Python) package in its conda environment.

Checks that mpcf imports, computes a small pdist and kernel exactly (values
worked out by hand), and that the libmpcf it loads is the file of the libmpcf
package in $PREFIX/lib, not a private copy: that is what the split promises.
Usage: python test_mpcf_python.py --version X.Y.Z --cuda 0|1
"""

import argparse
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("--cuda", type=int, choices=(0, 1), required=True)
    args = ap.parse_args()

    import numpy as np

    import mpcf

    print("mpcf", mpcf.__version__, "from", mpcf.__file__, "-", mpcf.build_info())
    assert mpcf.__version__ == args.version, mpcf.__version__
    assert mpcf.has_cuda() == bool(args.cuda), mpcf.build_info()

    # f = 3 on [0,1), g = 1 on [0,2), h = 10 on [0,2) and 5 on [2,3):
    # |f-g| = 2 + 1 = 3, |f-h| = 7 + 10 + 5 = 22, |g-h| = 9 * 2 + 5 = 23.
    f = [(0, 3), (1, 0)]
    g = [(0, 1), (2, 0)]
    h = [(0, 10), (2, 5), (3, 0)]
    d = mpcf.pdist([f, g, h])
    assert isinstance(d, np.ndarray) and d.tolist() == [3.0, 22.0, 23.0], d
    # 4 and 2 on [0,3): <a,a> = 48, <a,b> = 24, <b,b> = 12.
    k = mpcf.l2_kernel([[(0, 4), (3, 0)], [(0, 2), (3, 0)]])
    assert k.tolist() == [[48.0, 24.0], [24.0, 12.0]], k

    # The loaded libmpcf is the libmpcf package's file.
    prefix = os.path.realpath(os.environ["PREFIX"])
    expected = os.path.join(prefix, "lib", "libmpcf.so." + args.version)
    with open("/proc/self/maps") as maps:
        loaded = {os.path.realpath(line.split()[-1]) for line in maps if "libmpcf.so" in line}
    assert loaded == {expected}, f"loaded {sorted(loaded)}, expected {expected}"
    package_dir = os.path.dirname(os.path.realpath(mpcf.__file__))
    copies = [n for n in os.listdir(package_dir)
              if n.startswith("libmpcf.so") and not os.path.islink(os.path.join(package_dir, n))]
    assert not copies, f"the mpcf package ships its own libmpcf: {copies}"
    print("test_mpcf_python: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
