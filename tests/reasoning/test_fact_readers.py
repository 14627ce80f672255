"""Fact readers: one registered reader per tool, run by `facts_from` in registration order, on the calls of
real tools over a synthesised clip (three 0.2 s beeps at 0.5, 1.2 and 1.9 s, 3.1 s, 16 kHz mono)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiomind import synth
from audiomind.artifacts import ingest_original
from audiomind.reasoning.facts import FACT_READERS, OnArtifact, Record, ValueFact, facts_from
from audiomind.registry import Registries
from audiomind.state import Artifact, ToolCallRequest
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry

# the order facts_from has always read them in: Facts.values keeps it (duration, language, tempo, key, ...)
BUILTIN = ["probe", "asr", "vad", "count_events", "tagging", "loudness", "pitch", "notes", "speaker_count", "tempo",
           "key", "signal_stats", "speech_quality", "descriptors"]


@pytest.fixture(scope="module")
def beeps_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Record, Artifact]:
    root: Path = tmp_path_factory.mktemp("fact_readers")
    a0 = ingest_original(synth.beeps(3, root / "beeps.wav"))
    calls = [("probe", {}), ("signal_stats", {}), ("count_events", {}), ("loudness", {})]
    res = ToolExecutor(ToolRegistry.load(), root / "work").run(
        [ToolCallRequest(tool=t, arguments=a) for t, a in calls], [a0], step=1)
    assert [c.status.value for c in res.tool_calls] == ["ok"] * len(calls), [c.error for c in res.tool_calls]
    return Record(tool_calls=res.tool_calls, evidence=res.evidence), a0


def test_one_reader_per_tool_in_the_order_facts_are_read():
    assert [n for n in FACT_READERS if FACT_READERS.origin(n) == "audiomind"] == BUILTIN
    shipped = {m.name for m in ToolRegistry.load().all()}
    assert set(BUILTIN) - shipped == {"descriptors"}  # every other reader is named after the tool it reads
    assert Registries().group("fact_readers") is FACT_READERS  # what a plugin's register(registries) reaches


def test_facts_from_real_tool_calls(beeps_run):
    record, a0 = beeps_run
    facts = facts_from(record, a0)
    assert list(facts.values) == ["duration"]
    assert facts.values["duration"].value == pytest.approx(3.1, abs=0.05)
    assert facts.events is not None and facts.events.count == 3
    assert [e.start_s for e in facts.events.events] == pytest.approx([0.5, 1.2, 1.9], abs=0.05)
    assert facts.signal is not None and facts.loudness is not None
    assert facts.channels is not None and facts.channels.balance_db is None  # mono: one channel level
    assert facts.transcript is None and facts.pitch is None and not facts.failed
    events_call = next(c for c in record.tool_calls if c.tool == "count_events")
    assert facts.events.evidence_ids == [e.id for e in record.evidence if e.source_id == events_call.id] != []


def test_a_new_reader_is_one_registration(beeps_run):
    record, a0 = beeps_run

    def crest(on: OnArtifact, facts) -> None:
        from audiomind.tools.metadata import SignalStatsOutput

        st, ids = on.read("signal_stats", SignalStatsOutput)
        if st is not None:
            facts.values["crest_db"] = ValueFact(name="crest_db", value=round(st.peak_dbfs - st.rms_dbfs, 2),
                                                 evidence_ids=ids, source="signal_stats")

    FACT_READERS.register("test_crest", crest)
    try:
        facts = facts_from(record, a0)
    finally:
        FACT_READERS.unregister("test_crest")
    assert list(facts.values) == ["duration", "crest_db"]  # after the built-in readers
    assert facts.signal is not None
    # two roundings of the same two levels: within 0.01 dB
    assert facts.values["crest_db"].value == pytest.approx(facts.signal.peak_dbfs - facts.signal.rms_dbfs, abs=0.01)
    assert facts.values["crest_db"].evidence_ids == facts.signal.evidence_ids != []
    assert "crest_db" not in facts_from(record, a0).values
