"""The property vocabulary (lexicon/properties.toml), its fact reader and its one verifier: the rows name
shipped tools and real output keys; choices reach a measured value through the vocabulary's words or, for
wordings it never lists, MiniLM; the descriptors run only when a question's choices name their property; and
questions asked through the default offline stack (rules planner, cascade front end) are answered from the
descriptors' measurements on audio true by construction. Tests that load MiniLM, Whisper or YAMNet are slow."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from audiomind import audio as aio
from audiomind import synth
from audiomind.reasoning.property_facts import vocabulary
from audiomind.reasoning.property_verifier import map_choices
from audiomind.tools.manifest import ToolRegistry

SR = synth.SR
ROWS = {r.name: r for r in vocabulary().property}

# Wordings written before they were tried, none of them copied from the vocabulary file (some share a word
# with it by chance); measured once: 20 of 24 reach the right value, 2 reach none, 2 a wrong one.
HELD_OUT = {
    "band": [("sounds like it is coming down a phone line from far away", "telephone"),
             ("like a voice squeezed through a small speaker on a call", "telephone"),
             ("as though the speaker had a pillow over their mouth", "muffled"),
             ("dull and dark, like from under a blanket", "muffled"),
             ("rich and full, with crisp consonants", "full"), ("an unfiltered, high-quality recording", "full")],
    "space": [("bone dry, right up against the mic", "dry"), ("in a huge cave with a long wash of sound", "reverberant"),
              ("the voice rings on in a big church", "reverberant"),
              ("you can hear each word bounce back separately", "echo"), ("a distinct delayed copy of each word", "echo")],
    "pan_motion": [("moves across from the left channel into the right channel", "left_to_right"),
                   ("it goes from right to the left side", "right_to_left"), ("remains fixed in one spot", "steady")],
    "modulation": [("the pitch shakes back and forth quickly", "vibrato"), ("a wobbling pitch like an opera singer", "vibrato"),
                   ("the loudness rises and falls regularly", "tremolo"), ("the tone bends gradually upward", "glide_up"),
                   ("a falling whistle that slides down", "glide_down"), ("one level pitch the whole time", "steady")],
    "tempo_trend": [("the tempo picks up towards the end", "accelerating"),
                    ("the playing speeds along more and more", "accelerating"),
                    ("it winds down, getting slower", "decelerating"), ("it keeps an even beat", "steady")],
}


# ------------------------------------------------------------------------------------------- the data itself

def _literal_values(annotation) -> list[str] | None:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return [str(a) for a in args]
    return None


def test_every_vocabulary_row_names_a_shipped_tool_and_a_key_of_its_output_model():
    reg = ToolRegistry.load()
    voc = vocabulary()
    assert voc.property and voc.selector
    for row in voc.property:
        assert row.tool in reg, row.name
        model = reg.get(row.tool).output_class
        assert row.field in model.model_fields, (row.name, row.field)
        labels = _literal_values(model.model_fields[row.field].annotation)
        if labels is None:  # a boolean
            labels = ["true", "false"]
        for label in labels:  # every label the tool can emit is a value, or mapped to one (or to "": no value)
            target = row.map.get(label, label)
            assert target == "" or target in row.values, (row.name, label)
        assert set(row.describe) <= set(row.values) and set(row.ordered) <= set(row.values)
        for syns in row.values.values():
            assert syns and all(s == s.lower() for s in syns), row.name  # matched lower-cased
    for sel in voc.selector:
        assert sel.tool in reg, sel.name
        model = reg.get(sel.tool).output_class
        assert sel.items in model.model_fields, sel.name
        assert (sel.index is None) != (sel.flag is None) or (sel.index is None and sel.flag is None)
        if sel.index:
            assert sel.index in model.model_fields, sel.name
        item_model = typing.get_args(model.model_fields[sel.items].annotation)[0]
        for key in (sel.flag, sel.text, sel.start, sel.end, sel.where, sel.labels):
            assert key is None or key in item_model.model_fields, (sel.name, key)


def test_the_descriptor_manifests_declare_boundaries_and_a_version():
    reg = ToolRegistry.load()
    for tool in vocabulary().tools():
        m = reg.get(tool)
        assert m.supports and m.not_for and m.version and m.output_model, tool


@pytest.mark.parametrize("prop,choices,expected", [
    ("band", ["Telephone quality", "Muffled", "Full band"], ["telephone", "muffled", "full"]),
    ("band", ["Telephone-band", "Muffled", "Full-band"], ["telephone", "muffled", "full"]),  # hyphens read as spaces
    ("space", ["Dry", "In a large hall", "With a distinct echo"], ["dry", "reverberant", "echo"]),
    ("pan_motion", ["From the left channel into the right one", "It starts on the right and ends on the left",
                    "It stays put"], ["left_to_right", "right_to_left", "steady"]),
    ("modulation", ["Steady", "Vibrato", "Tremolo", "It glides up", "It glides down"],
     ["steady", "vibrato", "tremolo", "glide_up", "glide_down"]),
    ("tempo_trend", ["It speeds up", "It slows down", "It keeps its pace"], ["accelerating", "decelerating", "steady"]),
])
def test_choices_in_the_vocabularys_words_map_without_minilm(prop, choices, expected):
    values, lexical = map_choices(choices, ROWS[prop])
    assert lexical and values == expected


# ------------------------------------------------------------------------------------------- MiniLM (slow)

@pytest.mark.slow
def test_wordings_the_vocabulary_never_lists_reach_the_measured_values():
    right = wrong = total = 0
    misses = []
    for prop, cases in HELD_OUT.items():
        values, _ = map_choices([c for c, _ in cases], ROWS[prop])
        for (choice, truth), got in zip(cases, values):
            total += 1
            right += got == truth
            wrong += got is not None and got != truth
            if got != truth:
                misses.append((choice, truth, got))
    assert total == 24
    assert right >= 19 and wrong <= 2, misses  # measured 20 right, 2 none, 2 wrong


@pytest.mark.slow
def test_negated_wordings_name_a_value_only_through_the_vocabulary():
    values, _ = map_choices(["perfectly even, with no wobble at all", "vibrato", "tremolo"], ROWS["modulation"])
    assert values == [None, "vibrato", "tremolo"]


@pytest.mark.slow
def test_descriptors_run_only_for_questions_whose_choices_name_their_property():
    from audiomind.reasoning.property_verifier import tools_for

    examples = Path(__file__).resolve().parents[2] / "examples" / "questions.jsonl"
    for line in examples.read_text().splitlines():  # the shipped questions need none of them
        item = json.loads(line)
        assert tools_for(item["question"], item["choices"]) == [], item["id"]
    assert tools_for("How many beeps are there?", ["3", "4", "5", "6"]) == []
    assert tools_for("Is the speaker male or female?", ["Male", "Female"]) == []
    assert tools_for("How does the voice come across?", ["as if heard through a handset", "crisp and airy",
                                                         "dull, as if from the next room"]) == ["band_limits"]
    assert tools_for("Which word does the speaker spell out?", ["table", "garden", "window"]) == ["spelled_letters"]
    assert tools_for("Where in the clip does the long pause fall?",
                     ["near the start", "in the middle", "toward the end"]) == ["silence_map"]
    # the kinds of the synthetic benchmark (pitch contours, louder tones, sound sources, speaking rates) are
    # worded much like descriptor questions; their choices must not call a descriptor
    assert tools_for("How does the pitch of the melody change over time?",
                     ["The pitch rises and then falls", "The pitch rises steadily", "The pitch falls steadily",
                      "The pitch stays on the same note"]) == []
    assert tools_for("Which sound is heard first?", ["A telephone ringing", "Paper being crumpled",
                                                     "A violin playing", "A series of electronic beeps"]) == []
    assert tools_for("What is the speaking rate of the voice?", ["Nobody speaks", "Slowly", "Quickly",
                                                                 "In a whisper"]) == []
    assert tools_for("Which tone sounds louder?", ["Both are equally loud", "The second tone", "The first tone"]) == []
    assert tools_for("What is the tempo of this recording in beats per minute?", ["195 BPM", "140 BPM", "85 BPM"]) == []
    assert tools_for("Before anyone speaks, how many beeps are there?", ["5", "3", "4", "1"]) == []
    assert tools_for("Describe how the level of the audio changes.",
                     ["Silent in the middle", "Louder over time", "Constant volume", "Quieter over time"]) == []
    assert tools_for("What happens to the pitch across the sequence of notes?",
                     ["The pitch falls steadily", "The pitch rises and then falls", "The pitch stays on the same note",
                      "The pitch rises steadily"]) == []
    # the synthetic generator's questions that rows added later took by MiniLM likeness (or by a word a choice
    # shares with a value, as 'Rising' with a sentence's rise)
    for question, choices in [
        ("Which event happens at the beginning in the recording?",
         ["A violin playing", "A person speaking", "A telephone ringing", "A series of electronic beeps"]),
        ("A sentence is read two times. In which reading is it said more slowly?",
         ["The first time", "The second time", "Both at the same speed"]),
        ("Which tone sounds softer?", ["The second tone", "The first tone", "Both are equally loud"]),
        ("What does the speaker ask the listener to return?", ["Projector", "Stapler", "Microphone", "Ladder"]),
        ("Listen to both tones. Which one is lower-pitched?",
         ["Neither, they are identical in pitch", "The later tone", "The earlier tone"]),
        ("Listen to the whole clip. How does its loudness evolve?",
         ["The volume does not change", "The volume increases", "The volume decreases", "There is a silent gap halfway"]),
        ("Three of these items are mentioned in the recording. Which one is not?",
         ["The cheese", "The lemonade", "The grapes", "The bread"]),
        ("How does the pitch of the melody change over time?", ["Rising then falling", "Flat", "Falling", "Rising"]),
        ("Where is the sound located: left or right?", ["From behind", "Left", "Right", "Both sides equally"]),
    ]:
        assert tools_for(question, choices) == [], question
    # ... while a question about how a voice sounds still reaches the band, though it reads as 'which sound'
    assert tools_for("How does the speaker sound?", ["like a call on a landline", "full and clear, nothing missing",
                                                     "dull, as if through a wall"]) == ["band_limits"]


# ------------------------------------------------------------------------------------------- end to end (slow)

@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    """Audio whose property is true by construction, with pink noise at 25 dB SNR."""
    d = tmp_path_factory.mktemp("property-clips")
    rng = np.random.default_rng(11)

    def noisy(x: np.ndarray) -> np.ndarray:
        n = synth.noise("pink", x.shape[-1], rng)
        return (x + n * np.sqrt(synth.active_power(x, SR) / 10 ** 2.5)).astype(np.float32)

    y = aio.load(synth.say("Your table for four is ready, please follow me to the back of the room.",
                           d / "voice.wav", voice="flite:rms"), sr=SR)
    y = 0.5 * y / np.max(np.abs(y))
    out = {"telephone": aio.write_wav(d / "tel.wav", noisy(sosfilt(butter(6, [300, 3400], "bandpass", fs=SR,
                                                                             output="sos"), y)), SR)}
    delay = int(0.35 * SR)
    echo = np.concatenate([y, np.zeros(delay)])
    echo[delay:] += 0.6 * y
    out["echo"] = aio.write_wav(d / "echo.wav", noisy(echo), SR)
    n = 4 * SR
    t = np.arange(n) / SR
    src = rng.standard_normal(n) * 0.2 * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    theta = (np.linspace(0.9, -0.9, n) + 1) * np.pi / 4  # right to left
    out["right_to_left"] = aio.write_wav(d / "pan.wav", np.stack([np.cos(theta) * src, np.sin(theta) * src]).astype(
        np.float32), SR)
    tt = np.arange(int(2.5 * SR)) / SR
    tone = 0.4 * np.sin(2 * np.pi * np.cumsum(330 * 2 ** (0.5 * np.sin(2 * np.pi * 6 * tt) / 12)) / SR)
    out["vibrato"] = aio.write_wav(d / "vib.wav", noisy(tone * np.minimum(1, np.minimum(tt / 0.05, (tt[-1] - tt) / 0.05))),
                                   SR)
    times = np.concatenate([[0.3], 0.3 + np.cumsum(np.linspace(0.3, 0.6, 16))])  # slowing down
    clicks = np.zeros(int((times[-1] + 0.5) * SR), dtype=np.float32)
    for s in times:
        a = int(s * SR)
        clicks[a:a + int(0.03 * SR)] += synth.tone(1500.0, 0.03, 0.6)
    out["decelerating"] = aio.write_wav(d / "clicks.wav", noisy(clicks), SR)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("clip,question,choices,answer", [
    ("telephone", "How does the voice come across?",
     ["as if heard through a handset", "rich and airy, like a studio recording", "as if from behind a closed door"], 0),
    ("echo", "What is the acoustic character of this recording?",
     ["a single clean take, right at the microphone", "each phrase comes back a moment later",
      "smeared by a long wash, like a cathedral"], 1),
    ("right_to_left", "How does the sound travel across the stereo image?",
     ["it crosses from the left channel into the right channel", "it starts on the right and ends on the left",
      "it holds its place"], 1),
    ("vibrato", "How would you describe this held note?",
     ["its pitch wavers periodically", "it bends steadily upward", "its volume throbs on and off"], 0),
    ("decelerating", "What happens to the pace of the clicks?",
     ["the beat gets quicker as it goes", "it drags out and slackens", "the rhythm holds a constant speed"], 1),
])
def test_new_kinds_of_question_are_answered_from_the_descriptors(clip, question, choices, answer, clips, agent):
    result = agent.ask(str(clips[clip]), question, choices=choices)
    assert result.choice == choices[answer], result.rationale
    # a choice mapped to its value by MiniLM similarity alone is a lean, not a certainty: the coverage stage's
    # `fit` gap lowers it below confident (such answers were right 51% of the time on the development runs)
    by_similarity = "MiniLM similarity" in result.rationale
    if by_similarity:
        cov = [s for s in result.state.final_answer.confidence_steps if s.stage == "coverage"]
        assert cov and cov[0].output < cov[0].input and any(k.startswith("fit") for k in cov[0].parameters.inputs)
    assert (result.confidence < 0.7) if by_similarity else (result.confidence >= 0.7), result.rationale
    assert "[property_" in result.rationale
    calls = {c.tool for c in result.state.tool_calls}
    assert len(calls & vocabulary().tools()) == 1  # only the descriptor the choices name ran


@pytest.mark.slow
def test_a_selector_question_picks_the_longest_silence(agent, tmp_path):
    a = aio.load(synth.say("Please close the window.", tmp_path / "a.wav"), sr=SR)
    b = aio.load(synth.say("Thank you very much.", tmp_path / "b.wav", voice="flite:awb"), sr=SR)
    x = np.concatenate([a, synth.silence(0.4), b, synth.silence(3.0), a[: int(0.6 * SR)]])
    path = aio.write_wav(tmp_path / "gap.wav", x, SR)
    choices = ["just after it begins", "halfway through", "close to the finish"]
    result = agent.ask(str(path), "When does the recording go quiet for a long while?", choices=choices)
    assert result.choice == "close to the finish", result.rationale
    assert "[select_longest_silence]" in result.rationale


@pytest.fixture(scope="module")
def word_clips(tmp_path_factory, helpers_bell) -> dict[str, Path]:
    """Selector questions' audio, true by construction: one word said 14 dB louder than the other two; a word
    spelled letter by letter (espeak-ng); a bell between two sentences; the second of three sentences
    overdriven."""
    d = tmp_path_factory.mktemp("selector-clips")
    parts = []
    for w, g in [("apple", 0.12), ("river", 0.6), ("candle", 0.12)]:
        y = aio.load(synth.say(w, d / f"w_{w}.wav"), sr=SR)
        parts += [g * y / np.max(np.abs(y)), synth.silence(0.4)]
    out = {"loud": aio.write_wav(d / "loud.wav", np.concatenate(parts), SR),
           "spell": synth.say("Please spell the word house. H, O, U, S, E.", d / "spell.wav", voice="espeak-ng:en-us")}
    a = aio.load(synth.say("Good morning everyone.", d / "b1.wav"), sr=SR)
    b = aio.load(synth.say("The train to Boston is now boarding.", d / "b2.wav"), sr=SR)
    bell = helpers_bell(d / "bell.wav")
    out["bell"] = aio.write_wav(d / "bell_between.wav", np.concatenate(
        [a, synth.silence(0.5), 0.5 * bell / np.max(np.abs(bell)), synth.silence(0.4), b]), SR)
    sents = []
    for k, (text, v) in enumerate(CLIPPED_SENTENCES):
        y = aio.load(synth.say(text, d / f"s{k}.wav", voice=v), sr=SR)
        y = 0.5 * y / np.max(np.abs(y))
        sents += [np.clip(8 * y, -0.9, 0.9) * 0.8 if k == 1 else y, synth.silence(0.6)]
    out["clipped"] = aio.write_wav(d / "clipped.wav", np.concatenate(sents), SR)
    return out


CLIPPED_SENTENCES = [("Please close the window before you leave.", "flite:slt"),
                     ("The meeting starts at nine tomorrow.", "flite:awb"), ("Bring your own lunch on Friday.", "flite:rms")]


@pytest.fixture(scope="module")
def helpers_bell():
    bell = Path("/usr/share/sounds/freedesktop/stereo/bell.oga")
    if not bell.exists():
        pytest.skip(f"{bell} is not installed (Debian package sound-theme-freedesktop)")

    def make(path: Path) -> np.ndarray:
        return aio.load(synth.sound_file("bell", path), sr=SR)

    return make


@pytest.mark.slow
@pytest.mark.parametrize("clip,question,choices,answer,selector", [
    ("loud", "Which of the three words is spoken with the most force?", ["apple", "river", "candle"], 1,
     "loudest_word"),
    ("spell", "Which word is spelled out letter by letter?", ["mouse", "house", "horse"], 1, "spelled_word"),
    ("bell", "What is said right after the bell rings?",
     ["Good morning everyone", "The train to Boston is now boarding", "Mind the gap"], 1, "words_after_sound"),
    ("clipped", "Which sentence sounds distorted?", [t.rstrip(".") for t, _ in CLIPPED_SENTENCES], 1,
     "clipped_segment"),
    ("clipped", "Which sentence sounds distorted?", ["the first one", "the second one", "the third one"], 1,
     "clipped_segment"),
])
def test_selector_questions_pick_the_item_the_descriptor_measured(clip, question, choices, answer, selector,
                                                                 word_clips, agent):
    result = agent.ask(str(word_clips[clip]), question, choices=choices)
    assert result.choice == choices[answer], result.rationale
    assert f"[select_{selector}]" in result.rationale
    # what is said after the bell: the transcript verifier also hears 'Good morning everyone' and so stands as a
    # rival, which cuts the confidence (reasoning/answer.py); the others decide at >= 0.7. The floors are raw
    # decision scores, read through the calibration table the answer step applies (reasoning/calibration.py)
    from audiomind.reasoning.calibration import calibrate

    floor = 0.4 if selector == "words_after_sound" else 0.7
    assert result.confidence >= calibrate(floor) - 1e-3, result.rationale
