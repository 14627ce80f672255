"""The held-out judge sets as data (evals/judges/sets/vN/set.yaml + PROVENANCE.md, built by
evals/judges/build_sets.py): every data file validates against the scene-list model, its audio expressions
call only the builder's operations, and a few items of set v1 rebuild byte for byte.

The recorded sha256 values are those of the files evals/judges/heldout.py (the script the data files replaced)
wrote for set v1 with this environment's espeak-ng, flite, fluidsynth and FluidR3 soundfont; another version of
one of those tools renders other samples, and the rebuild test then says which file differs."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_sets", ROOT / "evals" / "judges" / "build_sets.py")
bs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("build_sets", bs)
_spec.loader.exec_module(bs)

SETS = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15"]
# set v1, as heldout.py --set v1 wrote them (see the module docstring)
V1_SHA256 = {
    "rubric/museum_alarm.wav": "4c20c98bbaf9e1f1fbe464223926251c2e48edec39dc1abfa014eebf024ca85d",
    "rubric/museum_alarm_missing.wav": "22eae6af17fc3306ee77a2e04748639a5196a19536b64e1e6d97cd5cf63496d0",
    "rubric/organ_gap.wav": "f508bd6ac5938c44bb6f7235d5247d2d4e36d70e6157a6b41cadaa7f166a2690",
    "rubric/organ_gap_missing.wav": "fdc2f6b27b1865d36ccdff5a5ce80220c5c5741e17964612527c6a1a75f5b4d7",
    "edit/add_alarm_after_original.wav": "c0c4e5bac62490849f3e72c00114b439c60c7704c7e5112140649000ca1b6eaf",
    "edit/add_alarm_after_noop.wav": "c0c4e5bac62490849f3e72c00114b439c60c7704c7e5112140649000ca1b6eaf",
    "edit/add_alarm_after_real.wav": "8f4da9a675a0a7716619d39240212e20877699b0605071e4a54d23cb45e16b3d",
    "edit/add_alarm_after_wrong_place.wav": "b0f408f71bea9adcc868179b825d9030f4d14213858f1b82be8e92c0788ed95f",
    "edit/add_alarm_after_wrong_sound.wav": "854c7e311909d977e6b8e14d36eee62db9fcda2559f9a4667ef1b5c3bb87d910",
    "edit/del_claps_inplace_original.wav": "02cf5f27003bbdaef9fec49eca7dee87fa2ab525d75475acb0fe22afd4133a9f",
    "edit/del_claps_inplace_noop.wav": "02cf5f27003bbdaef9fec49eca7dee87fa2ab525d75475acb0fe22afd4133a9f",
    "edit/del_claps_inplace_real.wav": "d09101164e1c9364b96f302aff222a4bebfb692046a60a1d969d623fff5198ca",
    "edit/del_claps_inplace_wrong_target.wav": "364a9f0a554f7e58cf9bbfd8bdac535e0b0eac81fe1e2a128fdcaa200e19d475",
}


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_every_set_has_a_data_file_and_a_provenance_note():
    assert bs.set_names() == SETS
    for name in SETS:
        assert (bs.SETS / name / "PROVENANCE.md").read_text().startswith(f"# Held-out judge set {name}: provenance")


@pytest.mark.parametrize("name", SETS)
def test_data_file_validates_and_names_only_what_it_defines(name):
    spec = bs.load_set(name)
    assert spec.rubric and spec.edit
    text = json.dumps(spec.model_dump())
    ids = [s.id for s in spec.rubric] + [b.id for b in spec.edit]
    assert len(ids) == len(set(ids)), "scene and edit-base ids are unique"
    for key in spec.checks.voice_band:
        assert key in spec.voices
    # every voice(key, ...) and sound(name) an expression calls is in the set's tables, and every table entry is used
    import re

    if spec.tag is not None:  # say(key, ...), gm(name), rec(name) / placed(label, name, ...): all defined, all used
        assert set(re.findall(r"say\('([^']+)'", text)) == set(spec.voices)
        assert set(re.findall(r"gm\('([^']+)'\)", text)) == set(spec.sounds)
        recs = set(re.findall(r"rec\('([^']+)'\)", text)) | set(re.findall(r"placed\('[^']*', '([^']+)'", text))
        assert recs == set(spec.recordings)
        assert all(v.language and v.test for v in spec.voices.values())
        return
    used_voices = set(re.findall(r"voice\('([^']+)'", text))
    used_sounds = set(re.findall(r"sound\('([^']+)'\)", text))
    assert used_voices <= set(spec.voices) and used_sounds == set(spec.sounds)
    assert set(spec.voices) == used_voices | set(spec.checks.voice_band)


def test_the_model_rejects_what_the_builder_would_not_run():
    raw = bs.load_set("v1").model_dump()
    scene = raw["rubric"][0]
    for bad in ("__import__('os').system('true')", "seq([museum]).copy()", "open('x')", "[x for x in museum]",
                "seq([museum]"):
        with pytest.raises(ValidationError):
            bs.SetSpec.model_validate({**raw, "rubric": [{**scene, "audio": bad}]})
    with pytest.raises(ValidationError):  # a negative kind the rubric runner does not know
        bs.SetSpec.model_validate({**raw, "rubric": [{**scene, "negatives": {"louder": "x"}}]})
    with pytest.raises(ValidationError):  # a sound with two recipes
        bs.SetSpec.model_validate({**raw, "sounds": {"alarm": {"theme": {"theme": "bell"},
                                                               "melody": {"program": 0, "notes": ["C4"],
                                                                          "note_s": 0.2}}}})
    with pytest.raises(ValidationError):  # an unknown field (a typo) is not ignored
        bs.SetSpec.model_validate({**raw, "rubric": [{**scene, "positiv": "x"}]})
    for bad in ({"file": "/x/opensfx.cat", "entry": 3}, {"file": "/x/a.ogg", "entry": 3, "title": "t"},
                {"file": "/x/a.ogg", "member": "b.wav"}):  # an archived recording names its archive and entry
        with pytest.raises(ValidationError):
            bs.Recording.model_validate(bad)


@pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("flite") and shutil.which("fluidsynth")),
                    reason="needs espeak-ng, flite and fluidsynth (Debian packages)")
def test_a_few_items_of_v1_rebuild_byte_for_byte(tmp_path):
    full = bs.load_set("v1")
    keep_r, keep_e = {"museum_alarm", "organ_gap"}, {"add_alarm_after", "del_claps_inplace"}
    spec = full.model_copy(update={"rubric": [s for s in full.rubric if s.id in keep_r],
                                   "edit": [b for b in full.edit if b.id in keep_e]})
    summary = bs.build_spec(spec, tmp_path)
    assert summary["rubric_items"] == 2 + 3 + 1 + 2 + 1  # positives, negatives, missing
    got = {rel: _sha(tmp_path / rel) for rel in V1_SHA256}
    assert {rel for rel, h in got.items() if h != V1_SHA256[rel]} == set()
    rows = [json.loads(x) for x in (tmp_path / "edit" / "items.jsonl").read_text().splitlines()]
    assert [r["variant"] for r in rows if r["base"] == "del_claps_inplace"] == ["real", "wrong_target", "noop"]
    assert all(Path(r["edited"]).exists() for r in rows)


# set v7, as heldout_v7.py wrote them (fff73b1) with this environment's festival, espeak-ng, fluidsynth and
# tuxpaint-stamps-default
V7_SHA256 = {
    "rubric/dog_three.wav": "9b9124ca589408f9b18ead4cbef5cb939601a4f6dcd569a08a5351af85dc4f33",
    "rubric/horse_sax.wav": "9367d350a1a5d756e3f17d459f49cbcf35855e9ce61aa216417be46adb7986d0",
    "rubric/horse_sax_missing.wav": "cec8d1759a20751c7766b297c2bcab7a5ec41c343a469b8c430a294310a85287",
    "edit/del_saw_inplace_real.wav": "46c8c88ad9b989003614e106e0150772b52905f6e10158bc2aba93733e399ddd",
    "edit/del_saw_inplace_wrong_target.wav": "882130175129618e057fc2163a77ceb25a625291bbadfc413ccefc6f0c19ca7b",
    "edit/del_saw_inplace_partial.wav": "249e386729db4e3d8d87e670f89314d519527744cd0a863026d1962d0aa6a181",
}
_V7_NEEDS = ("text2wave", "fluidsynth")


def _v7_subset(keep_r: set[str], keep_e: set[str]) -> bs.SetSpec:
    full = bs.load_set("v7")
    return full.model_copy(update={"voices": {k: full.voices[k] for k in ("ked", "machac")},
                                   "rubric": [s for s in full.rubric if s.id in keep_r],
                                   "edit": [b for b in full.edit if b.id in keep_e]})


@pytest.mark.skipif(not (all(shutil.which(t) for t in _V7_NEEDS) and Path("/usr/share/tuxpaint/stamps").is_dir()),
                    reason="needs festival, fluidsynth and tuxpaint-stamps-default (Debian packages)")
def test_a_few_items_of_v7_rebuild_byte_for_byte_with_their_checks(tmp_path):
    # the first edit base binds the sounds the later ones use (as the script's locals did)
    spec = _v7_subset({"dog_three", "horse_sax"}, {"add_rooster_first", "del_saw_inplace"})
    summary = bs.build_spec(spec, tmp_path)
    got = {rel: _sha(tmp_path / rel) for rel in V7_SHA256}
    assert {rel for rel, h in got.items() if h != V7_SHA256[rel]} == set()
    assert summary["counts_checked"] == ["crow caws x2: 2", "dog barks x2: 2", "dog barks x3: 3", "pig grunts x2: 2"]
    assert summary["voices_checked"]["machac"]["fits_band"] and summary["lines_checked"] == 2


@pytest.mark.skipif(not (all(shutil.which(t) for t in _V7_NEEDS) and Path("/usr/share/tuxpaint/stamps").is_dir()),
                    reason="needs festival, fluidsynth and tuxpaint-stamps-default (Debian packages)")
def test_a_stated_count_the_audio_does_not_hold_stops_the_build(tmp_path):
    spec = _v7_subset({"dog_three"}, set())
    scene = spec.rubric[0]
    wrong = scene.model_copy(update={"audio": scene.audio.replace("], 0.35), 3)", "], 0.35), 4)")})
    assert wrong.audio != scene.audio
    with pytest.raises(SystemExit, match=r"dog barks x3', 4, 3"):
        bs.build_spec(spec.model_copy(update={"rubric": [wrong]}), tmp_path)
