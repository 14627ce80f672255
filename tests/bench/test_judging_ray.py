"""The three judge tasks (edit-eval, rubric-judge, aura) through the runner on Ray: each item judged in a Ray
actor process (not this one), every id committed exactly once with its trace (written by the driver from what
the actor sent back), judgments.jsonl in source order, and each verdict the one in its own trace.

One local Ray instance (2 CPUs, its own short temp dir) serves the three runs, as tests/bench/test_runner.py's
Ray test does; the judges are the real offline ones (rules + cascade, embedded models), so the module is slow.
Audio is real and true by construction: edit pairs from audiomind.judges.pairs, other clips from audiomind.synth.
(kill -9 and resume of a judge task: tests/bench/tasks/test_judging.py, edit-eval.)"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from audiomind.bench.tasks import make_task, run_task

ray = pytest.importorskip("ray", reason="ray is not installed: the --ray path cannot be tested here")

pytestmark = pytest.mark.slow

def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def local_ray():
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_AUTH_MODE", "disabled")
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must stay < 108 chars
    ray.init(num_cpus=2, _temp_dir=temp, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().get_node_id()
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        mp.undo()


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    from audiomind import synth
    from audiomind.judges import pairs

    d = tmp_path_factory.mktemp("judge_sets")
    bgs, evs = pairs.default_sources(d / "src")
    add = pairs.make_pair("add", bgs[0], evs[0], d, pair_id="add", offset_s=3.0, gain_db=-3)
    delete = pairs.make_pair("delete", bgs[0], evs[1], d, pair_id="delete", offset_s=2.8, gain_db=-3)
    shutil.copy(add.original_path, d / "noop_copy.wav")
    woman = synth.speech("good morning everyone", d / "woman.wav", voice="slt")
    phone = synth.sound_file("phone-incoming-call", d / "phone.wav", repeat=2)
    synth.concat([woman, phone], d / "woman_then_phone.wav", gap_s=0.4)
    synth.beeps(3, d / "beeps3.wav")

    def rel(p):
        return os.path.relpath(p, d)

    edit = _write(d / "pairs.jsonl", [
        {"id": "add", "original": rel(add.original_path), "edited": rel(add.edited_path),
         "instruction": "Add a telephone ringing after the speech.", "label": True, "operation": "add"},
        {"id": "delete", "original": rel(delete.original_path), "edited": rel(delete.edited_path),
         "instruction": "Remove the paper crumpling.", "label": True, "operation": "delete"},
        {"id": "noop", "original": rel(add.original_path), "edited": "noop_copy.wav",
         "instruction": "Add a telephone ringing after the speech.", "label": False, "operation": "add"},
    ])
    rubric = _write(d / "rubric.jsonl", [
        {"id": "pos", "audio": "woman_then_phone.wav",
         "instruction": "A woman says 'good morning everyone', then a telephone rings.", "label": True},
        {"id": "neg_order", "audio": "woman_then_phone.wav",
         "instruction": "A telephone rings, then a man says 'good morning everyone'.", "label": False},
        {"id": "beeps", "audio": "beeps3.wav", "instruction": "Three beeps.", "label": True},
    ])
    aura = _write(d / "aura.jsonl", [
        {"id": "right", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "There are three beeps.", "label": 1},
        {"id": "wrong", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "There are five beeps.", "label": 0},
        {"id": "vague", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "Several beeps.", "label": 0.5},
    ])
    return {"edit-eval": edit, "rubric-judge": rubric, "aura": aura}


@pytest.mark.parametrize("task_name,options", [("edit-eval", {}), ("rubric-judge", {"holistic": "false"}),
                                               ("aura", {})])
def test_judge_task_on_ray_loses_and_doubles_nothing(local_ray, sets, tmp_path, task_name, options):
    task = make_task(task_name, options)
    loaded = task.load_items(sets[task_name])
    ids = [it.id for it in loaded.items]
    out = tmp_path / "R"
    summary, files = run_task(task, loaded, out, lambda: pytest.fail("a judge task never builds an agent"),
                              workers=2, ray_address="local", progress=False)
    assert summary.backend == "ray" and summary.statuses == {"answered": 3}, summary.statuses
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == sorted(ids), "every id committed exactly once"
    for r in lines:
        w = r["worker"]  # judged in a Ray actor of this node, first try, nothing lost
        assert w["node_id"] == local_ray and w["pid"] not in (0, os.getpid()) and w["actor_id"]
        assert w["attempt"] == 1 and w["lost"] == []
        trace = json.loads((out / r["trace_path"]).read_text())
        assert r["trace_path"] == f"traces/{r['id']}.json" and trace["question"]["item_id"] == r["id"]
        judged = next(c for c in trace["tool_calls"] if c["tool"] == f"judge_{task.kind}")["output"]
        assert r["confidence"] == judged["p"]  # the judge's calibrated probability, as in the trace
    assert len({r["worker"]["actor_id"] for r in lines}) <= 2
    assert not list((out / "artifacts").glob("*.json")), "no second copy of a trace outside traces/"
    judgments = [json.loads(x) for x in files["judgments"].read_text().splitlines()]
    assert [j["id"] for j in judgments] == ids  # source order, once each
    if task_name == "aura":
        by = {r["id"]: r for r in lines}
        assert by["right"]["prediction"] == "correct" and by["wrong"]["prediction"] == "incorrect"
