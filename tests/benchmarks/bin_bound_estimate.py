"""How tight the bin lower bounds of the GPU kNN are (cuda/bin_bounds.hpp).

An estimate with NumPy, not a measurement of libmpcf: DESIGN section 6's
random functions (m = 128, t_0 = 0, gaps uniform in (0.05, 1), values
uniform in (0, 10), last value 0) sampled on a grid of step 0.02 (distances
to about 0.1%). 16 rows against 200,000 columns: the 2nd smallest distance
of a row among 200,000 stands for the 10th among 10^6 (the bound a kNN of
10^6 ends with). For S equal bins over [0, 80): the bin sum
sum_s |F_s - G_s| against the distance, over the first 20,000 columns, and
the pairs (and the 16-column tiles of a row) the final bounds leave to walk.

    python3 tests/benchmarks/bin_bound_estimate.py     # about a minute
"""
import numpy as np

rng = np.random.default_rng(1)
m = 128
dt, T = 0.02, 80.0
grid = np.arange(0, T, dt) + dt / 2


def functions(n):
    t = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.05, 1, (n, m - 1)), 1)], 1)
    v = rng.uniform(0, 10, (n, m))
    v[:, -1] = 0
    return t, v


def sampled(t, v):
    idx = np.stack([np.searchsorted(t[r], grid, side="right") - 1 for r in range(len(t))])
    return np.take_along_axis(v, idx, 1).astype(np.float32)


N, rows, chunk = 200_000, 16, 5000
t, v = functions(N)
R = sampled(*functions(rows))
D = np.empty((rows, N), np.float32)
first = []
for c in range(0, N, chunk):
    G = sampled(t[c:c + chunk], v[c:c + chunk])
    D[:, c:c + chunk] = np.abs(R[:, None, :] - G[None]).sum(-1) * dt
    if c < 20_000:
        first.append(G)
kth = np.sort(D, 1)[:, 1]
print("10th neighbour of 10^6 / median distance, per row:",
      np.round(kth / np.median(D, 1), 3))
G = np.concatenate(first)
D0 = D[:, :G.shape[0]]
for S in (32, 64, 128, 256, 512):
    w = grid.size // S

    def bins(X):
        return X[:, :w * S].reshape(len(X), S, w).sum(-1) * dt

    lb = np.abs(bins(R)[:, None, :] - bins(G)[None]).sum(-1)
    ratio = lb / D0
    left = lb <= kth[:, None]
    tiles = left.reshape(rows, -1, 16).any(-1)
    print(f"S = {S:3d}: bin sum / distance mean {ratio.mean():.3f} min {ratio.min():.3f}; "
          f"pairs left {left.mean():.4f}, (row, tile) walks left {tiles.mean():.4f}")
