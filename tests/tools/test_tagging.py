"""YAMNet tagging on audio whose content is known by construction (freedesktop phone ring, flite speech,
a fluidsynth piano phrase, silence followed by a ring). Scores from the quantized model come in coarse
steps, so the checks are on labels and on generous score floors, not on exact values."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.embedded import models
from audiomind.tools.tagging import PATCH_HOP_S, TaggingArgs, read_quantization, tagging

SR = synth.SR
SF2 = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
# the AudioSet "Alarm > Telephone" branch: Alarm is the parent class of Telephone in the ontology
PHONE_BRANCH = {"Alarm", "Telephone", "Telephone bell ringing", "Ringtone"}


def _phone_like(label: str) -> bool:
    return "Telephone" in label or "Ringtone" in label or "Ring" in label


def _write_midi(notes: list[tuple[int, float]], path: Path, program: int = 0, ppq: int = 480) -> Path:
    """A one-track MIDI file (120 BPM) playing `notes` [(pitch, beats)] one after another."""

    def vlq(n: int) -> bytes:
        out = [n & 0x7F]
        n >>= 7
        while n:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        return bytes(reversed(out))

    ev = bytearray(vlq(0) + bytes([0xFF, 0x51, 0x03]) + (500000).to_bytes(3, "big"))
    ev += vlq(0) + bytes([0xC0, program])
    for pitch, beats in notes:
        ev += vlq(0) + bytes([0x90, pitch, 100]) + vlq(int(beats * ppq)) + bytes([0x80, pitch, 0])
    ev += vlq(0) + bytes([0xFF, 0x2F, 0x00])
    header = (
        b"MThd"
        + (6).to_bytes(4, "big")
        + (0).to_bytes(2, "big")
        + (1).to_bytes(2, "big")
        + ppq.to_bytes(2, "big")
    )
    path.write_bytes(header + b"MTrk" + len(ev).to_bytes(4, "big") + bytes(ev))
    return path


@pytest.fixture(scope="session")
def phone_clip(audio_dir: Path) -> Path:
    return synth.sound_file("phone-incoming-call", audio_dir / "phone.wav")


@pytest.fixture(scope="session")
def late_phone_clip(audio_dir: Path) -> Path:
    """2.0 s of silence, then the phone ring twice (about 2.9 s): the ring starts at 2.0 s."""
    ring = aio.load(synth.sound_file("phone-incoming-call", audio_dir / "phone2.wav", repeat=2), sr=SR)
    return aio.write_wav(audio_dir / "late_phone.wav", np.concatenate([synth.silence(2.0), ring]), SR)


@pytest.fixture(scope="session")
def piano_clip(audio_dir: Path) -> Path:
    """C4 E4 G4 C5 G4 E4 C4 on General MIDI piano (fluidsynth), normalised to peak 0.5 and trimmed."""
    import librosa

    if not shutil.which("fluidsynth") or not SF2.exists():
        pytest.skip("fluidsynth or FluidR3_GM.sf2 missing (scripts/install.sh --dev)")
    mid = _write_midi(
        [(60, 1), (64, 1), (67, 1), (72, 1), (67, 1), (64, 1), (60, 2)], audio_dir / "piano.mid"
    )
    raw = audio_dir / "piano_raw.wav"
    subprocess.run(
        ["fluidsynth", "-ni", "-q", "-F", str(raw), "-r", str(SR), str(SF2), str(mid)],
        check=True,
        capture_output=True,
    )
    y = aio.load(raw, sr=SR)
    y = 0.5 * y / max(float(np.abs(y).max()), 1e-9)  # fluidsynth renders at about -30 dBFS
    y, _ = librosa.effects.trim(y, top_db=50)
    return aio.write_wav(audio_dir / "piano.wav", y, SR)


def test_quantization_params_are_read_from_the_graph():
    q = read_quantization(models.yamnet_paths()[0])
    assert q["audio_scale"] > 0 and q["class_scores_scale"] > 0
    assert 0 <= q["audio_zero_point"] <= 255 and 0 <= q["class_scores_zero_point"] <= 255


def test_phone_ring_is_tagged_as_telephone(phone_clip, tool_runner):
    r = tool_runner(tagging, {"top_k": 5}, phone_clip)
    tags = r.output["tags"]
    # top tag is in the Alarm > Telephone branch; the quantized model ties Alarm with Telephone here
    assert tags[0]["label"] in PHONE_BRANCH, tags
    phone = [t for t in tags[:3] if _phone_like(t["label"])]
    assert phone and phone[0]["max"] >= 0.7, tags
    assert "Telephone" in r.claims[0].text and "YAMNet" in r.claims[0].text


def test_speech_is_tagged_as_speech(fox_clip, tool_runner):
    r = tool_runner(tagging, {}, fox_clip.path)
    tags = r.output["tags"]
    assert tags[0]["label"] == "Speech" and tags[0]["max"] >= 0.9, tags
    speech_events = [e for e in r.output["events"] if e["label"] == "Speech"]
    assert speech_events, r.output["events"]
    # the clip has 1.0 s of silence either side; events are accurate to about one patch hop
    assert abs(speech_events[0]["start_s"] - fox_clip.start_s) <= 1.0


def test_piano_is_tagged_as_music(piano_clip, tool_runner):
    r = tool_runner(tagging, {"top_k": 6, "min_score": 0.0}, piano_clip)
    labels = [t["label"] for t in r.output["tags"]]
    assert 132 <= r.output["tags"][0]["index"] <= 276, labels  # AudioSet Music(132) .. Scary music(276)
    assert r.output["tags"][0]["score"] >= 0.5
    assert {"Piano", "Keyboard (musical)", "Electric piano"} & set(labels), labels


def test_event_timeline_places_the_ring_after_the_silence(late_phone_clip, tool_runner):
    r = tool_runner(tagging, {}, late_phone_clip)
    events = r.output["events"]
    phone = [e for e in events if _phone_like(e["label"])]
    assert phone, events
    # the ring starts at 2.0 s; patches hop 0.48 s, so allow 1 s
    assert abs(min(e["start_s"] for e in phone) - 2.0) <= 1.0, phone
    assert max(e["end_s"] for e in phone) >= r.output["analysed_s"][1] - PATCH_HOP_S
    silence = [e for e in events if e["label"] == "Silence"]
    assert silence and silence[0]["start_s"] == 0.0 and abs(silence[0]["end_s"] - 2.0) <= 1.0
    assert any(c.text.startswith("Sound event (YAMNet): Telephone") for c in r.claims)


def test_window_arguments_restrict_the_analysis(late_phone_clip, tool_runner):
    r = tool_runner(tagging, {"end_s": 1.9}, late_phone_clip)
    assert r.output["tags"][0]["label"] == "Silence"
    assert not [t for t in r.output["tags"] if _phone_like(t["label"])]
    r2 = tool_runner(tagging, {"start_s": 2.0}, late_phone_clip)
    assert r2.output["analysed_s"][0] == 2.0
    assert r2.output["tags"][0]["label"] in PHONE_BRANCH
    assert all(e["start_s"] >= 2.0 for e in r2.output["events"])


def test_very_short_clip_is_padded_not_rejected(tool_runner, audio_dir):
    """A 0.3 s beep is shorter than one 0.96 s patch: it is padded with silence and still analysed."""
    p = aio.write_wav(audio_dir / "short_beep.wav", synth.tone(1000.0, 0.3), SR)
    r = tool_runner(tagging, {"min_score": 0.0}, p)
    assert r.output["n_patches"] == 1 and r.output["tags"]


def test_args_are_bounded():
    with pytest.raises(ValueError):
        TaggingArgs(top_k=0)
    with pytest.raises(ValueError):
        TaggingArgs(min_score=1.5)
    with pytest.raises(ValueError):
        TaggingArgs(bogus=1)


def test_real_time_factor_on_10s(tool_runner, audio_dir, fox_clip):
    """Loose bound for a busy 2-core CI box; measured about 0.01 here."""
    y = aio.load(fox_clip.path, sr=SR)
    p = aio.write_wav(audio_dir / "ten_s.wav", np.tile(y, int(np.ceil(10 * SR / len(y))))[: 10 * SR], SR)
    tool_runner(tagging, {}, p)  # warm: model load and librosa's first-call compilation
    t = time.perf_counter()
    tool_runner(tagging, {}, p)
    assert (time.perf_counter() - t) / 10.0 < 0.5
