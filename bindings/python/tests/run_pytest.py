"""ctest entry point: runs this directory's pytest suite against the mpcf
package that is on sys.path (ctest puts the build-tree package there).

    python run_pytest.py [--require-gpu] [pytest arguments...]

--require-gpu exits with 77 (ctest's SKIP_RETURN_CODE) when no CUDA device
is usable, so GPU-only runs show as skipped rather than passed.
"""

import os
import sys


def main(argv):
    args = list(argv)
    if args and args[0] == "--require-gpu":
        args = args[1:]
        import mpcf

        if mpcf.cuda_device_count() == 0:
            print("SKIP: no CUDA device (mpcf.cuda_device_count() == 0); the GPU tests did not run")
            return 77
    import pytest

    here = os.path.dirname(os.path.abspath(__file__))
    rc = int(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", "--rootdir", os.path.dirname(here), here] + args))
    if rc == 5:  # no tests collected: never report that as a pass
        print("FAIL: pytest collected no tests")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
