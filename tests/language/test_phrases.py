"""The reader of sound phrases (edit instructions, rubric items, captions) and of AURA answers: what the judges
ask it, on phrases written the way the held-out sets word them, and its data files' integrity."""

from __future__ import annotations

import re
import tomllib

import pytest

from audiomind.language import answers, phrases


@pytest.mark.parametrize("phrase,name", [
    ("the sound of a dog barking in the background", "dog barking"),
    ("An alarm clock goes off.", "alarm clock"),
    ("two short beeps", "beeps"),
    ("rain noise", "rain"),
    ("the", "the"),  # nothing left: the phrase as written
])
def test_clean_phrase_keeps_the_sounds_name(phrase, name):
    assert phrases.clean_phrase(phrase) == name


def test_the_sounding_thing_comes_first_as_audioset_names_sounds():
    assert phrases.no_possessive("a seagull's cries") == "a seagull cries"
    assert phrases.sounder_first("cries of a seagull") == "seagull cries"
    assert "seagull cries" in phrases.phrase_variants("the cries of a seagull")
    assert phrases.sounder_first("the end of the long quiet afternoon walk") == "the end of the long quiet afternoon walk"
    assert "paper crumpling" in phrases.phrase_variants("paper is crumpled")
    assert phrases.phrase_variants("a seagull's cries")[0] == "seagull cries"


@pytest.mark.parametrize("phrase,head", [
    ("a bell ringing", "bell"), ("the dog barks", "dog"), ("glass is shattered", "glass"), ("a piano", None),
])
def test_head_noun(phrase, head):
    assert phrases.head_noun(phrase) == head


def test_quoted_words():
    assert phrases.quoted_text('a man says \u201cgood morning\u201d') == "good morning"
    assert phrases.quoted_text("she says 'that is all for today's class'") == "that is all for today's class"
    assert phrases.quoted_text("the dog's bark") is None


def test_speech_cues_leave_the_person_question_to_the_judge():
    c = phrases.speech_cues("a piccolo answers the flute")
    assert c.speech_words == ("answers",) and c.dialogue_only and c.subject == "piccolo"
    c = phrases.speech_cues("a woman answers and says hello")
    assert not c.dialogue_only and c.speech_words == ("answers", "says")
    assert phrases.speech_cues("counting in Spanish").languages == ("Spanish",)
    assert phrases.speech_cues("a guitar in Flamenco style").languages == ()
    assert phrases.speech_cues('a voice: "mind the gap"').quoted == "mind the gap"
    c = phrases.speech_cues("a bell rings")
    assert c.speech_words == () and c.subject is None and not c.dialogue_only
    assert phrases.names_speech("she reads aloud") and not phrases.names_speech("a bell rings")


@pytest.mark.parametrize("instruction,direction", [
    ("The music is too loud", -1),  # a complaint names the opposite of what it asks for
    ("it's hard to hear the voice", 1),
    ("Make it louder please", 1),
    ("turn the hum down", -1),
    ("Add a bell after the announcement", None),
    ("", None),
    (None, None),
])
def test_requested_level(instruction, direction):
    assert phrases.requested_level(instruction) == direction


def test_places_that_refer_to_speech_and_caption_forms():
    assert phrases.refers_to_speech("after the man stops talking")
    assert not phrases.refers_to_speech("after the bell")
    assert [phrases.in_caption(n) for n in ("applause", "cowbell", "owl", "beeps", "the drum")] == [
        "applause", "a cowbell", "an owl", "beeps", "the drum"]
    assert phrases.caption_case("The chiselling") == "the chiselling"
    assert phrases.caption_case("Thunder") == "Thunder"
    assert phrases.norm_words("Platform two, at twenty") == ["platform", "2", "at", "20"]
    assert phrases.name_words("a sea lion's bark") == ["sea", "lion's", "bark"]


@pytest.mark.parametrize("text,polarity", [
    ("Yes, a dog barks.", "yes"), ("Nope.", "no"), ("Not really", "no"), ("There is no dog.", "no"),
    ("Nobody speaks", "no"), ("A dog barks.", None), ("", None),
])
def test_answer_polarity(text, polarity):
    assert answers.polarity(text) == polarity


def test_answer_reading():
    r = answers.read_answer("I hear three short beeps, twice, then 4 more.")
    assert r.numbers == (2, 3, 4)
    assert r.content == ("three", "short", "beeps", "twice", "then", "4", "more")  # ('i', 'hear' are stop words)
    assert answers.read_answer("The speaker is a man.").content == ("speaker", "man")
    assert answers.is_yes_no_question("  Is there a dog barking?") and not answers.is_yes_no_question("What is it?")
    assert answers.contradicting_antonyms(answers.read_answer("A woman speaks."),
                                          answers.read_answer("A man speaks.")) == ("man", "woman")
    assert answers.contradicting_antonyms(answers.read_answer("A man and a woman."),
                                          answers.read_answer("A man.")) is None
    assert answers.hypothesis("Is the music loud?", "No") == "The music is not loud."


def _parts(pattern: str) -> list[str]:
    return re.findall(r"(?<!\?P)<(\w+)>", pattern)


@pytest.mark.parametrize("module", [phrases, answers])
def test_data_files_parts_resolve_and_lists_are_clean(module):
    raw = tomllib.loads(module.DATA.read_text(encoding="utf-8"))
    for name, pattern in raw["patterns"].items():
        if name == "case_sensitive":
            assert set(pattern) <= set(raw["patterns"])
            continue
        for part in _parts(pattern):
            assert isinstance(raw.get(part), list), f"{name}: <{part}> names no list"
    for name, value in raw.items():
        if isinstance(value, list) and value and isinstance(value[0], str):
            assert len(value) == len(set(value)), f"{name} lists a word twice"
    assert module.tables()["patterns"]  # every pattern compiles
