"""mpcf: exact similarity matrices between piecewise constant functions.

Python bindings of libmpcf. A piecewise constant function (PCF) is given by
its breakpoints (t_k, v_k) -- an (m, 2) array or a list of (t, v) pairs --
and is 0 before t_0, v_k on [t_k, t_{k+1}) and v_{m-1} after the last
breakpoint. mpcf computes, exactly and in parallel (CPU threads or CUDA
GPUs), Lp distance matrices (:func:`pdist`, :func:`cdist`), L2 kernel
matrices (:func:`l2_kernel`) and norms (:func:`lp_norm`), NumPy in, NumPy out.

>>> import mpcf
>>> X = [[(0, 3), (1, 0)], [(0, 1), (2, 0)], [(0, 10), (2, 5), (3, 0)]]
>>> D = mpcf.pdist(X)                 # SciPy's condensed order
>>> D
array([ 3., 22., 23.])
>>> from scipy.spatial.distance import squareform
>>> float(squareform(D)[2, 1])
23.0
"""

from ._errors import (
    BufferTooSmallError,
    CancelledError,
    CudaError,
    CudaFallbackWarning,
    CudaUnavailableError,
    DtypeMismatchError,
    Error,
    InternalError,
    InvalidArgumentError,
    InvalidPcfError,
    OutOfMemoryError,
)
from ._lib import swig as _swig
from ._collection import PcfCollection, PlfCollection
from ._ops import (
    build_info,
    cdist,
    cuda_device_count,
    gpu_cache_limit,
    gpu_cached_bytes,
    has_cuda,
    l2_inner_product,
    l2_kernel,
    last_task_info,
    lp_distance,
    lp_norm,
    pdist,
    register_gpu_output,
    release_gpu_memory,
    unregister_gpu_output,
    set_gpu_cache_limit,
)
from ._reduce import kernel_matvec, kneighbors_graph, knn
from ._result_pool import release_result_memory, result_pool_limit, set_result_pool_limit

# Public classes show (and pickle) as mpcf.X rather than mpcf._module.X.
for _cls in (
    PcfCollection,
    PlfCollection,
    Error,
    InvalidArgumentError,
    InvalidPcfError,
    BufferTooSmallError,
    DtypeMismatchError,
    OutOfMemoryError,
    CudaUnavailableError,
    CudaError,
    CancelledError,
    InternalError,
    CudaFallbackWarning,
):
    _cls.__module__ = __name__
del _cls

def __getattr__(name: str):
    # KernelOperator needs SciPy, an optional dependency: loaded on first use.
    if name == "KernelOperator":
        from ._kernel_operator import KernelOperator

        KernelOperator.__module__ = __name__
        globals()["KernelOperator"] = KernelOperator
        return KernelOperator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# [tda] persistence barcodes, pointwise operations and files
from ._tda import (
    accumulated_persistence,
    betti_curve,
    combine,
    evaluate,
    landscape,
    mean,
    silhouette,
    stable_rank,
    sum,
)
from ._io import load, save

# plots: matplotlib is imported on the first call, never by `import mpcf`
from ._plot import plot, plot_barcode

#: Version of the loaded libmpcf ("MAJOR.MINOR.PATCH"); checked at import
#: against the version of mpcf.h this package was built with.
__version__: str = _swig.mpcf_version_string()

__all__ = [
    "PcfCollection",
    "PlfCollection",
    "pdist",
    "cdist",
    "l2_kernel",
    "lp_distance",
    "l2_inner_product",
    "lp_norm",
    "knn",
    "kneighbors_graph",
    "kernel_matvec",
    "KernelOperator",
    "build_info",
    "has_cuda",
    "cuda_device_count",
    "gpu_cached_bytes",
    "gpu_cache_limit",
    "set_gpu_cache_limit",
    "release_gpu_memory",
    "register_gpu_output",
    "unregister_gpu_output",
    "last_task_info",
    "set_result_pool_limit",
    "result_pool_limit",
    "release_result_memory",
    "Error",
    "InvalidArgumentError",
    "InvalidPcfError",
    "BufferTooSmallError",
    "DtypeMismatchError",
    "OutOfMemoryError",
    "CudaUnavailableError",
    "CudaError",
    "CancelledError",
    "InternalError",
    "CudaFallbackWarning",
    "__version__",
    # [tda]
    "betti_curve",
    "stable_rank",
    "accumulated_persistence",
    "mean",
    "sum",
    "combine",
    "evaluate",
    "landscape",
    "silhouette",
    "save",
    "load",
    "plot",
    "plot_barcode",
]
