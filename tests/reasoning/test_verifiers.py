"""Verifiers and the answer step on constructed facts: every choice scored against every fact, contradicted
choices never chosen, honest confidence. Facts are built directly (the reader layer is tested end to end in
test_issue_examples.py and the synthetic benchmark); question analysis uses the real MiniLM model."""

from __future__ import annotations

import pytest

from audiomind.language.analysis import analyse, time_span
from audiomind.reasoning.answer import combine
from audiomind.reasoning.facts import (
    ChannelsFact,
    EventsFact,
    Facts,
    LoudnessFact,
    PitchFact,
    Span,
    SpeechFact,
    TagsFact,
    TranscriptFact,
    Word,
    syllables,
)
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


def _two_readings(first_per_word: float, second_per_word: float) -> Facts:
    text = "The garden gate was left open again"
    n = len(text.split())
    ws, segs, t = [], [], 0.3
    for per_word in (first_per_word, second_per_word):
        start = t
        for w in text.split():
            ws.append(Word(text=w, start_s=t, end_s=t + per_word - 0.02))
            t += per_word
        segs.append(Span(start_s=start, end_s=t))
        t += 0.8
    tr = TranscriptFact(text=f"{text}. {text}.", words=ws, evidence_ids=["e1"])
    sp = SpeechFact(segments=segs, speech_s=sum(s.length_s for s in segs), evidence_ids=["e2"])
    assert len(ws) == 2 * n
    return Facts(duration_s=t, transcript=tr, speech=sp)


@pytest.mark.parametrize("question,slow_first", [
    ("Of the two takes, which one is spoken less rapidly?", True),
    ("Of the two takes, which one is spoken less rapidly?", False),
    ("Which delivery is less leisurely, the earlier or the later one?", False),
])
def test_less_with_a_positive_adjective_is_the_opposite_comparative(question, slow_first):
    """'less rapidly' asks for the slower one, 'less leisurely' for the faster one."""
    slow, fast = 0.5, 0.25
    f = _two_readings(slow, fast) if slow_first else _two_readings(fast, slow)
    choices = ["The earlier take", "The later take", "Neither, they match"]
    d, _ = _decide(f, question, choices)
    asks_slower = "rapidly" in question
    want = 0 if asks_slower == slow_first else 1
    assert d.method == "compare_rate" and d.choice_index == want, d


def test_a_time_question_close_to_two_readings_takes_the_one_a_choice_matches():
    """A sustained sound from 2.0 to 9.0 s. The question is near 'when does it start' in meaning; no choice
    is 2 s, one is the 7 s it lasts: that reading decides, below full confidence, and says so."""
    ev = EventsFact(events=[Span(start_s=2.0, end_s=9.0, level_db=-12.0)], count=1, evidence_ids=["e4"])
    d, _ = _decide(Facts(duration_s=10, events=ev), "Roughly what span of time does the drone cover?",
                   ["4 seconds", "7 seconds", "11 seconds", "15 seconds"])
    assert d.choice_index == 1 and d.method == "time_duration", d
    assert d.confidence < 0.8


def test_counts_with_times_are_not_seconds():
    t, s = _speech("lantern lantern and a lantern once more")
    d, _ = _decide(Facts(duration_s=4.0, transcript=t, speech=s), "How often do you hear 'lantern'?",
                   ["4 times", "once", "3 times", "twice"])
    assert not d.method.startswith("time_"), d


def test_the_first_voice_is_where_words_are_heard_not_a_tone_before_it():
    """A 300 Hz organ note from 0 to 2.5 s, then a low voice (120 Hz) speaking from 3 s: voice activity and
    the speaker turns take the organ in as the first 'voice'; the words say where the voice is."""
    contour = [(i * 0.02, 300.0) for i in range(125)] + [(3.0 + i * 0.02, 120.0) for i in range(100)]
    p = PitchFact(median_hz=200, contour=contour, evidence_ids=["e5"])
    sp = SpeechFact(segments=[Span(start_s=0.0, end_s=2.5), Span(start_s=3.0, end_s=5.0)], speech_s=4.5,
                    evidence_ids=["e2"])
    ws = [Word(text=w, start_s=3.0 + 0.4 * i, end_s=3.35 + 0.4 * i) for i, w in enumerate(["the", "ferry", "leaves", "at", "noon"])]
    tr = TranscriptFact(text="the ferry leaves at noon", words=ws, evidence_ids=["e1"])
    d, _ = _decide(Facts(duration_s=5.0, pitch=p, speech=sp, transcript=tr), "Whose voice opens the clip?",
                   ["A female voice", "A male voice", "Nobody talks"])
    assert d.choice_index == 1 and d.method == "voice_gender", d


