"""numpy with BLAS: matrix products and solves (OpenBLAS's threads),
between Python loops that prepare and check them, SCALE times 8 rounds."""
import numpy as np

from _timing import scale, timed


def prepare(rng, n):
    return rng.standard_normal((n, n)) + n * np.eye(n)


def check(x, a, b):
    worst = 0.0
    for row in range(0, x.shape[0], 8):
        worst = max(worst, float(abs(a[row] @ x - b[row]).max()))
    return worst


def main():
    rng = np.random.default_rng(34)
    for _ in range(int(8 * scale())):
        a = prepare(rng, 300)
        b = rng.standard_normal((300, 40))
        x = np.linalg.solve(a @ a.T, b)
        assert check(x, a @ a.T, b) < 1e-6


timed(main)
