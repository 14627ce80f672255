"""The synthetic benchmark's sets, generated once per test session (real audio, no models needed)."""

from __future__ import annotations

import pytest

SYN_SEED = 11
# items per kind: dev 2 (the tool re-measurements look at two variants per kind), the other splits 1
SYN_PER_KIND = {"dev": 2, "heldout_phrasing": 1, "heldout_condition": 1}


@pytest.fixture(scope="session")
def syn(tmp_path_factory) -> dict:
    """{"root", "seed", "rows": {split: rows}, "by_kind": {split: {kind: rows}}, "stems"}: one MMAR-format
    set per split under root/<split>/; heldout_condition also keeps its clean and noise components in stems/."""
    from audiomind.bench import synthetic

    root = tmp_path_factory.mktemp("synthetic-splits")
    stems = root / "stems"
    rows = {s: synthetic.generate(root / s, per_kind=n, seed=SYN_SEED, split=s,
                                  stems_dir=stems if s == "heldout_condition" else None)
            for s, n in SYN_PER_KIND.items()}
    by_kind = {s: {k: [r for r in rs if r["kind"] == k] for k in synthetic.KINDS} for s, rs in rows.items()}
    return {"root": root, "seed": SYN_SEED, "rows": rows, "by_kind": by_kind, "stems": stems}