def test_one_shared_word_is_weak_transcript_evidence_against_a_measurement():
    """The transcript shares 'time' with one choice; the pitch says a woman speaks first."""
    t, s = _speech("Please be on time for the evening train")
    contour = [(0.5 + i * 0.02, 215.0) for i in range(130)]
    p = PitchFact(median_hz=215, contour=contour, evidence_ids=["e5"])
    d, _ = _decide(Facts(duration_s=3.5, transcript=t, speech=s, pitch=p), "Which voice starts talking?",
                   ["A woman", "Both at one time", "A man"])
    assert d.choice_index == 0 and d.method == "voice_gender", d


def test_a_number_said_is_content_unless_the_question_counts():
    t, s = _speech("Checkout is at eleven tomorrow morning")
    d, _ = _decide(Facts(duration_s=3.0, transcript=t, speech=s), "Which hour was given for checkout?",
                   ["ten", "eleven", "twelve", "one"])
    assert d.choice_index == 1 and d.method == "transcript_match" and d.confidence >= CONFIDENT_AT, d
    # 'three' is said, but two knocks are heard: counting reads the events, not the words
    t, s = _speech("Knock three times", start=2.0)
    ev = EventsFact(events=[Span(start_s=0.2, end_s=0.3), Span(start_s=0.8, end_s=0.9)], count=2, evidence_ids=["e4"])
    d, _ = _decide(Facts(duration_s=3.5, transcript=t, speech=s, events=ev), "How many knocks come before the voice?",
                   ["one", "two", "three", "four"])
    assert d.choice_index == 1, d


def test_choices_that_each_name_a_change_of_level_make_a_trend_question():
    """The wording ('what happens to the noise?') says little; choices that name growing, dying away and
    staying even say the question is about the level over time."""
    loud = LoudnessFact(trend="decreasing", change_db=-18.0, evidence_ids=["e8"])
    d, _ = _decide(Facts(duration_s=4.0, loudness=loud), "As the clip goes on, what happens to the hiss?",
                   ["It swells", "It dies away", "It stays even"])
    assert d.choice_index == 1 and d.method == "loudness_trend", d


def test_an_even_pulse_gives_a_rate_per_minute_without_a_tempo_estimate():
    ev = EventsFact(events=[Span(start_s=0.1 + 0.75 * i, end_s=0.15 + 0.75 * i) for i in range(9)], count=9,
                    evidence_ids=["e4"])
    d, _ = _decide(Facts(duration_s=7.0, events=ev), "How quickly do the taps repeat?",
                   ["Around 40 a minute", "Around 80 a minute", "Around 120 a minute"])
    assert d.choice_index == 1 and d.method == "tempo", d


def test_a_looping_transcript_is_not_counted_and_the_answer_is_less_sure():
    """Whisper looping on one word ('no, no, no ...', words without duration) over a sentence read fast
    (1.5 s) then slowly (3 s): words are not counted; the readings' voiced lengths decide, below the
    confident threshold."""
    ws = [Word(text="no,", start_s=0.1 + 0.3 * i, end_s=0.1 + 0.3 * i) for i in range(5)]
    ws += [Word(text="no,", start_s=2.7 + 0.4 * i, end_s=2.7 + 0.4 * i) for i in range(7)]
    tr = TranscriptFact(text=" ".join(w.text for w in ws), words=ws, evidence_ids=["e1"])
    sp = SpeechFact(segments=[Span(start_s=0.0, end_s=1.5), Span(start_s=2.6, end_s=5.6)], speech_s=4.5,
                    evidence_ids=["e2"])
    d, _ = _decide(Facts(duration_s=6.0, transcript=tr, speech=sp), "Which rendition goes by more briskly?",
                   ["The first rendition", "The second rendition", "Both at one speed"])
    assert d.choice_index == 0 and d.method == "compare_rate", d
    assert d.confidence < CONFIDENT_AT and "degenerate" in d.rationale


def test_voice_activity_without_words_is_not_a_reading():
    """Two readings with words, then a cough VAD takes for speech: the split is between the readings."""
    f = _two_readings(0.25, 0.5)
    cough = Span(start_s=f.duration_s + 1.0, end_s=f.duration_s + 1.4)
    f = f.model_copy(update={"speech": f.speech.model_copy(update={"segments": [*f.speech.segments, cough]}),
                             "duration_s": f.duration_s + 2.0})
    d, _ = _decide(f, "Which take is more drawn out?", ["The earlier take", "The later take", "Neither, they match"])
    assert d.choice_index == 1 and d.method == "compare_rate", d


def test_words_the_choices_share_do_not_tell_them_apart():
    """ASR garbled 'flower pot'; 'under' is in two choices and 'blue' in one: the one with its own word heard
    is supported, not the one that only shares 'under'."""
    t, s = _speech("The spare gears under the blue flag are caught")
    d, _ = _decide(Facts(duration_s=3.5, transcript=t, speech=s), "Where was the spare key said to be?",
                   ["Under the doormat", "Under the blue flower pot", "In the mailbox", "Behind the door"])
    assert d.choice_index == 1 and d.method == "transcript_match", d
