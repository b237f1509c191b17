"""Shared fixtures. The suite runs against whatever `import mpcf` finds; under
ctest that is the build-tree package (MPCF_PYTHON_EXPECT_PACKAGE names it and
a mismatch fails at once instead of testing the wrong copy)."""

import os

import numpy as np
import pytest

import mpcf


def pytest_configure(config):
    expected = os.environ.get("MPCF_PYTHON_EXPECT_PACKAGE")
    if expected:
        loaded = os.path.dirname(os.path.realpath(mpcf.__file__))
        if loaded != os.path.realpath(expected):
            raise pytest.UsageError(f"mpcf was imported from {loaded}, expected {expected}")


def pytest_collection_modifyitems(config, items):
    if mpcf.cuda_device_count() > 0:
        return
    skip = pytest.mark.skip(reason="no CUDA device (mpcf.cuda_device_count() == 0)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


# Backends every agreement test runs on; the CUDA variant is marked `gpu`.
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]

# Relative tolerances against the float64 reference.
RTOL = {np.float32: 2e-5, np.float64: 1e-12}
