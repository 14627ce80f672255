"""Second-order IIR filters (biquads) in NumPy, for the two filters the perception pass applies: loudness's
K-weighting (BS.1770: a high shelf and a high-pass, designed by the RBJ "Audio EQ Cookbook" formulas, as
pyloudnorm's Meter designs them) and count_events's zero-phase Butterworth high-pass.

Why not scipy.signal: importing it costs a fresh process about 1 s of CPU (it loads scipy.stats, interpolate,
optimize, spatial ...), and the perception pass needed nothing else from it, so every new question paid that on
its 2 cores (issue 35: a new clip in a fresh process should take at most half its duration).

How: a biquad in transposed direct form II is the state-space system s' = A s + B x, y = C s + D x with a 2-sample
state. Over a block of L samples its output is T x + O s (T: the lower-triangular Toeplitz matrix of the first L
samples of the impulse response; O: the rows C A^i) and the state after the block is A^L s + G x, so a whole
signal is two matrix products and a scan over the block states (by doubling, log2(blocks) vector steps). This is
the same linear map as scipy.signal.lfilter's sample loop, computed in another order: outputs agree to float
rounding, not to the bit. Against a long-double reference on noise at 48 kHz, the RLB high-pass (poles at
radius 0.995) is off by 1e-11 here and 2e-13 in scipy's loop; tests/tools/test_iir.py holds both within 1e-9
of each other and the coefficients within 1e-13 of pyloudnorm's and scipy's designs.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

BLOCK = 64
"""Samples per block: each output sample costs BLOCK multiply-adds in the block product (BLAS), and a signal of n
samples needs n / BLOCK block states. Measured on a 60-s window at 48 kHz (the RLB high-pass): 32: 47 ms,
64: 21 ms, 128: 24 ms; scipy.signal.lfilter: 17 ms."""


class Biquad(NamedTuple):
    """Normalised coefficients (a0 = 1): b = (b0, b1, b2), a = (1, a1, a2)."""

    b: tuple[float, float, float]
    a: tuple[float, float, float]


def _normalised(b: tuple[float, float, float], a: tuple[float, float, float]) -> Biquad:
    a0 = a[0]
    return Biquad(b=(b[0] / a0, b[1] / a0, b[2] / a0), a=(1.0, a[1] / a0, a[2] / a0))


def cookbook(kind: str, gain_db: float, q: float, fc: float, rate: float) -> Biquad:
    """A high shelf ('high_shelf') or high-pass ('high_pass') biquad by the RBJ Audio EQ Cookbook formulas."""
    big_a = 10 ** (gain_db / 40.0)
    w0 = 2.0 * math.pi * (fc / rate)
    cos, alpha = math.cos(w0), math.sin(w0) / (2.0 * q)
    if kind == "high_shelf":
        root = 2 * math.sqrt(big_a) * alpha
        b = (big_a * ((big_a + 1) + (big_a - 1) * cos + root), -2 * big_a * ((big_a - 1) + (big_a + 1) * cos),
             big_a * ((big_a + 1) + (big_a - 1) * cos - root))
        a = ((big_a + 1) - (big_a - 1) * cos + root, 2 * ((big_a - 1) - (big_a + 1) * cos),
             (big_a + 1) - (big_a - 1) * cos - root)
    elif kind == "high_pass":
        b = ((1 + cos) / 2, -(1 + cos), (1 + cos) / 2)
        a = (1 + alpha, -2 * cos, 1 - alpha)
    else:
        raise ValueError(f"unknown biquad kind {kind!r}")
    return _normalised(b, a)


K_WEIGHTING = (("high_shelf", 4.0, 1 / math.sqrt(2), 1500.0), ("high_pass", 0.0, 0.5, 38.0))
"""BS.1770's K-weighting as (kind, gain dB, Q, centre Hz) stages: the pre-filter shelf, then the RLB high-pass."""


def k_weighting(rate: float) -> tuple[Biquad, ...]:
    """The K-weighting stages at a sampling rate, applied in order (each with pass-band gain 1)."""
    return tuple(cookbook(kind, g, q, fc, rate) for kind, g, q, fc in K_WEIGHTING)


def butter_highpass(hz: float, rate: float) -> Biquad:
    """The 2nd-order Butterworth high-pass at `hz` (bilinear transform with the cut-off pre-warped), as
    scipy.signal.butter(2, hz, btype="highpass", fs=rate) designs it."""
    k = math.tan(math.pi * hz / rate)
    norm = 1.0 / (1.0 + math.sqrt(2) * k + k * k)
    return Biquad(b=(norm, -2.0 * norm, norm), a=(1.0, 2.0 * (k * k - 1.0) * norm, (1.0 - math.sqrt(2) * k + k * k) * norm))


