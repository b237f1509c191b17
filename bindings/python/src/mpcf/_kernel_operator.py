"""mpcf.KernelOperator: the kernel matrix as a SciPy LinearOperator (loaded
on first use, so SciPy stays an optional dependency)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from scipy.sparse.linalg import LinearOperator

from ._lib import make_options
from ._ops import PcfsLike
from ._reduce import _inputs, _kernel_args, _matvec


class KernelOperator(LinearOperator):
    """The kernel matrix K (X.size x Y.size, Y defaulting to X) as a
    ``scipy.sparse.linalg.LinearOperator``: ``K @ v`` and ``K @ V`` call
    :func:`mpcf.kernel_matvec`, never forming K, so iterative solvers
    (``cg``, ``minres``, ``eigsh``, ``lsqr``) work on collections whose K
    would not fit in memory. The kernels are symmetric: ``K.T @ u`` is the
    product of Y against X (K itself when Y is X).

    Parameters
    ----------
    X, Y : PcfCollection or anything it accepts
    kernel, p, sigma, window, backend, threads, devices, progress, components
        As in :func:`mpcf.kernel_matvec` (``components=True``: K over
        objects of K functions, the last axis of X's shape).

    Examples
    --------
    Kernel ridge regression, (K + lambda I) alpha = y, by conjugate gradients:

    >>> import numpy as np, mpcf
    >>> from scipy.sparse.linalg import LinearOperator, cg
    >>> X = [[(0, 1), (1, 0)], [(0, 3), (1, 0)], [(0, 2), (2, 0)]]
    >>> K = mpcf.KernelOperator(X, kernel="gaussian", sigma=2.0)
    >>> K.shape
    (3, 3)
    >>> A = LinearOperator(K.shape, matvec=lambda v: K @ v + 0.1 * v, dtype=K.dtype)
    >>> alpha, info = cg(A, np.array([1.0, 0.0, 1.0]), atol=1e-12)
    >>> info
    0
    """

    def __init__(
        self,
        X: PcfsLike,
        Y: Optional[PcfsLike] = None,
        *,
        kernel: str = "l2",
        p: Optional[float] = None,
        sigma: float = 1.0,
        window: Any = None,
        backend: str = "auto",
        threads: Optional[int] = None,
        devices: Any = None,
        progress: bool = False,
        components: bool = False,
    ) -> None:
        self._X, self._Y = _inputs(X, Y, components)
        self._kind, self._p, self._sigma = _kernel_args(kernel, p, sigma)
        self._options = make_options(window, backend, threads, devices)
        self._progress = progress
        cols = self._Y.size if self._Y is not None else self._X.size
        super().__init__(dtype=self._X.dtype, shape=(self._X.size, cols))

    def _matmat(self, V: np.ndarray) -> np.ndarray:
        return _matvec(self._X, self._Y, V, self._kind, self._p, self._sigma, self._options,
                       self._progress)

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        return self._matmat(np.reshape(v, (-1,)))

    def _rmatmat(self, U: np.ndarray) -> np.ndarray:
        if self._Y is None:
            return self._matmat(U)
        return _matvec(self._Y, self._X, U, self._kind, self._p, self._sigma, self._options,
                       self._progress)

    def _rmatvec(self, u: np.ndarray) -> np.ndarray:
        return self._rmatmat(np.reshape(u, (-1,)))

    def _adjoint(self) -> LinearOperator:
        return _Adjoint(self)


class _Adjoint(LinearOperator):
    def __init__(self, op: KernelOperator) -> None:
        self._op = op
        super().__init__(dtype=op.dtype, shape=(op.shape[1], op.shape[0]))

    def _matmat(self, V: np.ndarray) -> np.ndarray:
        return self._op._rmatmat(V)

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        return self._op._rmatvec(v)

    def _adjoint(self) -> LinearOperator:
        return self._op
