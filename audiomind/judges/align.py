"""Aligning an original and an edited clip, and what the edit changed (pure numpy, no models).

1. Candidate offsets: peaks of the cross-correlation of the two clips' 10 ms RMS envelopes (mean removed),
   each refined to the sample by the cross-correlation of the samples around it (FFT, once).
2. A Viterbi path over the edited clip's frames picks one candidate offset per frame (cost: the residual
   energy edited - shifted original over the louder of the two, 0..1; a switch between offsets costs
   `SWITCH_COST`), so an insertion or a cut in the middle is two offsets, not one bad one.
3. A frame is *kept* when its residual is at least `KEPT_DB` below the louder clip there (or both are
   silent). Original frames that kept frames reproduce are *claimed*; under a changed frame, the original
   counts only where it is not claimed elsewhere (inserted material sits over nothing).
4. `added` = edited - aligned original (edited timeline): what is new, alone; `removed` = the original
   material not reproduced (original timeline): what is gone, alone. Contiguous changed stretches (gaps
   under `MERGE_S` bridged, stretches under `MIN_SEG_S` or quieter than `MIN_DBFS` dropped) are segments:
   - in place (the original is under it): added when the edited clip there carries clearly more energy than
     the original ((E_edit - E_orig) / E_residual > 0.5), removed when clearly less, else replaced;
   - edited material over nothing: added (inserted); original material reproduced nowhere: removed (cut).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

SR = 16000
HOP = 160  # 10 ms frames
SWITCH_COST = 50.0
SILENT_COST = 0.5
ALIGNED_RHO = 0.5  # correlation of the edited clip with the aligned original that still counts as aligned
CLEAR_RATIO = 10.0  # a bin is clearly new (gone) when the edited (original) power is 10x the other's there
CLEAR_SHARE = 0.01  # a side counts when its clear bins hold >= 1% of that stretch's power
CLEAR_FLOOR = 1e-3  # ... and >= -30 dB of the louder side's power
KEPT_DB = -20.0
SILENT_DBFS = -60.0
MIN_DBFS = -50.0
MIN_SEG_S = 0.03
MERGE_S = 0.2
N_CANDIDATES = 4


class Change(BaseModel):
    """One changed stretch: times in the edited clip (start_s/end_s) and in the original (orig_*)."""

    kind: Literal["added", "removed", "replaced"]
    start_s: float = Field(description="edited-clip time (for a cut: where the cut is)")
    end_s: float
    orig_start_s: float | None = None
    orig_end_s: float | None = None
    energy_db: float = Field(description="RMS of the changed material (dBFS)")
    balance: float | None = Field(None, description="(E_edit - E_orig) / E_residual where both are there")
    how: str = ""

    @property
    def length_s(self) -> float:
        return max(self.end_s - self.start_s, (self.orig_end_s or 0) - (self.orig_start_s or 0))


class Alignment(BaseModel):
    aligned: bool = Field(description="the clips share material sample for sample")
    identical: bool = False
    offsets_s: list[float] = Field(default_factory=list, description="offsets used (edited time - original time)")
    pieces: list[tuple[float, float, float]] = Field(default_factory=list,
                                                     description="(edited start, end, offset) of kept stretches")
    kept_share: float = Field(0.0, description="share of the original's energy the edited clip keeps (unchanged, or "
                                               "with something only laid over it)")
    gain_db: float = Field(0.0, description="level change of the whole clip (edited over original), dB")
    residual_db: float | None = Field(None, description="added+removed material RMS relative to the louder clip (dB)")
    changes: list[Change] = Field(default_factory=list)
    why: str = ""


def _frames(y: np.ndarray) -> np.ndarray:
    n = len(y) // HOP
    return np.sum(y[: n * HOP].reshape(n, HOP) ** 2, axis=1) if n else np.zeros(0)


def _dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = min(len(a), len(b)) // HOP
    return np.sum((a[: n * HOP] * b[: n * HOP]).reshape(n, HOP), axis=1) if n else np.zeros(0)


def _db(e: float, n: int) -> float:
    return 10 * math.log10(max(e / max(n, 1), 1e-20))


def _xcorr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """c[k + len(b) - 1] = sum_t a[t] b[t - k] (full cross-correlation by FFT)."""
    n = len(a) + len(b) - 1
    size = 1 << (n - 1).bit_length()
    fa = np.fft.rfft(a, size)
    fb = np.fft.rfft(b[::-1], size)
    return np.fft.irfft(fa * fb, size)[:n]


def candidate_offsets(y0: np.ndarray, y1: np.ndarray) -> list[int]:
    """Sample offsets (edited index - original index) that line the clips up, best first."""
    e0, e1 = np.sqrt(_frames(y0) / HOP), np.sqrt(_frames(y1) / HOP)
    if not len(e0) or not len(e1):
        return [0]
    c = _xcorr(e1 - e1.mean(), e0 - e0.mean())
    lags = np.arange(len(c)) - (len(e0) - 1)
    order = np.argsort(-c)
    picked: list[int] = []
    for i in order:
        if len(picked) >= N_CANDIDATES:
            break
        if all(abs(lags[i] - p) > 20 for p in picked):
            picked.append(int(lags[i]))
    if 0 not in picked:
        picked.append(0)
    cs = _xcorr(y1, y0)
    out = []
    for lag in picked:  # refine each to the sample within +- 1.5 frames
        lo = max(0, lag * HOP - int(1.5 * HOP) + len(y0) - 1)
        hi = min(len(cs), lag * HOP + int(1.5 * HOP) + len(y0))
        best = int(np.argmax(cs[lo:hi])) + lo - (len(y0) - 1) if hi > lo else lag * HOP
        if best not in out:
            out.append(best)
    if 0 not in out:  # an edit in place keeps offset 0 exactly: a refinement pulled by the changed part (two
        out.append(0)  # melodies that correlate) must not move it a sample away from the kept part
    # and the strongest peaks of the sample cross-correlation itself: material shared sample for sample
    # peaks there sharply, even where the envelopes are dominated by something else
    order = np.argsort(-cs)
    taken = 0
    for i in order[: 20000]:
        lag = int(i) - (len(y0) - 1)
        if all(abs(lag - o) > HOP for o in out):
            out.append(lag)
            taken += 1
            if taken >= N_CANDIDATES:
                break
    return out


def _shift(y0: np.ndarray, off: int, n: int) -> np.ndarray:
    """y0 placed on the edited timeline: z[t] = y0[t - off] (0 outside)."""
    z = np.zeros(n)
    a, b = max(0, off), min(n, len(y0) + off)
    if b > a:
        z[a:b] = y0[a - off: b - off]
    return z


def align(y0: np.ndarray, y1: np.ndarray) -> tuple[Alignment, np.ndarray, np.ndarray]:
    """(alignment, added signal on the edited timeline, removed signal on the original timeline)."""
    y0 = np.asarray(y0, dtype=np.float64)
    y1 = np.asarray(y1, dtype=np.float64)
    n1, n0 = len(y1), len(y0)
    nf1, nf0 = n1 // HOP, n0 // HOP
    if nf1 == 0 or nf0 == 0:
        return Alignment(aligned=False, why="a clip is shorter than one frame"), y1.copy(), y0.copy()
    if n0 == n1 and np.max(np.abs(y1 - y0), initial=0.0) < 1e-6:
        return (Alignment(aligned=True, identical=True, offsets_s=[0.0], pieces=[(0.0, n1 / SR, 0.0)], kept_share=1.0,
                          residual_db=None, why="the edited clip equals the original sample for sample"),
                np.zeros(n1), np.zeros(n0))
    offs = candidate_offsets(y0, y1)
    silent = HOP * 10 ** (SILENT_DBFS / 10)
    e1 = _frames(y1)[:nf1]
    # one level change over the whole clip (a normalised export) is no edit: the original is scaled by the
    # gain its best-matching frames show (frames whose shapes agree to 99%), and the gain is reported
    gain, support = 1.0, 0
    for off in offs:
        z = _shift(y0, off, n1)
        ez = _frames(z)[:nf1]
        dot = _dots(y1, z)[:nf1]
        ok = (e1 >= silent) & (ez >= silent) & (dot ** 2 >= 0.99 * e1 * np.maximum(ez, 1e-20))
        if ok.sum() > support:
            support, gain = int(ok.sum()), float(np.median(dot[ok] / ez[ok]))
    if support == 0 or not 0.1 <= gain <= 10:
        gain = 1.0
    y0 = y0 * gain
    costs, ezs, ers = [], [], []
    for off in offs:
        z = _shift(y0, off, n1)
        ez, er = _frames(z)[:nf1], _frames(y1 - z)[:nf1]
        loud = np.maximum(e1, ez)
        # a silent edited frame costs the same under every offset: silence never votes for an offset
        cost = np.where(e1 < silent, SILENT_COST, np.minimum(1.0, er / np.maximum(loud, 1e-20)))
        costs.append(cost)
        ezs.append(ez)
        ers.append(er)
    C = np.stack(costs)  # [K, frames]
    K = len(offs)
    # Viterbi over the offsets
    acc = C[:, 0].copy()
    back = np.zeros((K, nf1), dtype=int)
    for t in range(1, nf1):
        trans = acc[None, :] + SWITCH_COST * (1 - np.eye(K))
        back[:, t] = np.argmin(trans, axis=1)
        acc = trans[np.arange(K), back[:, t]] + C[:, t]
    path = np.zeros(nf1, dtype=int)
    path[-1] = int(np.argmin(acc))
    for t in range(nf1 - 1, 0, -1):
        path[t - 1] = back[path[t], t]
    ez = np.stack(ezs)[path, np.arange(nf1)]
    er = np.stack(ers)[path, np.arange(nf1)]
    loud = np.maximum(e1, ez)
    both_silent = loud < silent
    kept = (er <= 10 ** (KEPT_DB / 10) * loud) | both_silent
    frame_off = np.array([offs[k] for k in path])
    # original frames reproduced by kept (non-silent) frames
    claimed = np.zeros(nf0, dtype=bool)
    for t in np.where(kept & ~both_silent)[0]:
        j = (t * HOP - frame_off[t]) // HOP
        if 0 <= j < nf0:
            claimed[j] = True
            if j + 1 < nf0:
                claimed[j + 1] = claimed[j + 1] or ((t * HOP - frame_off[t]) % HOP > 0)
    # the aligned original under each edited frame, where it is not claimed elsewhere
    z = np.zeros(n1)
    under = np.zeros(nf1, dtype=bool)  # a changed frame with original material under it
    for t in range(nf1):
        a = t * HOP
        src = a - frame_off[t]
        if src < 0 or src + HOP > n0:
            continue
        j = src // HOP
        if kept[t] or not claimed[j]:
            z[a:a + HOP] = y0[src:src + HOP]
            if not kept[t] and np.sum(y0[src:src + HOP] ** 2) >= silent:
                under[t] = True
    if n1 > nf1 * HOP:
        z[nf1 * HOP:] = _shift(y0, int(frame_off[-1]), n1)[nf1 * HOP:]
    added = y1 - z
    added[: nf1 * HOP][np.repeat(kept, HOP)] = 0.0  # kept frames carry nothing new
    ez_under = _frames(z)[:nf1]
    # in-place changed stretches: what the edited clip carries that the original did not (new) and the reverse
    # (gone), from power spectra, so a quiet new sound over a loud old one is still seen
    changes: list[Change] = []
    e_add = _frames(added)[:nf1]
    changed1 = ~kept & (e_add >= HOP * 10 ** (MIN_DBFS / 10))
    inplace_kind: dict[tuple[int, int], str] = {}
    for a, b in _runs(changed1):
        sl = slice(a, b)
        off = float(np.median(frame_off[sl])) / SR
        # original material under the stretch (sparse strokes count: >= -20 dB of the stretch's energy)
        if under[sl].any() and float(ez_under[sl][under[sl]].sum()) >= 0.01 * float(e1[sl].sum()):
            fn, fg = _new_gone(y1[a * HOP:b * HOP], z[a * HOP:b * HOP])
            has_new, has_gone = fn >= CLEAR_SHARE, fg >= CLEAR_SHARE
            kind: Literal["added", "removed", "replaced"] = (
                "replaced" if has_new and has_gone else "removed" if has_gone else "added")
            inplace_kind[(a, b)] = kind
            changes.append(Change(kind=kind, start_s=a * HOP / SR, end_s=b * HOP / SR, orig_start_s=max(0.0, a * HOP / SR - off),
                                  orig_end_s=min(n0 / SR, b * HOP / SR - off), energy_db=round(_db(float(e_add[sl].sum()), (b - a) * HOP), 1),
                                  balance=round(fn - fg, 3),
                                  how=f"in place: clearly new bins hold {fn:.1%} of the edited stretch's power, "
                                      f"clearly gone bins {fg:.1%} of the original's"))
        else:
            changes.append(Change(kind="added", start_s=a * HOP / SR, end_s=b * HOP / SR,
                                  energy_db=round(_db(float(e_add[sl].sum()), (b - a) * HOP), 1),
                                  how="inserted over nothing"))
    # the original material not reproduced (cut, or changed in place): the removed signal, original timeline
    removed = y0.copy()
    used = np.zeros(nf0, dtype=bool)
    kept0 = np.zeros(nf0, dtype=bool)  # original frames the edited clip reproduces unchanged
    run_of = np.full(nf1, -1)
    runs = list(inplace_kind)
    for r, (a, b) in enumerate(runs):
        run_of[a:b] = r
    for t in range(nf1):
        src = t * HOP - frame_off[t]
        if src < 0 or src + HOP > n0:
            continue
        j = src // HOP
        if kept[t]:
            removed[src:src + HOP] = 0.0
            used[j] = kept0[j] = True
        elif under[t]:
            kind_t = inplace_kind[runs[run_of[t]]] if run_of[t] >= 0 else "replaced"
            removed[src:src + HOP] = 0.0 if kind_t == "added" else y0[src:src + HOP] - y1[t * HOP:t * HOP + HOP]
            used[j] = True
            kept0[j] = kept0[j] or kind_t == "added"  # something was laid over it: the original is still there
    e_rem = _frames(removed)[:nf0]
    cut = ~used & (e_rem >= HOP * 10 ** (MIN_DBFS / 10))
    kept_real = kept & ~both_silent
    for a, b in _runs(cut):
        # where the cut sits on the edited timeline: its original start under the offset of the last kept
        # frame that maps before it
        before = [t for t in np.where(kept_real)[0] if (t * HOP - frame_off[t]) // HOP < a]
        at = min(n1 / SR, max(0.0, (a * HOP + (frame_off[before[-1]] if before else 0)) / SR))
        changes.append(Change(kind="removed", start_s=at, end_s=at, orig_start_s=a * HOP / SR, orig_end_s=b * HOP / SR,
                              energy_db=round(_db(float(e_rem[a:b].sum()), (b - a) * HOP), 1),
                              how="cut: reproduced nowhere in the edited clip"))
    changes = _group(changes)
    removed = removed / gain
    e0f = _frames(y0)[:nf0]
    kept_share = float(e0f[kept0].sum()) / max(float(e0f.sum()), 1e-20)
    ref = max(float(np.sum(y0 ** 2)), float(np.sum(y1 ** 2)), 1e-20)
    rdb = 10 * math.log10(max(float(np.sum(added ** 2) + np.sum(removed ** 2)), 1e-20) / ref)
    kept_edit = float(np.sum(e1[kept_real])) / max(float(np.sum(e1)), 1e-20)
    # the clips share material sample for sample when a fair part of either is kept (by energy, or by time:
    # quiet speech next to a loud sound), or when the edited clip still correlates with the aligned original
    # as a whole (a bed removed from under the speech changes every frame, yet the speech is the same)
    loud1 = e1 >= silent
    kept_time = float((kept_real & loud1).sum()) / max(float(loud1.sum()), 1.0)
    zf = _shift(y0, offs[int(np.bincount(path).argmax())], n1)
    rho = float(np.dot(y1, zf)) / max(math.sqrt(float(np.dot(y1, y1)) * float(np.dot(zf, zf))), 1e-20)
    aligned = kept_share >= 0.3 or kept_edit >= 0.3 or kept_time >= 0.3 or rho >= ALIGNED_RHO
    pieces = []
    for a, b in _runs(kept_real):
        pieces.append((round(a * HOP / SR, 3), round(b * HOP / SR, 3), round(float(np.median(frame_off[a:b])) / SR, 4)))
    used_offs = sorted({round(float(o) / SR, 4) for o in frame_off[kept_real]})
    why = (f"aligned at offset(s) {', '.join(f'{o:+.3f} s' for o in used_offs) or '0'}: the edited clip keeps "
           f"{kept_share:.0%} of the original's energy unchanged; {len(changes)} changed stretch(es); "
           f"changed material at {rdb:.1f} dB relative to the louder clip") if aligned else (
        f"no sample-level alignment (the edited clip keeps {kept_share:.0%} of the original): the edit regenerated "
        "the audio, so the clips are compared as wholes")
    if aligned and not changes and rdb < -50:
        g_db = round(20 * math.log10(gain), 2)
        return (Alignment(aligned=True, identical=True, offsets_s=used_offs, pieces=pieces, kept_share=round(kept_share, 4),
                          gain_db=g_db, residual_db=round(rdb, 1),
                          why=f"the edited clip reproduces the original (changed material at {rdb:.1f} dB"
                              + (f", level {g_db:+.1f} dB overall" if abs(g_db) >= 0.5 else "") + "): nothing was changed"),
                np.zeros(n1), np.zeros(n0))
    gain_db = round(20 * math.log10(gain), 2)
    if aligned and abs(gain_db) >= 0.5:
        why += f"; the edited clip's level is {gain_db:+.1f} dB overall"
    return (Alignment(aligned=aligned, offsets_s=used_offs, pieces=pieces, kept_share=round(kept_share, 4),
                      gain_db=gain_db, residual_db=round(rdb, 1), changes=changes if aligned else [], why=why),
            added, removed)


GROUP_S = 0.3  # changes of different kinds this close are one change (a replacement)
GROUP_SAME_S = 1.0  # changes of one kind this close are one change (the rings of one phone, a run of beeps)


def _group(changes: list[Change]) -> list[Change]:
    """Changes close on the edited timeline are one change: sharing a side (new or gone material) within
    GROUP_SAME_S (a ring and its next ring; a replacement and the rest of the new sound), else within GROUP_S (an in-place stretch and the insertion or cut that continues
    it are one replacement when one side adds and the other removes)."""
    out: list[Change] = []
    for c in sorted(changes, key=lambda c: (c.start_s, c.orig_start_s or 0.0)):
        prev = out[-1] if out else None
        sides = {"added": {"new"}, "removed": {"gone"}, "replaced": {"new", "gone"}}
        gap = GROUP_SAME_S if prev is not None and sides[prev.kind] & sides[c.kind] else GROUP_S
        if prev is not None and c.start_s <= prev.end_s + gap:
            kinds = {prev.kind, c.kind}
            kind = prev.kind if len(kinds) == 1 else "replaced"
            o0 = [x for x in (prev.orig_start_s, c.orig_start_s) if x is not None]
            o1 = [x for x in (prev.orig_end_s, c.orig_end_s) if x is not None]
            out[-1] = Change(kind=kind, start_s=prev.start_s, end_s=max(prev.end_s, c.end_s),
                             orig_start_s=min(o0) if o0 else None, orig_end_s=max(o1) if o1 else None,
                             energy_db=max(prev.energy_db, c.energy_db), balance=prev.balance,
                             how=f"{prev.how}; then {c.how}")
        else:
            out.append(c)
    return out


def _new_gone(y1: np.ndarray, z: np.ndarray) -> tuple[float, float]:
    """(new share, gone share): the share of the edited stretch's power in time-frequency bins where it is
    CLEAR_RATIO times the original's, and the reverse (STFT, 512 points, 10 ms hop). Where one sound is
    only added, the other side's share stays near 0 (interference of the two never reaches 10x)."""
    n_fft = 512
    if len(y1) < n_fft:
        y1 = np.pad(y1, (0, n_fft - len(y1)))
        z = np.pad(z, (0, n_fft - len(z)))
    win = np.hanning(n_fft)
    frames = range(0, len(y1) - n_fft + 1, HOP)
    P1 = np.array([np.abs(np.fft.rfft(win * y1[i:i + n_fft])) ** 2 for i in frames])
    P0 = np.array([np.abs(np.fft.rfft(win * z[i:i + n_fft])) ** 2 for i in frames])
    t1, t0 = float(P1.sum()), float(P0.sum())
    new_p = float((P1 * (P1 > CLEAR_RATIO * P0)).sum())
    gone_p = float((P0 * (P0 > CLEAR_RATIO * P1)).sum())
    louder = max(t1, t0, 1e-20)
    # a side also needs CLEAR_FLOOR of the louder side's power: a few loud-enough bins of near-silence are no sound
    new = new_p / max(t1, 1e-20) if new_p >= CLEAR_FLOOR * louder else 0.0
    gone = gone_p / max(t0, 1e-20) if gone_p >= CLEAR_FLOOR * louder else 0.0
    return new, gone


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) frame runs of True, gaps under MERGE_S bridged, runs under MIN_SEG_S dropped."""
    runs: list[list[int]] = []
    idx = np.where(mask)[0]
    gap = int(MERGE_S * SR / HOP)
    for i in idx:
        if runs and i - runs[-1][1] <= gap:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return [(a, b) for a, b in runs if (b - a) * HOP / SR >= MIN_SEG_S]
