"""The task registry: every benchmark behind one protocol, options as data, and `bench run --task` refusing
what it cannot run with one clear line (exit 2, no traceback, nothing run)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from audiomind.bench.cli import bench_app
from audiomind.bench.tasks import Benchmark, TaskItems, make_task, run_task, task_class, task_names
from audiomind.bench.tasks.item_list import ItemListTask
from audiomind.bench.tasks.msu import MSUTask


def test_every_registered_task_follows_the_protocol():
    assert task_names() == ["mmar", "msu", "synthetic", "items", "edit-eval", "rubric-judge", "aura"]
    for name in task_names():
        task = make_task(name)
        assert isinstance(task, Benchmark), name
        assert task.name == name and task.description and task_class(name) is type(task)


def test_task_options_are_typed_and_checked():
    assert make_task("msu", {"pack": "concat", "keep-reverse": "yes"}) == MSUTask(pack="concat", keep_reverse=True)
    assert make_task("items", {"benchmark": "mine"}) == ItemListTask(benchmark="mine")
    with pytest.raises(ValueError, match=r"task 'msu' has no option 'colour' \(options: keep_reverse, missing_audio, pack, version\)"):
        make_task("msu", {"colour": "red"})
    with pytest.raises(ValueError, match="expected true or false"):
        make_task("msu", {"keep_reverse": "maybe"})
    with pytest.raises(ValueError, match="unknown task 'mmlu'; known: mmar, msu, synthetic, items"):
        make_task("mmlu")
    with pytest.raises(ValueError, match=r"unknown kinds \['nope'\]"):
        make_task("synthetic", {"kinds": "counting,nope"}).kind_list()


def test_run_task_writes_the_task_files_after_an_interrupt(tmp_path, monkeypatch):
    """Ctrl-C mid-run: the official files are still written from what was committed, then it propagates."""
    import audiomind.bench.tasks as tasks_mod

    (tmp_path / "audio").mkdir()
    meta = tmp_path / "MMAR-meta.jsonl"
    meta.write_text(json.dumps({"id": "a1", "audio_path": "./audio/a1.wav", "question": "What is heard?",
                                "choices": ["x", "y"], "answer": "x", "modality": "sound"}) + "\n")
    task = make_task("mmar")
    loaded = task.load_items(meta)
    assert isinstance(loaded, TaskItems) and [it.id for it in loaded.items] == ["a1"] and not loaded.errors

    real = tasks_mod.run_batch

    def run_then_interrupt(*args, **kwargs):
        real(*args, **kwargs)  # the audio is missing: the item is committed without asking an agent
        raise KeyboardInterrupt

    monkeypatch.setattr(tasks_mod, "run_batch", run_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_task(task, loaded, tmp_path / "run", lambda: None, progress=False)
    pred = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert pred["id"] == "a1" and "answer_prediction" not in pred  # missing audio: echoed, not predicted
    assert json.loads((tmp_path / "run" / "scores.json").read_text())["rows"] == 1
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert config["task"] == "mmar" and config["benchmark"] == "mmar" and config["meta"] == str(meta.resolve())


@pytest.mark.parametrize("args,needle", [
    (["--task", "mmlu"], "unknown task 'mmlu'; known: mmar, msu, synthetic, items"),
    (["--task", "msu", "--task-option", "pack"], "--task-option 'pack': expected KEY=VALUE"),
    (["--task", "msu", "--task-option", "colour=red"], "task 'msu' has no option 'colour'"),
    (["--task", "mmar", "--benchmark", "x"], "--benchmark names the results of an item list"),
])
def test_bench_run_refuses_bad_task_arguments(tmp_path, args, needle):
    src = tmp_path / "in.jsonl"
    src.write_text("")
    res = CliRunner().invoke(bench_app, ["run", "--source", str(src), "--out", str(tmp_path / "run"), *args])
    assert res.exit_code == 2, res.output
    assert needle in " ".join(res.output.split()) and "Traceback" not in res.output
    assert not (tmp_path / "run").exists()


def test_bench_run_names_a_missing_source(tmp_path):
    res = CliRunner().invoke(bench_app, ["run", "--task", "mmar", "--meta", str(tmp_path / "nope.jsonl"),
                                         "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "no MMAR meta file" in res.output and "nope.jsonl" in res.output


def test_synthetic_sets_are_read_row_by_row(tmp_path):
    """A synthetic set goes through the same row checks and path policy as MMAR: a bad row or an audio path
    leaving the set's folder is an errored item with its file and line; --strict refuses the set."""
    from audiomind.bench.rows import RowsError
    from audiomind.bench.tasks import synthetic

    (tmp_path / "set" / "audio").mkdir(parents=True)
    (tmp_path / "set" / "audio" / "a.wav").write_bytes(b"RIFF")
    row = {"id": "syn-dev-counting-s0-0000", "audio_path": "./audio/a.wav", "question": "How many beeps?",
           "choices": ["2", "3"], "answer": "3", "kind": "counting", "split": "dev",
           "construction": {"condition": "clean"}}
    lines = [row, {**row, "id": "escape", "audio_path": "../../outside.wav"},
             {**row, "id": "nochoices", "choices": None}, {**row, "id": "tempo1", "kind": "tempo"}]
    (tmp_path / "set" / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    task = make_task("synthetic", {"kinds": "counting"})
    loaded = task.load_items(tmp_path / "set")
    by = {it.id: it for it in loaded.items}
    assert list(by) == ["syn-dev-counting-s0-0000", "escape", "nochoices"]  # the tempo row is not selected
    assert by["syn-dev-counting-s0-0000"].error is None
    assert by["syn-dev-counting-s0-0000"].metadata["group"] == "perception"
    assert by["escape"].error.startswith("meta.jsonl:2: audio_path refused:")
    assert by["nochoices"].error.startswith('meta.jsonl:3: missing "choices"')
    with pytest.raises(RowsError, match="2 bad row"):
        task.load_items(tmp_path / "set", strict=True)
    # rows of another kind are left out, bad ones too: only a row of no known kind is always kept
    assert [it.id for it in synthetic.load_items(tmp_path / "set", ["tempo"])] == ["tempo1"]
