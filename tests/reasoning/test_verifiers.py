"""Verifiers and the answer step on constructed facts: every choice scored against every fact, contradicted
choices never chosen, honest confidence. Facts are built directly (the reader layer is tested end to end in
test_issue_examples.py and the synthetic benchmark); question analysis uses the real MiniLM model."""

from __future__ import annotations

import pytest

from audiomind.reasoning.answer import combine
from audiomind.reasoning.facts import (
    ChannelsFact, EventsFact, Facts, PitchFact, SpeechFact, Span, TagsFact, TranscriptFact, Word, syllables,
)
from audiomind.reasoning.question import analyse, time_span
from audiomind.reasoning.verifiers import choice_seconds, counted_noun, run_verifiers
from audiomind.state import CONFIDENT_AT


def _decide(facts: Facts, question: str, choices: list[str]):
    a = analyse(question, choices, [])
    return combine(run_verifiers(facts, a), a, facts), a


def _speech(text: str, start: float = 0.5, per_word: float = 0.3) -> tuple[TranscriptFact, SpeechFact]:
    ws = [Word(text=w, start_s=start + i * per_word, end_s=start + (i + 1) * per_word - 0.05)
          for i, w in enumerate(text.replace(".", "").split())]
    end = ws[-1].end_s
    return (TranscriptFact(text=text, words=ws, evidence_ids=["e1"], source="asr"),
            SpeechFact(segments=[Span(start_s=start, end_s=end, label="speech")], speech_s=end - start,
                       evidence_ids=["e2"], source="vad"))


def test_a_choice_heard_verbatim_wins_whatever_the_wording():
    t, s = _speech("Could you pick up some oranges on your way home tonight")
    d, _ = _decide(Facts(duration_s=5, transcript=t, speech=s), "Which fruit came up?",
                   ["apples", "oranges", "pears", "bananas"])
    assert d.choice_index == 1 and d.confidence >= CONFIDENT_AT, d
    assert "e1" in d.cited_evidence_ids


def test_close_spellings_of_days_are_not_the_same_day():
    t, s = _speech("The meeting has been moved to Thursday afternoon")
    d, _ = _decide(Facts(duration_s=4, transcript=t, speech=s), "When is the gathering now?",
                   ["Tuesday", "Thursday", "Sunday", "Monday"])
    assert d.choice_index == 1 and d.confidence >= CONFIDENT_AT


def test_not_mentioned_flips_the_transcript_roles():
    t, s = _speech("For the trip pack a tent, a torch and a kettle")
    d, _ = _decide(Facts(duration_s=4, transcript=t, speech=s), "Which item was never mentioned?",
                   ["tent", "torch", "kettle", "compass"])
    assert d.choice_index == 3, d


def test_day_arithmetic_is_a_step_on_the_spoken_day():
    t, s = _speech("Your appointment is on Tuesday")
    d, _ = _decide(Facts(duration_s=3, transcript=t, speech=s), "What is the day after the one mentioned?",
                   ["Monday", "Tuesday", "Wednesday", "Friday"])
    assert d.choice_index == 2 and d.method == "day_offset", d


def test_negated_choices_are_contradicted_by_measured_speech():
    t, s = _speech("The committee will review every application before the end of the month", per_word=0.12)
    facts = Facts(duration_s=3, transcript=t, speech=s, tags=TagsFact(labels=[("Speech", 0.95)], evidence_ids=["e3"]))
    facts.speech_rate = None
    from audiomind.reasoning.facts import _speech_rate
    facts.speech_rate = _speech_rate(facts)
    d, _ = _decide(facts, "Would you say the pace of talking is high or low?",
                   ["Fast", "Slow", "There is no speech", "Whispered"])
    assert d.choice_index == 0, d


@pytest.mark.parametrize("question,noun", [
    ('How many times does the speaker say the word "music"?', "words"),
    ("How many different voices can be heard?", "speakers"),
    ("How many beeps are there?", "events"),
    ("Count the knocks.", "events"),
    ("How often is 'river' repeated?", "words"),
    ("How many notes are played?", "notes"),
])
def test_what_is_counted_comes_from_the_counted_noun(question, noun):
    assert counted_noun(question) == noun


def test_counts_contradict_other_numbers():
    ev = EventsFact(events=[Span(start_s=i, end_s=i + 0.2) for i in range(5)], count=5, evidence_ids=["e4"])
    d, _ = _decide(Facts(duration_s=6, events=ev), "What is the total number of pips?", ["three", "four", "five", "six"])
    assert d.choice_index == 2 and d.confidence >= CONFIDENT_AT


def test_pitch_of_two_notes_gives_the_comparison():
    p = PitchFact(median_hz=300, notes=[Span(start_s=0.5, end_s=1.0, pitch_hz=440.0),
                                        Span(start_s=1.5, end_s=2.0, pitch_hz=330.0)], evidence_ids=["e5"])
    d, _ = _decide(Facts(duration_s=2.5, pitch=p), "Is the later tone above or below the earlier one?",
                   ["Above", "Below", "The same", "There is only one tone"])
    assert d.choice_index == 1, d


def test_stereo_side_from_channel_levels():
    ch = ChannelsFact(channels=2, levels_db=[-30.0, -18.0], evidence_ids=["e6"])
    d, _ = _decide(Facts(duration_s=2, channels=ch), "Where does the sound come from?",
                   ["The left", "The right", "Both sides equally", "Behind the listener"])
    assert d.choice_index == 1 and d.confidence >= CONFIDENT_AT


def test_no_supporting_evidence_is_an_admitted_guess():
    tags = TagsFact(labels=[("Silence", 0.9)], evidence_ids=["e7"])
    d, _ = _decide(Facts(duration_s=2, tags=tags), "What emotion does the singer convey?",
                   ["Joy", "Anger", "Grief", "Boredom"])
    assert d.confidence < CONFIDENT_AT and d.confidence_reason


def test_a_step_the_policy_cannot_take_is_never_confident():
    t, s = _speech("I bought three apples and then four more")
    d, a = _decide(Facts(duration_s=3, transcript=t, speech=s), "How many apples are there in total?",
                   ["three", "four", "seven", "twelve"])
    assert a.unsupported_step and d.confidence <= 0.4, d


def test_time_focus_only_from_explicit_spans():
    assert time_span("How does the second note compare with the first?") is None
    assert time_span("What is the first sound you hear?") is None
    span = time_span("What happens in the first 3 seconds?")
    assert span is not None and span.end_s == 3.0
    assert time_span("What is heard at the end of the recording?").where == "end"


def test_seconds_and_syllables_readers():
    assert choice_seconds("about 2 to 3 seconds") == 2.5
    assert choice_seconds("00:06") == 6.0
    assert choice_seconds("1500 ms") == 1.5
    assert syllables("application") >= 4 and syllables("the") == 1
