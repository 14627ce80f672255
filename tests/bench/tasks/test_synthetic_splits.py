"""The synthetic benchmark's splits: phrasing banks (dev and held-out kept apart), held-out conditions (what
the construction records is what the written file holds: SNR and level measured from the file, rate and
channels from its header), voices, the splits as paired sets, the one-step kinds' truths (measured on the
audio or checked against the spoken text), and the evaluation table. Real audio from the session's sets
(tests/bench/conftest.py); no model is loaded."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import string
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind import synth
from audiomind.bench.items import ItemResult
from audiomind.bench.tasks import synthetic
from audiomind.bench.tasks import synthetic_generate as sg

ONE_STEP = {"day_shift", "list_missing", "beeps_before_voice", "louder_tone", "stereo_side", "first_speaker_gender"}
NEW_PLAIN = {"instruction_object", "speech_speed"}


def _read(path: Path) -> tuple[np.ndarray, int]:
    y, sr = sf.read(str(path), dtype="float64", always_2d=True)
    return y.T, sr


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


# ---------------------------------------------------------------- phrasing banks


def test_banks_disjoint_and_large_enough():
    banks = sg.phrasings()
    assert set(banks) == set(sg.KINDS), "one bank per kind, no stray kinds"
    for kind, b in banks.items():
        dev, held = b["dev"], b["heldout"]
        qd, qh = list(dev["questions"]), list(held["questions"])
        assert len(set(qd)) == len(qd) >= 5 and len(set(qh)) == len(qh) >= 5, kind
        assert len(qd) + len(qh) >= 10, kind

        def norm(q):
            return re.sub(r"\W+", " ", q.lower()).strip()

        assert not {norm(q) for q in qd} & {norm(q) for q in qh}, f"{kind}: a question is in both banks"
        # choice wordings: no choice set (and no single wording) is shared by the two banks
        cd = [tuple(sorted(c.items())) for c in dev.get("choices", [])]
        ch = [tuple(sorted(c.items())) for c in held.get("choices", [])]
        assert not set(cd) & set(ch), kind
        wd = {v for c in dev.get("choices", []) for k, v in c.items() if k not in ("sg", "pl")}
        wh = {v for c in held.get("choices", []) for k, v in c.items() if k not in ("sg", "pl")}
        assert not wd & wh, f"{kind}: choice wordings in both banks: {wd & wh}"
        assert bool(dev.get("choices")) == bool(held.get("choices")), kind
        # the two banks offer the same slot groups (the generator asks for the same group in either)
        assert set(dev.get("slots", {})) == set(held.get("slots", {})), kind


def test_every_template_fills_from_every_slot_entry():
    for kind, b in sg.phrasings().items():
        for which in ("dev", "heldout"):
            bank = b[which]
            slots = bank.get("slots") or {"any": [{}]}
            extra = {"word": "apple"} if kind == "word_repetition" else {}
            for group, entries in slots.items():
                for entry in entries:
                    for t in bank["questions"]:
                        assert _fields(t) <= set(entry) | set(extra), (kind, which, group, t)
                        q = t.format(**entry, **extra)
                        assert q[0].isupper() and q.rstrip()[-1] in ".?", (kind, q)
            if kind in sg.KINDS and sg.KINDS[kind].named_slot:
                named = [t for t in bank["questions"] if "{" + sg.KINDS[kind].named_slot in t]
                assert named, f"{kind}: no template names the target (needed under a distractor)"


# ---------------------------------------------------------------- splits as sets


def test_every_kind_generates_in_every_split_it_accepts(syn):
    made = {(r["kind"], s) for s, rows in syn["rows"].items() for r in rows}
    accepted = {(k, s) for k, kind in sg.KINDS.items() for s in kind.splits}
    assert made == accepted
    assert {"heldout_condition"} <= set().union(*(set(k.splits) for k in sg.KINDS.values()))
    assert len(sg.KINDS) >= 23 and set(sg.KINDS) >= ONE_STEP | NEW_PLAIN
    assert {k for k, v in sg.KINDS.items() if v.needs_step} == ONE_STEP
    for split, rows in syn["rows"].items():
        meta = [json.loads(x) for x in (syn["root"] / split / "meta.jsonl").read_text().splitlines()]
        assert meta == rows
        for r in rows:
            c = r["construction"]
            assert r["split"] == c["split"] == split and r["id"].startswith(f"syn-{split}-{r['kind']}-")
            assert c["needs_step"] == (r["kind"] in ONE_STEP)
            assert r["answer"] in r["choices"] and len(set(r["choices"])) == len(r["choices"])
            # the question is the recorded template of this split's bank, filled from the recorded slot entry
            bank = sg.bank(r["kind"], split)
            assert c["phrasing"]["bank"] == sg.PHRASING_BANK[split]
            t = bank["questions"][c["phrasing"]["template"]]
            slot = bank["slots"][c["phrasing"]["group"]][c["phrasing"]["slot"]] if "slot" in c["phrasing"] else {}
            q = t.format(**slot, word=c.get("word", ""))
            pre = (bank.get("choices") or [{}])[c["phrasing"].get("choices", 0)].get("preamble")
            assert r["question"] == (f"{pre} {q}" if pre else q), r["id"]
            assert synthetic.to_item(r, syn["root"] / split).metadata["split"] == split


def test_splits_are_paired_and_items_deterministic(syn, tmp_path):
    dev = {(r["kind"], r["construction"]["index"]): r for r in syn["rows"]["dev"]}
    for r in syn["rows"]["heldout_phrasing"]:
        d = dev[(r["kind"], r["construction"]["index"])]
        # same audio, same answer position, other words
        assert _sha(syn["root"] / "heldout_phrasing" / r["audio_path"]) == _sha(syn["root"] / "dev" / d["audio_path"])
        assert r["construction"]["answer_index"] == d["construction"]["answer_index"]

        def strip(c):
            return {k: v for k, v in c.items() if k not in ("split", "phrasing")}

        assert strip(r["construction"]) == strip(d["construction"]), r["id"]
        assert r["construction"]["phrasing"]["bank"] == "heldout" and d["construction"]["phrasing"]["bank"] == "dev"
        assert r["question"] != d["question"] or r["choices"] != d["choices"], r["id"]
    # deterministic by (seed, kind, index, split): a few items of each split again, alone
    for split, kinds in {"dev": ["speech_speed", "stereo_side"], "heldout_phrasing": ["day_shift"],
                         "heldout_condition": ["list_missing", "louder_tone", "counting"]}.items():
        for kind in kinds:
            first = syn["by_kind"][split][kind][0]
            again = sg.make_item(kind, syn["seed"], 0, tmp_path / split, split=split)
            assert again == first
            assert _sha(tmp_path / split / f"{first['id']}.wav") == _sha(syn["root"] / split / first["audio_path"])


# ---------------------------------------------------------------- conditions and voices

FORCED = [  # (kind, condition): every family and every noise, the extreme SNRs, rates and levels
    ("counting", {"name": "noise", "noise": "white", "snr_db": 10.0}),
    ("onset_time", {"name": "noise", "noise": "babble", "snr_db": 10.0}),
    ("louder_tone", {"name": "noise", "noise": "pink", "snr_db": 20.0}),
    ("stereo_side", {"name": "noise", "noise": "babble", "snr_db": 40.0}),
    ("pitch_compare", {"name": "level", "level_dbfs": -40.0}),
    ("stereo_side", {"name": "level", "level_dbfs": -3.0}),
    ("key_mode", {"name": "rate", "sample_rate": 8000}),
    ("louder_tone", {"name": "rate", "sample_rate": 48000}),
    ("day_shift", {"name": "rate", "sample_rate": 44100}),
    ("instruction_object", {"name": "stereo", "pan": -0.6}),
    ("counting", {"name": "distractor", "source": "speech", "position": "after"}),
    ("list_missing", {"name": "distractor", "source": "phone", "position": "before"}),
]


@pytest.fixture(scope="module")
def forced(tmp_path_factory, syn) -> list[dict]:
    d = tmp_path_factory.mktemp("forced")
    rows = [sg.make_item(k, syn["seed"], 0, d / "audio", split="heldout_condition", stems_dir=d / "stems",
                                condition=c) for k, c in FORCED]
    return [{"row": r, "wav": d / r["audio_path"], "stems": d / "stems" / r["id"]} for r in rows]


def _condition_items(syn, forced) -> list[dict]:
    out = [{"row": r, "wav": syn["root"] / "heldout_condition" / r["audio_path"], "stems": syn["stems"] / r["id"]}
           for r in syn["rows"]["heldout_condition"]]
    return out + forced


def test_conditions_are_what_the_construction_records(syn, forced):
    items = _condition_items(syn, forced)
    seen = {i["row"]["construction"]["condition"] for i in items}
    assert {"noise", "level", "rate", "stereo", "distractor", "voice"} <= seen
    for it in items:
        r, c = it["row"], it["row"]["construction"]
        kind = sg.KINDS[r["kind"]]
        assert c["condition"] in kind.families, r["id"]
        info = sf.info(str(it["wav"]))
        y, sr = _read(it["wav"])
        assert (info.samplerate, info.channels) == (c["sample_rate"], c["channels"]), r["id"]
        assert info.frames / info.samplerate == pytest.approx(c["clip_s"], abs=1e-3)
        assert synth.peak_dbfs(y) == pytest.approx(c["level_dbfs"], abs=0.02), r["id"]
        assert c["clip_s"] <= 13.0, r["id"]
        want_rate = c["sample_rate"] if c["condition"] == "rate" else 16000
        assert sr == want_rate and c["channels"] == (2 if c["condition"] == "stereo" or r["kind"] == "stereo_side" else 1)
        if c["condition"] == "rate":
            assert c["sample_rate"] in sg.RATES
        if c["condition"] == "level":
            lo, hi = sg.LEVEL_RANGE_DBFS
            assert lo <= c["target_level_dbfs"] <= hi
            assert synth.peak_dbfs(y) == pytest.approx(c["target_level_dbfs"], abs=0.05), r["id"]
        if c["condition"] == "noise":
            clean, _ = _read(it["stems"].with_name(it["stems"].name + ".clean.wav"))
            noise = y - clean  # what the file holds beyond the target (16-bit rounding included)
            measured = synth.snr_db(clean, noise, sr)
            assert measured == pytest.approx(c["snr_db"], abs=0.3), r["id"]
            assert c["snr_db"] >= kind.min_snr_db and c["snr_db"] in sg.SNRS_DB and c["noise"] in sg.NOISES
            stem_noise, _ = _read(it["stems"].with_name(it["stems"].name + ".noise.wav"))
            assert np.max(np.abs(noise - stem_noise)) < 1e-3
        else:
            assert c["snr_db"] is None and c["noise"] is None
        if c["condition"] == "stereo":
            left, right = (float(np.sqrt(np.mean(ch ** 2))) for ch in y)
            theta = (c["pan"] + 1) * np.pi / 4
            assert 20 * np.log10(right / left) == pytest.approx(20 * np.log10(np.tan(theta)), abs=0.2), r["id"]
        if c["condition"] == "distractor":
            dis = c["distractor"]
            assert dis["source"] in kind.distractor_sources, r["id"]
            assert not (kind.speech and dis["source"] == "speech"), "no extra talker in a speech item"
            assert dis["position"] == "after" or kind.distractor_before
            a = int(dis["onset_s"] * sr)
            seg = y[:, a: a + int(dis["duration_s"] * sr)]
            assert np.sqrt(np.mean(seg ** 2)) > 1e-3, r["id"]  # the distractor is really there
        else:
            assert c["distractor"] is None


def test_clean_splits_are_clean_with_dev_voices(syn):
    dev_voices = {v.spec for v in sg.VOICES if v.split == "dev"}
    held_voices = {v.spec for v in sg.VOICES if v.split == "heldout"}
    assert not dev_voices & held_voices and {"flite:slt", "flite:kal", "flite:awb"} == dev_voices
    for split in ("dev", "heldout_phrasing"):
        for r in syn["rows"][split]:
            c = r["construction"]
            assert (c["condition"], c["sample_rate"], c["snr_db"]) == ("clean", 16000, None)
            for v in c["voices"]:
                assert v["voice"] in dev_voices or (r["kind"] == "language" and "+" not in v["voice"]), r["id"]
    held_used = set()
    for r in syn["rows"]["heldout_condition"]:
        for v in r["construction"]["voices"]:
            if r["kind"] == "language":
                assert "+" in v["voice"], r["id"]  # a held-out variant of the language's voice
            else:
                assert v["voice"] in held_voices, r["id"]
                held_used.add(v["voice"])
            if v["voice"].startswith("espeak-ng:") and r["kind"] not in ("speech_speed", "speech_rate"):
                assert sg.ESPEAK_NORMAL_WPM[0] - 1 <= v["wpm"] <= sg.ESPEAK_NORMAL_WPM[1] + 1
    assert held_used, "held-out voices are used"


def _median_f0(y: np.ndarray, sr: int) -> float:
    import librosa

    f0 = librosa.yin(y.astype(np.float32), fmin=60, fmax=400, sr=sr, frame_length=1024)
    rms = librosa.feature.rms(y=y.astype(np.float32), frame_length=1024, hop_length=256)[0][: len(f0)]
    voiced = f0[: len(rms)][rms > 0.2 * rms.max()]
    return float(np.median(voiced))


def test_voice_sexes_are_what_they_are_declared(tmp_path):
    """Every voice of the pools: median F0 of a sentence below 150 Hz (male) or above 160 Hz (female)."""
    for v in sg.VOICES:
        p = synth.say("The meeting has been moved to Thursday afternoon.", tmp_path / "v.wav", v.spec)
        y, sr = _read(p)
        f0 = _median_f0(y[0], sr)
        assert (f0 < 150) if v.gender == "male" else (f0 > 160), (v.spec, f0)


# ---------------------------------------------------------------- the new kinds' truths


def _rows(syn, forced, kind):
    return ([r for rows in syn["rows"].values() for r in rows if r["kind"] == kind]
            + [f["row"] for f in forced if f["row"]["kind"] == kind])


def _wav(syn, forced, r) -> Path:
    for f in forced:
        if f["row"]["id"] == r["id"]:
            return f["wav"]
    return syn["root"] / r["split"] / r["audio_path"]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def test_list_missing_speaks_all_but_one_choice(syn, forced):
    for r in _rows(syn, forced, "list_missing"):
        c = r["construction"]
        spoken = _words(c["text"])
        for choice in r["choices"]:
            item = choice.removeprefix("The ").lower()
            assert (item in spoken) == (choice != r["answer"]), (r["id"], choice, c["text"])
        assert c["missing"] not in spoken and all(i in spoken for i in c["spoken_items"])


def test_day_shift_and_instruction_truths(syn, forced):
    days = list(sg.DAYS)
    for r in _rows(syn, forced, "day_shift"):
        c = r["construction"]
        assert c["spoken_day"] in c["text"] and sum(d in c["text"] for d in days) == 1
        step = 1 if c["asked"] == "after" else -1
        assert c["answer_day"] == days[(days.index(c["spoken_day"]) + step) % 7] and c["answer_day"] in r["answer"]
        assert any(c["spoken_day"] in ch for ch in r["choices"])  # the no-step answer is offered as a trap
    for r in _rows(syn, forced, "instruction_object"):
        c = r["construction"]
        spoken = _words(c["text"])
        for choice in r["choices"]:
            obj = choice.removeprefix("The ").lower()
            assert (obj in spoken) == (choice == r["answer"]), (r["id"], choice)


def test_louder_tone_measured(syn, forced):
    for r in _rows(syn, forced, "louder_tone"):
        c = r["construction"]
        y, sr = _read(_wav(syn, forced, r))
        x = y.mean(axis=0)
        rms = [20 * np.log10(np.sqrt(np.mean(x[int((a + 0.05) * sr): int((b - 0.05) * sr)] ** 2))) for a, b in c["spans_s"]]
        louder_first = rms[0] > rms[1]
        assert abs(rms[0] - rms[1]) == pytest.approx(c["diff_db"], abs=1.0), r["id"]
        assert louder_first == (c["first_peak_dbfs"] > c["second_peak_dbfs"]), r["id"]
        first_is_answer = louder_first == (c["asked"] == "louder")
        cs = sg.bank("louder_tone", r["split"])["choices"][c["phrasing"]["choices"]]
        assert r["answer"] == cs["first" if first_is_answer else "second"], r["id"]


def test_stereo_side_channel_energy(syn, forced):
    for r in _rows(syn, forced, "stereo_side"):
        c = r["construction"]
        y, _ = _read(_wav(syn, forced, r))
        left, right = (float(np.sqrt(np.mean(ch ** 2))) for ch in y)
        louder = "left" if left > right else "right"
        assert louder == c["side"] and abs(20 * np.log10(left / right)) > 8.0, r["id"]
        assert (c["pan"] < 0) == (c["side"] == "left") and 0.75 <= abs(c["pan"]) <= 1.0, r["id"]
        cs = sg.bank("stereo_side", r["split"])["choices"][c["phrasing"]["choices"]]
        assert r["answer"] == cs[c["side"]]


def test_beeps_before_voice_counted_on_the_audio(syn, forced):
    for r in _rows(syn, forced, "beeps_before_voice"):
        c = r["construction"]
        if c["condition"] not in ("clean", "voice"):
            continue
        y, sr = _read(_wav(syn, forced, r))
        x = y.mean(axis=0)
        frame = int(0.01 * sr)
        env = np.sqrt(np.mean(x[: len(x) // frame * frame].reshape(-1, frame) ** 2, axis=1))
        on = env > 0.05 * env.max()
        starts = [i * 0.01 for i in range(1, len(on)) if on[i] and not on[i - 1]] + ([0.0] if on[0] else [])
        before = [t for t in starts if t < c["speech_onset_s"] - 0.05]
        after = [t for t in starts if t > c["speech_end_s"] + 0.2]
        assert (len(before), len(after)) == (c["before"], c["after"]), (r["id"], starts)
        n = c["before"]
        assert re.search(rf"\b({n}|{sg.NUMBER_WORDS[n]})\b", r["answer"], re.IGNORECASE), (r["id"], r["answer"])
        assert any(str(c["total"]) in ch or sg.NUMBER_WORDS[c["total"]] in ch.lower() for ch in r["choices"])
        assert c["total"] == c["before"] + c["after"] != c["before"]


def test_first_speaker_sex_measured(syn, forced):
    for r in _rows(syn, forced, "first_speaker_gender"):
        c = r["construction"]
        if c["condition"] not in ("clean", "voice", "level"):
            continue
        y, sr = _read(_wav(syn, forced, r))
        f0 = _median_f0(y.mean(axis=0)[: int(1.2 * sr)], sr)  # the first turn lasts over 1.2 s
        assert (f0 > 160) == (c["first_gender"] == "female"), (r["id"], f0)
        assert c["genders"][0] == c["first_gender"] and set(c["genders"]) == {"male", "female"}


def test_speech_speed_measured(syn, tmp_path):
    for split in ("dev", "heldout_condition"):
        for r in syn["by_kind"][split]["speech_speed"]:
            c = r["construction"]
            if c["condition"] not in ("clean", "voice", "level"):
                continue
            wpm = sg.speech_wpm(syn["root"] / split / r["audio_path"], c["words"])
            lo, hi = sg.FAST_WPM if c["speed"] == "fast" else sg.SLOW_WPM
            assert lo - 10 <= wpm <= hi + 10 and wpm == pytest.approx(c["wpm"], abs=1.0), (r["id"], wpm)


# ---------------------------------------------------------------- the evaluation table


def _fake_split(rows_spec, split):
    rows, results = [], {}
    for i, (kind, ok, conf, cond, pred_extra) in enumerate(rows_spec):
        rid = f"syn-{split}-{kind}-s0-{i:04d}"
        choices = ["Alpha one", "Beta two", "Gamma three", "Delta four"]
        rows.append({"id": rid, "kind": kind, "choices": choices, "answer": "Alpha one", "split": split,
                     "construction": {"condition": cond}})
        pred = ("Alpha one" if ok else "Beta two") + pred_extra
        results[rid] = ItemResult(id=rid, status="answered", prediction=pred, correct=ok, confidence=conf).model_dump()
    return rows, results


def test_evaluation_numbers():
    dev_rows, dev_res = _fake_split([("counting", True, 0.9, "clean", ""), ("counting", False, 0.8, "clean", ""),
                                     ("day_shift", True, 0.5, "clean", ""), ("day_shift", True, None, "clean", "")], "dev")
    hp_rows, hp_res = _fake_split([("counting", True, 0.95, "clean", " (the answer)"),
                                   ("day_shift", False, 0.2, "clean", "")], "heldout_phrasing")
    hc_rows, hc_res = _fake_split([("counting", True, 0.75, "noise", ""), ("counting", False, 0.9, "rate", " gamma")],
                                  "heldout_condition")
    ev = synthetic.evaluation({"dev": dev_rows, "heldout_phrasing": hp_rows, "heldout_condition": hc_rows},
                              {"dev": dev_res, "heldout_phrasing": hp_res, "heldout_condition": hc_res})
    k = ev["kinds"]["counting"]
    assert k["group"] == "perception" and k["random"] == 25.0
    assert {s: (c["n"], c["accuracy"]) for s, c in k["splits"].items()} == {
        "dev": (2, 50.0), "heldout_phrasing": (1, 100.0), "heldout_condition": (2, 50.0)}
    assert ev["kinds"]["day_shift"]["group"] == "needs_step"
    assert ev["groups"]["needs_step"]["splits"]["dev"]["accuracy"] == 100.0
    assert ev["groups"]["overall"]["splits"]["dev"]["n"] == 4
    # MMAR string match: "Alpha one (the answer)" counts, exact match already counted it correct
    assert ev["splits"]["heldout_phrasing"]["mmar_accuracy"] == 50.0
    sel = ev["splits"]["dev"]["selective"]  # confident: 0.9 (right), 0.8 (wrong); rest: 0.5, None (both right)
    assert (sel["confident"], sel["confident_accuracy"], sel["coverage"], sel["rest_accuracy"]) == (2, 50.0, 50.0, 100.0)
    assert ev["conditions"] == {"noise": {"n": 1, "correct": 1, "accuracy": 100.0, "random": 25.0},
                                "rate": {"n": 1, "correct": 0, "accuracy": 0.0, "random": 25.0}}
    cal = {b["label"]: (b["n"], b["accuracy"]) for b in ev["calibration"]}
    assert cal["0.9-1.0"] == (3, 66.67) and cal["0.8-0.9"] == (1, 0.0) and cal["none"] == (1, 100.0)
    assert sum(n for n, _ in cal.values()) == 8


def _load_script(name: str):
    path = Path(__file__).resolve().parents[3] / "evals" / "synthetic" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"syn_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_evaluate_script_tabulates_existing_runs(tmp_path):
    evaluate = _load_script("evaluate")
    for split in sg.SPLITS:
        rows, res = _fake_split([("counting", True, 0.9, "clean" if split != "heldout_condition" else "level", ""),
                                 ("stereo_side", False, 0.4, "clean" if split != "heldout_condition" else "noise", "")],
                                split)
        (tmp_path / "sets" / split).mkdir(parents=True)
        (tmp_path / "sets" / split / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp_path / "run" / split).mkdir(parents=True)
        (tmp_path / "run" / split / "results.jsonl").write_text("".join(json.dumps(v) + "\n" for v in res.values()))
    out = tmp_path / "ev.json"
    res = CliRunner().invoke(evaluate.app, ["--root", str(tmp_path / "sets"), "--run-dir", str(tmp_path / "run"),
                                            "--no-run", "--json", str(out)])
    assert res.exit_code == 0, res.output
    text = res.output
    for needle in ("counting", "stereo_side", "[needs_step]", "OVERALL", "MMAR %", "coverage %", "Calibration",
                   "Held-out conditions", "level", "held-out phrasing"):
        assert needle in text, needle
    data = json.loads(out.read_text())
    assert data["groups"]["overall"]["splits"]["dev"]["accuracy"] == 50.0
    assert data["selective"]["confident"] == 3 and data["selective"]["confident_accuracy"] == 100.0


def test_evaluate_script_runs_each_split_as_the_synthetic_task(syn, loopback_llm, tmp_path):
    """evaluate.py drives `bench run --task synthetic` per split: results.jsonl scored by exact option match
    (the model here always picks the first option), MMAR-format predictions.jsonl, evaluation.json; then the
    table over the splits."""
    from audiomind.bench.runner import load_results
    from audiomind.bench.tasks import mmar

    evaluate = _load_script("evaluate")
    runs = tmp_path / "runs"
    kinds = ["counting", "day_shift"]
    res = CliRunner().invoke(evaluate.app, ["--root", str(syn["root"]), "--run-dir", str(runs), "--splits",
                                            "dev,heldout_phrasing", "--kinds", ",".join(kinds), "--planner",
                                            loopback_llm, "--frontend", loopback_llm, "--json", str(tmp_path / "ev.json")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    for needle in ("counting", "day_shift", "[needs_step]", "OVERALL", "held-out phrasing", "Calibration"):
        assert needle in res.output, needle
    for split in ("dev", "heldout_phrasing"):
        out = runs / split
        rows = [r for r in syn["rows"][split] if r["kind"] in kinds]
        results = load_results(out)
        assert list(results) and sorted(results) == sorted(r["id"] for r in rows)
        for r in rows:
            got = results[r["id"]]
            assert got["status"] == "answered" and got["benchmark"] == "synthetic", got
            assert got["correct"] == (r["choices"][got["choice_index"]] == r["answer"]), got
            assert got["metadata"]["split"] == split and got["metadata"]["kind"] == r["kind"]
        preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
        assert [p["id"] for p in preds] == [r["id"] for r in rows]  # set order, every input field kept
        assert all({k: p[k] for k in r} == r and p[mmar.PREDICTION_KEY] == results[r["id"]]["prediction"]
                   for p, r in zip(preds, rows))
        assert mmar.score_file(out / "predictions.jsonl").scored == len(rows)
        assert json.loads((out / "evaluation.json").read_text()) == synthetic.evaluation({split: rows}, {split: results})
        config = json.loads((out / "run.json").read_text())["config"]
        assert config["task"] == "synthetic" and config["kinds"] == "counting,day_shift"
    data = json.loads((tmp_path / "ev.json").read_text())
    assert set(data["splits"]) == {"dev", "heldout_phrasing"} and set(data["kinds"]) == set(kinds)