class _Plan(NamedTuple):
    powers: np.ndarray  # A^0 .. A^BLOCK, (BLOCK + 1, 2, 2)
    toeplitz: np.ndarray  # T, (BLOCK, BLOCK)
    observe: np.ndarray  # O, (BLOCK, 2): row i is C A^i
    drive: np.ndarray  # G, (2, BLOCK): column j is A^(BLOCK-1-j) B
    step: np.ndarray  # B, (2,)


@functools.lru_cache(maxsize=32)
def _plan(f: Biquad) -> _Plan:
    (b0, b1, b2), (_, a1, a2) = f
    a_mat = np.array([[-a1, 1.0], [-a2, 0.0]])
    b_vec = np.array([b1 - a1 * b0, b2 - a2 * b0])
    powers = np.empty((BLOCK + 1, 2, 2))
    powers[0] = np.eye(2)
    for i in range(1, BLOCK + 1):
        powers[i] = a_mat @ powers[i - 1]
    h = np.concatenate([[b0], powers[: BLOCK - 1, 0, :] @ b_vec])  # impulse response, first BLOCK samples
    idx = np.arange(BLOCK)
    lag = idx[:, None] - idx[None, :]
    toeplitz = np.where(lag >= 0, h[np.clip(lag, 0, None)], 0.0)
    drive = (powers[BLOCK - 1 - idx] @ b_vec).T
    return _Plan(powers, toeplitz, powers[:BLOCK, 0, :].copy(), drive, b_vec)


def _block_states(p: np.ndarray, pushes: np.ndarray, s0: np.ndarray) -> np.ndarray:
    """States at the start of each block and after the last: S[0] = s0, S[k + 1] = P S[k] + pushes[k],
    by a doubling scan (after the pass with offset d, row k sums the 2d terms ending at k)."""
    w = np.concatenate([s0[None, :], pushes])
    pd, d = p, 1
    while d < len(w):
        w[d:] = w[d:] + w[:-d] @ pd.T
        pd, d = pd @ pd, 2 * d
    return w


def lfilter(f: Biquad, x: np.ndarray, zi: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(y, final state) of the biquad run over the 1-D signal x from state zi (zeros by default), float64:
    scipy.signal.lfilter(f.b, f.a, x, zi=zi) to float rounding."""
    plan = _plan(f)
    x = np.asarray(x, dtype=np.float64)
    s = np.zeros(2) if zi is None else np.asarray(zi, dtype=np.float64).copy()
    n = len(x)
    nb, y = n // BLOCK, np.empty(n)
    full = nb * BLOCK
    if nb:
        blocks = x[:full].reshape(nb, BLOCK)
        states = _block_states(plan.powers[BLOCK], blocks @ plan.drive.T, s)
        y[:full] = (blocks @ plan.toeplitz.T + states[:nb] @ plan.observe.T).ravel()
        s = states[nb]
    r = n - full
    if r:
        tail = x[full:]
        y[full:] = plan.toeplitz[:r, :r] @ tail + plan.observe[:r] @ s
        s = plan.powers[r] @ s + plan.drive[:, BLOCK - r:] @ tail
    return y, s


def steady_state(f: Biquad) -> np.ndarray:
    """The state in which a constant input of 1 gives a constant output (scipy.signal.lfilter_zi)."""
    plan = _plan(f)
    return np.linalg.solve(np.eye(2) - plan.powers[1], plan.step)  # (I - A) s = B


def filtfilt(f: Biquad, x: np.ndarray) -> np.ndarray:
    """Zero-phase filtering, forward then backward, with 9 samples of odd extension at each end and the
    steady-state initial conditions: scipy.signal.sosfiltfilt of the one section, to float rounding."""
    x = np.asarray(x, dtype=np.float64)
    pad = 9  # scipy's default for one section: 3 x (2 x sections + 1)
    if len(x) <= pad:
        raise ValueError(f"The length of the input vector x must be greater than padlen, which is {pad}.")
    ext = np.concatenate([2 * x[0] - x[pad:0:-1], x, 2 * x[-1] - x[-2:-pad - 2:-1]])
    zi = steady_state(f)
    y, _ = lfilter(f, ext, zi * ext[0])
    y, _ = lfilter(f, y[::-1], zi * y[-1])
    return y[::-1][pad:-pad]
