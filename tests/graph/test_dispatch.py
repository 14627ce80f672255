"""One compiled graph per agent (audiomind.graph.dispatch): every run of an AudioMind goes through the same
compiled graph, concurrent runs on different threads each reach their own Runtime, and a dispatched node
called outside a run says so."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from audiomind.graph.dispatch import RunDispatch
from audiomind.graph.nodes import Limits

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_node_outside_a_run_is_refused():
    node = RunDispatch(Limits()).ingest
    with pytest.raises(RuntimeError, match="outside a run"):
        node(None)
    with pytest.raises(AttributeError):
        RunDispatch(Limits()).not_a_node  # noqa: B018


def test_concurrent_runs_share_the_graph_and_keep_their_own_runtime(tmp_path):
    from audiomind import AudioMind

    agent = AudioMind(trace_dir=str(tmp_path), use_cache=False)
    items = [("beeps.wav", "How many beeps are there in the recording?", ["3", "4", "5", "6"], "5"),
             ("phone_ring.wav", "What is the source of the sound in this clip?",
              ["A dog barking", "A telephone ringing", "A car engine", "Rain falling"], "A telephone ringing")]
    results: dict[str, object] = {}

    def run(name: str, question: str, choices: list[str]) -> None:
        results[name] = agent.ask(EXAMPLES / name, question, choices)

    threads = [threading.Thread(target=run, args=item[:3]) for item in items]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    graph = agent.compiled_graph()
    assert agent.compiled_graph() is graph
    for name, question, _, expected in items:
        st = results[name].state
        assert st.question.text == question and Path(st.question.audio_path).name == name
        assert results[name].answer == expected
        # every artifact and tool call of the run belongs to the run's own artifact folder / audio
        assert st.original.path.endswith(name)
        assert [t.node for t in st.timings][:3] == ["ingest", "perception_prompt", "perceive"]
