"""mpcf.kneighbors_graph with the clients its docstring names, the real
packages: umap-learn (UMAP(metric="precomputed")) and scikit-learn
(kneighbors_graph, KNeighborsClassifier, HDBSCAN, SpectralClustering with
precomputed graphs). packaging/install-deps.sh installs both, so the main
pytest run (ctest python_pytest) runs these tests; where a package is missing
(the python_wheel venv has only the wheel's [test] extra) they skip, saying
which one."""

import doctest
import os
import tempfile

import numpy as np
import pytest
from scipy.spatial.distance import squareform

import mpcf

# umap-learn compiles its functions with numba when imported and when first
# run; numba caches them next to the package's sources, or fails where that
# folder is read-only. A cache folder of our own is always writable and
# persists between runs on one machine (import about 2 s instead of 20 s).
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "mpcf-numba-cache"))

pytestmark = [
    pytest.mark.filterwarnings("ignore:using precomputed metric:UserWarning"),
    pytest.mark.filterwarnings("ignore:n_jobs value .* overridden:UserWarning"),
    pytest.mark.filterwarnings("ignore:Graph is not fully connected:UserWarning"),
]


def sklearn_or_skip():
    return pytest.importorskip("sklearn", minversion="1.3",
                               reason="scikit-learn >= 1.3 is not installed "
                               "(packaging/install-deps.sh installs it)")


def umap_or_skip():
    return pytest.importorskip("umap", reason="umap-learn is not installed "
                               "(packaging/install-deps.sh installs it)")


def two_families(rng, n=30):
    """2n step functions 1_[0,1) * h: heights in [1, 2) for the first n, in
    [8, 9) for the others (no two distances equal: no ties)."""
    heights = np.concatenate([rng.uniform(1, 2, n), rng.uniform(8, 9, n)])
    return [[(0, h), (1, 0)] for h in heights]


def splits(labels, n=30):
    a, b = set(labels[:n].tolist()), set(labels[n:].tolist())
    return len(a) == len(b) == 1 and a != b and -1 not in a | b


def test_umap_accepts_the_documented_graph(rng):
    """The issue: UMAP(metric="precomputed") on mpcf.kneighbors_graph raised
    "Sparse precomputed distance matrices should be symmetrical!". The
    documented graph (include_self=True, symmetric=True) is accepted, and
    UMAP builds from it the same fuzzy graph and embedding as from the full
    distance matrix."""
    umap = umap_or_skip()
    X = two_families(rng)
    G = mpcf.kneighbors_graph(X, 10, mode="distance", include_self=True, symmetric=True)
    sparse = umap.UMAP(metric="precomputed", n_neighbors=10, random_state=0).fit(G)
    assert sparse.embedding_.shape == (60, 2) and np.all(np.isfinite(sparse.embedding_))
    D = squareform(mpcf.pdist(X))
    dense = umap.UMAP(metric="precomputed", n_neighbors=10, random_state=0).fit(D)
    assert abs(sparse.graph_ - dense.graph_).max() < 1e-6
    np.testing.assert_allclose(sparse.embedding_, dense.embedding_, atol=1e-4)


def test_include_self_and_modes_as_sklearn_on_the_dense_matrix(rng):
    """scikit-learn's kneighbors_graph on our full distance matrix (no ties):
    the same stored entries, explicit zeros included, in the same order."""
    sklearn_or_skip()
    from sklearn.neighbors import kneighbors_graph

    X = two_families(rng, 20)
    D = squareform(mpcf.pdist(X))
    for include_self in (False, True, "auto"):
        for mode in ("connectivity", "distance"):
            want = kneighbors_graph(D, 6, mode=mode, metric="precomputed", include_self=include_self)
            got = mpcf.kneighbors_graph(X, 6, mode=mode, include_self=include_self)
            np.testing.assert_array_equal(got.indptr, want.indptr)
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.data, want.data)


def test_sklearn_estimators_agree_with_the_dense_route(rng):
    """KNeighborsClassifier and SpectralClustering on our graphs give what
    they give on the full matrix; HDBSCAN separates the families."""
    sklearn_or_skip()
    from sklearn.cluster import HDBSCAN, SpectralClustering
    from sklearn.neighbors import KNeighborsClassifier

    X = two_families(rng)
    D = squareform(mpcf.pdist(X))
    y = np.repeat([0, 1], 30)
    y[[3, 40]] = [1, 0]  # two mislabelled points, so the vote is not trivial
    Q = two_families(np.random.default_rng(5), 4) + [[(0, 4.5), (1, 0)]]
    CQ = mpcf.cdist(Q, X)
    for weights in ("uniform", "distance"):
        est = KNeighborsClassifier(n_neighbors=5, weights=weights, metric="precomputed")
        sparse = est.fit(mpcf.kneighbors_graph(X, 6, mode="distance", include_self=True), y)
        train, new = sparse.predict(None), sparse.predict(mpcf.kneighbors_graph(Q, 5, X, mode="distance"))
        proba = sparse.predict_proba(mpcf.kneighbors_graph(Q, 5, X, mode="distance"))
        dense = est.fit(D, y)
        np.testing.assert_array_equal(train, dense.predict(None))
        np.testing.assert_array_equal(new, dense.predict(CQ))
        np.testing.assert_allclose(proba, dense.predict_proba(CQ))
    # The symmetric graph serves as well: its rows start with their own k.
    est = KNeighborsClassifier(n_neighbors=5, metric="precomputed")
    sym = est.fit(mpcf.kneighbors_graph(X, 6, mode="distance", include_self=True, symmetric=True), y)
    np.testing.assert_array_equal(sym.predict(None), est.fit(D, y).predict(None))

    sc = dict(n_clusters=2, affinity="precomputed_nearest_neighbors", n_neighbors=10, random_state=0)
    labels = SpectralClustering(**sc).fit_predict(mpcf.kneighbors_graph(X, 10, mode="distance",
                                                                           include_self=True))
    np.testing.assert_array_equal(labels, SpectralClustering(**sc).fit_predict(D))
    assert splits(labels)
    S = mpcf.kneighbors_graph(X, 10, mode="distance", include_self=True, symmetric=True)
    np.testing.assert_array_equal(SpectralClustering(**sc).fit_predict(S), labels)

    G = mpcf.kneighbors_graph(X, 31, mode="distance", include_self=True, symmetric=True)
    kept = G.copy()
    assert splits(HDBSCAN(min_cluster_size=15, metric="precomputed", copy=True).fit_predict(G))
    assert abs(G - kept).max() == 0  # copy=True: distances not overwritten
    with pytest.raises(ValueError, match="connected component"):  # as the docstring says
        HDBSCAN(min_cluster_size=15, min_samples=5, metric="precomputed", copy=True).fit(
            mpcf.kneighbors_graph(X, 10, mode="distance", include_self=True, symmetric=True))


def test_docstring_examples_run():
    """The examples of mpcf.kneighbors_graph, UMAP and scikit-learn's
    estimators included, run as written."""
    umap_or_skip()
    sklearn_or_skip()
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mpcf.kneighbors_graph, globs={}) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 20
