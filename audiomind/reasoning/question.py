"""Question analysis for the rule planner: what kind of evidence a question needs.

Two transparent signals, both written into the plan's rationale: keyword rules for the common question
shapes (counting, speaker count, speech content, sound source, loudness, music features, timing), and
MiniLM similarity between the question and each available tool's manifest text (function + supports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from audiomind.tools.manifest import ToolManifest

NUMBER_WORDS = {
    "zero": 0, "none": 0, "no": 0, "one": 1, "once": 1, "single": 1, "two": 2, "twice": 2, "three": 3,
    "thrice": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
    "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20,
}


@dataclass(frozen=True)
class Intent:
    name: str
    pattern: str
    tools: tuple[str, ...]
    targets: str


# Ordered: the first matching rule is the primary intent; later matches add secondary tools.
INTENTS: tuple[Intent, ...] = (
    Intent(
        "speaker_count",
        r"\bhow many (different |distinct |unique )?(speakers?|people|persons|voices|individuals|talkers)\b"
        r"|\bnumber of (speakers|people|voices)\b|\bspeaker count\b",
        ("vad", "speaker_count"),
        "distinct voices and their turns",
    ),
    Intent(
        "speaker_compare",
        r"\bsame (speaker|person|voice)\b|\bdifferent (speakers|people|voices)\b|\bwho (spoke|speaks|talks)\b",
        ("speaker_count",),  # turns + centroid similarities; speaker_verify needs two clips or windows
        "whether voices are the same or different",
    ),
    Intent(
        "word_count",
        r"\bhow many (words|times (is|was|does) .* (said|spoken|repeated|mentioned))\b|\bhow many times .*"
        r"\b(say|says|said|repeat|repeats|repeated|mention|mentions|mentioned)\b",
        ("asr",),
        "the spoken words, to count repetitions",
    ),
    Intent(
        "count_events",
        r"\bhow many (times|beeps?|rings?|knocks?|clicks?|claps?|barks?|tones?|sounds?|events?|notes?|hits?|"
        r"chimes?|strikes?|dings?|pulses?|bangs?)\b|\bcount (the|how)\b|\bnumber of (times|beeps|sounds|events)\b",
        ("count_events", "tagging"),
        "each separate sound event, to be counted",
    ),
    Intent(
        "language",
        r"\b(what|which) language\b|\blanguage (is|was) (spoken|used)\b",
        ("asr",),
        "the language of the speech",
    ),
    Intent(
        "speech_content",
        r"\b(say|says|said|saying|spoken|speak|speaks|speaker|speakers|word|words|sentence|phrase|mention|"
        r"mentions|mentioned|talk(ing|s)? about|transcript|announce[sd]?|announcement|utter(ed|s)?|read(s)? out|"
        r"name[sd]?|ask(s|ed)?|tell(s)?|told|request(s|ed)?|instruct(s|ed|ion)?|discuss(es|ed)?|topic|"
        r"conversation|dialogue|according to|narrator|explain(s|ed)?|describe[sd]?)\b",
        ("vad", "asr"),
        "the spoken words and their timing",
    ),
    Intent(
        "loudness",
        r"\b(loud|louder|loudest|quiet|quieter|volume|loudness|soft(er)?|fade[sd]?|fading|crescendo|"
        r"decrescendo|intensity)\b",
        ("loudness",),
        "the level and how it changes over time",
    ),
    Intent(
        "tempo",
        r"\b(tempo|bpm|beats per minute|fast|slow|pace|rhythm)\b",
        ("tempo",),
        "the beat and tempo",
    ),
    Intent(
        "key",
        r"\b(key|major|minor|mode|chord|chords|harmony|tonality)\b",
        ("key", "chords"),
        "the key, mode and chords",
    ),
    Intent(
        "pitch",
        r"\b(pitch|higher|lower|note|notes|melody|frequency|hz|rising|falling)\b",
        ("pitch",),
        "the pitch and notes",
    ),
    Intent(
        "duration",
        r"\bhow long\b|\bduration\b|\blength of\b|\bhow many seconds\b",
        ("probe", "vad"),
        "the duration of the clip and of its parts",
    ),
    Intent(
        "timing",
        r"\b(when|first|last|before|after|begin(ning|s)?|start(s|ed)?|end(s|ed)?|order|sequence|then)\b",
        ("vad", "tagging", "count_events"),
        "the order and timing of events",
    ),
    Intent(
        "sound_event",
        r"\b(sound|sounds|noise|heard|hear|source|instrument|animal|vehicle|machine|object|event|background|"
        r"environment|scene|genre|music|playing|ringing|produc(es|ed|ing))\b",
        ("tagging",),
        "which sound sources and events are present",
    ),
)


@dataclass
class QuestionAnalysis:
    question: str
    intents: list[str]
    tools: list[str]
    targets: list[str]
    similar_tools: list[tuple[str, float]] = field(default_factory=list)
    choice_numbers: list[int | None] = field(default_factory=list)
    rationale: str = ""

    @property
    def primary(self) -> str:
        return self.intents[0] if self.intents else "general"


def parse_number(text: str) -> int | None:
    """The integer a choice states ('3', 'three', 'Three speakers', 'twice'); None if it states none."""
    t = text.lower()
    m = re.search(r"-?\d+", t)
    if m:
        return int(m.group())
    if re.search(r"\b(no one|nobody|no speakers?|nothing)\b", t):
        return 0
    for word in re.findall(r"[a-z]+", t):
        if word != "no" and word in NUMBER_WORDS:
            return NUMBER_WORDS[word]
    return None


def analyse(question: str, choices: list[str], available: list[ToolManifest]) -> QuestionAnalysis:
    q = question.lower()
    names = {m.name for m in available}
    intents: list[str] = []
    tools: list[str] = []
    targets: list[str] = []
    for intent in INTENTS:
        if re.search(intent.pattern, q):
            intents.append(intent.name)
            targets.append(intent.targets)
            tools += [t for t in intent.tools if t in names and t not in tools]
    numbers = [parse_number(c) for c in choices]
    if not intents and choices and sum(n is not None for n in numbers) >= max(2, len(choices) - 1) and "how many" in q:
        intents.append("count_events")
        tools += [t for t in ("count_events",) if t in names and t not in tools]
        targets.append("each separate sound event, to be counted")

    similar: list[tuple[str, float]] = []
    if available:
        from audiomind.embedded.text import similarity

        docs = [f"{m.function} Supports: {'; '.join(m.supports)}" for m in available]
        sims = similarity([question], docs)[0]
        similar = sorted(((m.name, float(s)) for m, s in zip(available, sims)), key=lambda x: -x[1])[:3]
        # Semantic routing adds the best-matching perception tool when no rule fired.
        if not intents:
            for name, score in similar:
                manifest = next(m for m in available if m.name == name)
                claims_nothing = manifest.derives_audio or manifest.category.value in ("evaluation", "visual_inspection")
                if score >= 0.25 and not claims_nothing:
                    tools.append(name)
                    break
    if not intents:
        intents.append("general")
        targets.append("the overall content: speech, sound events and music")
    rationale = (
        f"rules matched intents {intents}; tools by rule: {tools or 'none'}; "
        f"closest manifests by MiniLM similarity: "
        + ", ".join(f"{n} ({s:.2f})" for n, s in similar)
    )
    return QuestionAnalysis(
        question=question, intents=intents, tools=tools, targets=targets, similar_tools=similar,
        choice_numbers=numbers, rationale=rationale,
    )
