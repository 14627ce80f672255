"""Question analysis for the offline stack: which kinds of evidence a question and its choices call for.

Transparent and written into the plan's rationale. Two signals, neither hinging on one wording:
- the question's meaning, by MiniLM similarity to many paraphrases per family of question (prototypes
  below, written as generic examples of each family, not copied from any benchmark);
- the choices' shape: numbers, times, days, comparatives, first/second, negations, languages, sides,
  genders, trend words. Choices carry as much signal as the question.
Time focus comes only from explicit spans ("in the first 3 seconds", "at the end of the clip"), never from
an ordinal that refers to an item ("the first note").
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, Field

from audiomind.language.frames import QuestionFrame
from audiomind.language.question import Reader, read_question
from audiomind.tools.manifest import ToolManifest

NUMBER_WORDS = {
    "zero": 0, "none": 0, "no": 0, "one": 1, "once": 1, "single": 1, "two": 2, "twice": 2, "three": 3,
    "thrice": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
    "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20,
}
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# Families of questions, each with generic paraphrases (prototypes) and the tools whose evidence it needs.
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "count_events": ((
        "How many times does the sound occur?", "Count the sounds you hear.", "What is the number of beeps?",
        "How many knocks are there?", "How often does the signal repeat?", "How many separate tones are played?",
        "Number of rings in the recording?", "How many clicks can be heard?",
    ), ("count_events", "tagging")),
    "count_speakers": ((
        "How many people are talking?", "How many different voices are there?", "Number of speakers?",
        "How many distinct talkers take part in the conversation?", "How many individuals can be heard speaking?",
    ), ("vad", "speaker_count")),
    "count_words": ((
        "How many times is the word said?", "How often does the speaker repeat the word?",
        "How many times is that name mentioned?", "How many words are spoken?",
    ), ("asr",)),
    "speech_content": ((
        "What does the speaker say?", "What is mentioned in the recording?", "What is the announcement about?",
        "According to the speaker, what happened?", "What should the listener do?", "What is being requested?",
        "Which sentence is spoken?", "What day was mentioned?", "What is the topic of the conversation?",
        "What object does the voice refer to?",
    ), ("vad", "asr")),
    "language": ((
        "What language is spoken?", "In which language does the person talk?", "Identify the language of the speech.",
    ), ("asr",)),
    "sound_category": ((
        "What sound is heard?", "Which instrument is playing?", "What is the source of the noise?",
        "What kind of event is happening?", "Identify the sound.", "What animal can be heard?",
        "Which best describes the audio?", "What is making this noise?",
    ), ("tagging",)),
    "pitch_compare": ((
        "Which tone is higher?", "Is the later tone above or below the earlier one?", "Is the second sound lower?",
        "Which of the two notes has the higher pitch?", "Compare the pitch of the two tones.",
    ), ("count_events", "pitch", "notes")),
    "pitch_contour": ((
        "How does the melody move?", "Does the pitch go up or down?", "Describe the direction of the notes.",
        "What is the shape of the melodic line?", "Is the sequence of notes ascending?",
    ), ("pitch", "notes")),
    "loudness_compare": ((
        "Which sound is louder?", "Is the second tone quieter than the first?", "Which of the two is softer?",
        "Compare the volume of the two sounds.",
    ), ("count_events", "loudness")),
    "loudness_trend": ((
        "How does the volume change over time?", "Does the sound get louder or quieter?",
        "Describe the change in loudness.", "Is the level fading out?",
    ), ("loudness",)),
    "rate_compare": ((
        "Which reading is faster?", "Is the sentence spoken more quickly the second time?",
        "Which of the two utterances is slower?",
    ), ("vad", "asr")),
    "rate_absolute": ((
        "Is the person speaking quickly or slowly?", "How fast is the speech?", "Describe the speaking rate.",
        "Is the talker rushing?",
    ), ("vad", "asr")),
    "tempo": ((
        "What is the tempo in beats per minute?", "How fast is the beat?", "Estimate the BPM of the music.",
    ), ("tempo",)),
    "key": ((
        "Is the music in a major or minor key?", "What is the key of the piece?", "What is the tonality?",
    ), ("key", "chords")),
    "onset": ((
        "When does the sound start?", "At what time does the speech begin?", "How many seconds before the tone?",
        "When is the sound first heard?",
    ), ("vad", "count_events")),
    "offset": ((
        "When does the sound stop?", "At what time does the speaking end?",
    ), ("vad", "count_events")),
    "duration": ((
        "How long does the tone last?", "How long is the recording?", "What is the duration of the sound?",
        "For how many seconds does it play?",
    ), ("probe", "vad", "count_events")),
    "order": ((
        "Which sound comes first?", "What is heard last?", "Who speaks first?", "What happens at the end?",
        "Which comes earlier, the bell or the voice?", "In what order are the sounds heard?",
    ), ("tagging", "vad", "count_events")),
    "side": ((
        "From which side does the sound come?", "Is the sound on the left or the right?",
        "Where is the source positioned in the stereo field?",
    ), ("signal_stats",)),
    "gender": ((
        "Is the speaker male or female?", "Is it a man or a woman talking?", "What is the gender of the voice?",
    ), ("vad", "pitch", "speaker_count")),
    "presence": ((
        "Is there any speech?", "Can you hear a dog?", "Is there music in the background?", "Does anyone talk?",
    ), ("tagging", "vad")),
}

# steps beyond perception the policy can take, and those it cannot
STEP_PATTERNS: dict[str, re.Pattern[str]] = {
    "day_offset": re.compile(r"\b(day|days)\b.{0,25}\b(after|before|later|earlier|following|preceding|prior)\b"
                             r"|\b(next|following|previous|preceding)\s+day\b|\bday\s+(after|before)\b"),
    "not_mentioned": re.compile(
        r"(\bnot\b|\bnever\b|n't\b).{0,30}\b(mention\w*|say|says|said|nam(e|es|ed)|list|lists|listed|spoken|speak\w*|"
        r"hear|heard|includ\w*|brought up|come up|came up|refer\w*|talk\w* about|read out|among|in|on|part of|appear\w*)\b"
        r"|\b(missing|absent|left (out|off)|omitted|excluded|skipped|forgot\w*|leaves? out)\b"),
    "before_voice": re.compile(r"\b(before|prior to|until|ahead of|preced\w*|leading up to|earlier than)\b.{0,30}"
                               r"\b(voice\w*|speech|speak\w*|talk\w*|spoken|says?|words?|someone|anyone|person|"
                               r"announc\w*|message|sentence|narrat\w*|utterance|talker)\b"),
    "after_voice": re.compile(r"\bafter\b.{0,30}\b(voice|speech|speaker|speaking|talking)\b.{0,20}\b(stops|ends|"
                              r"finishes)\b"),
}
UNSUPPORTED_STEPS = re.compile(
    r"\b(how many more|how much (more|less|longer|shorter)|difference between|in total|add(ed)? up|sum of|"
    r"multipl\w+|divided|percent|average of|why|infer|imply|implies|likely (reason|purpose|intention)|"
    r"emotion|feel(s|ing)?|mood|sarcas\w+|relationship|occupation|profession)\b")

_TIME_SPAN = re.compile(
    r"\b(?:in|during|within|over)\s+the\s+(first|last|final|opening|closing)\s+(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b"
    r"|\bat\s+the\s+(beginning|start|end)\s+of\s+the\s+(?:clip|recording|audio|track|file|excerpt)\b")


# how choices name a change of level over time (the loudness-trend verifier reads the same words)
TREND_WORDS = {
    "increasing": r"increas\w*|louder|grow\w*|ris(e|es|ing)|crescendo|build\w*|swell\w*|gets? up\b|fad(e|es|ed|ing) in\b",
    "decreasing": r"decreas\w*|quieter|softer|fad(e|es|ed|ing)(?! in\b)|diminish\w*|decrescendo|drop\w*|falling|dies? "
                  r"(down|away)|dying (down|away)",
    "steady": r"steady|constant|same|unchanged|stable|consistent|flat|even|level|unchanging|does not change|"
              r"doesn't change|no (overall )?change",
    "fluctuating": r"fluctuat\w*|vary|varies|varying|up and down|alternat\w*|uneven|cuts? (out|off)|drops? out|gap",
}


class TimeSpan(BaseModel):
    start_s: float | None = Field(description="None = from the clip's start")
    end_s: float | None = Field(description="None = to the clip's end")
    where: str
    length_s: float | None = None


class QuestionAnalysis(BaseModel):
    question: str
    choices: list[str] = Field(default_factory=list)
    families: dict[str, float] = Field(default_factory=dict, description="family -> relevance 0..1")
    steps: list[str] = Field(default_factory=list, description="reasoning steps on top of perception")
    unsupported_step: str | None = Field(default=None, description="a step the policy cannot take, if any")
    time_span: TimeSpan | None = None
    tools: list[str] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    similar_tools: list[tuple[str, float]] = Field(default_factory=list)
    rationale: str = ""
    frame: QuestionFrame | None = Field(default=None, description="the typed reading of the question")

    @property
    def primary(self) -> str:
        return max(self.families, key=lambda f: self.families[f]) if self.families else "general"

    @property
    def intents(self) -> list[str]:
        return sorted(self.families, key=lambda k: -self.families[k])

    def fit(self, family: str) -> float:
        return self.families.get(family, 0.0)


def parse_number(text: str) -> int | None:
    """The integer a choice states ('3', 'three', 'Three speakers', 'twice'); None if it states none."""
    t = text.lower()
    m = re.search(r"-?\d+", t)
    if m:
        return int(m.group())
    if re.search(r"\b(no one|nobody|no speakers?|nothing|none)\b", t):
        return 0
    for word in re.findall(r"[a-z]+", t):
        if word != "no" and word in NUMBER_WORDS:
            return NUMBER_WORDS[word]
    return None


def is_numeric_choice(text: str) -> bool:
    """A choice that is a count: a number, optionally with a noun ('3', 'three beeps', 'Five times')."""
    t = text.lower().strip().rstrip(".")
    return parse_number(t) is not None and len(re.findall(r"[a-z]+", t)) <= 3 and not re.search(r"\d\s*(s|sec|seconds?|ms|min|bpm|hz)\b", t)


TIME_UNIT = re.compile(r"\d\s*(s|sec|secs|seconds?|ms|milliseconds?|min|mins|minutes?)\b|\d+:\d\d")


@lru_cache(maxsize=1)
def _prototype_matrix():
    from audiomind.embedded.text import embed

    names, texts = [], []
    for fam, (protos, _) in FAMILIES.items():
        for p in protos:
            names.append(fam)
            texts.append(p)
    return names, embed(texts)


def _semantic_families(question: str) -> dict[str, float]:
    """Per family, the best cosine similarity between the question and the family's prototypes."""
    from audiomind.embedded.text import embed

    names, mat = _prototype_matrix()
    q = embed([question])[0]
    sims = mat @ q
    best: dict[str, float] = {}
    for fam, s in zip(names, sims):
        best[fam] = max(best.get(fam, -1.0), float(s))
    return best


def _choice_families(q: str, choices: list[str]) -> dict[str, float]:
    """What the choices' shapes say about the question: evidence as strong as the wording."""
    cl = [c.lower() for c in choices]
    n = max(1, len(cl))
    share = lambda pred: sum(1 for c in cl if pred(c)) / n  # noqa: E731
    out: dict[str, float] = {}
    if share(lambda c: bool(TIME_UNIT.search(c))) >= 0.5:
        for fam in ("onset", "offset", "duration"):
            out[fam] = 0.5
    if share(lambda c: bool(TIME_UNIT.search(c)) and bool(re.search(r"\b(in|into)\s*$|^\s*(after|at)\b", c))) >= 0.5:
        out["onset"] = 0.8  # 'after about 3 seconds', '2 s in': a point in time, not a length
    if share(lambda c: bool(re.search(r"\bbpm\b|beats per minute|\bper min(ute)?\b|/\s*min\b|\ba minute\b", c))) >= 0.5:
        out["tempo"] = 0.9  # a rate per minute: the beat, or how often a sound repeats
    if share(is_numeric_choice) >= 0.6:
        out["count_events"] = 0.45
    if share(lambda c: any(d in c for d in DAYS)) >= 0.5:
        out["speech_content"] = 0.6
    if share(lambda c: bool(re.search(r"\b(major|minor)\b", c))) >= 0.5:
        out["key"] = 0.9
    if share(lambda c: bool(re.search(r"\b(left|right|cent(er|re)|middle|both sides)\b", c))) >= 0.5:
        out["side"] = 0.8
    if share(lambda c: bool(re.search(r"\b(male|female|man|woman|men|women|boy|girl)\b", c))) >= 0.4:
        out["gender"] = 0.7
    if share(lambda c: bool(re.search(r"\b(english|spanish|french|german|italian|chinese|japanese|russian|"
                                      r"portuguese|korean|arabic|hindi|dutch|mandarin)\b", c))) >= 0.5:
        out["language"] = 0.9
    if share(lambda c: bool(re.search(r"\b(fast|quick\w*|rapid\w*|slow\w*|hurried|leisurely)\b", c))) >= 0.4:
        out["rate_absolute"] = 0.5
    if share(lambda c: bool(re.search(r"\b(louder|quieter|softer|increas\w*|decreas\w*|fad\w*|steady|constant)\b", c))) >= 0.4:
        out["loudness_trend"] = 0.4
    trend_kinds = {k for c in cl for k, pat in TREND_WORDS.items() if re.search(pat, c)}
    if share(lambda c: any(re.search(pat, c) for pat in TREND_WORDS.values())) >= 0.6 and len(trend_kinds) >= 2:
        out["loudness_trend"] = max(out.get("loudness_trend", 0.0), 0.5)  # each choice names a different change
    if share(lambda c: bool(re.search(r"\b(ris\w*|fall\w*|ascend\w*|descend\w*|goes up|goes down|upward|downward)\b", c))) >= 0.4:
        out["pitch_contour"] = 0.4
    return out


def _lexical_families(q: str) -> dict[str, float]:
    """Unambiguous cue words in the question (a floor under the semantic signal, never a ceiling)."""
    out: dict[str, float] = {}
    cues = {
        "count_speakers": r"\bhow many\b.{0,30}\b(speakers?|people|persons|voices|talkers|individuals)\b",
        "count_words": r"\bhow (many times|often)\b.{0,60}\b(say|says|said|repeat\w*|mention\w*|utter\w*|word)\b"
                       r"|\bhow many words\b",
        "count_events": r"\bhow many\b|\bcount\b|\bnumber of\b",
        "language": r"\blanguage\b",
        "tempo": r"\b(tempo|bpm|beats per minute)\b",
        "key": r"\b(key|major|minor|tonality)\b",
        "pitch_compare": r"\b(higher|lower|pitch)\b",
        "loudness_compare": r"\b(louder|quieter|softer|loudest|quietest)\b",
        "rate_compare": r"\b(faster|slower|more quickly|more slowly|quicker)\b",
        "rate_absolute": r"\b(fast|slow|quickly|slowly|pace|speed|rate)\b",
        "order": r"\b(first|last|before|after|earlier|later|order|sequence|precede\w*|follow\w*)\b"
                 r"|\b(at|in) the (very )?(beginning|start|end|opening|close)\b|\b(begins?|starts?|ends?|opens?|closes?) with\b",
        "onset": r"\b(when|what time|which second)\b.{0,40}\b(start\w*|begin\w*|began|first)\b",
        "offset": r"\b(when|what time|which second)\b.{0,40}\b(stop\w*|end\w*|finish\w*)\b",
        "duration": r"\bhow long\b|\bduration\b|\blength\b|\bhow many seconds (does|is|do)\b.{0,40}\b(last|lasts|long)\b",
        "side": r"\b(left|right|side|stereo|pan\w*|channel)\b",
        "gender": r"\b(male|female|man|woman|gender)\b",
        "loudness_trend": r"\b(volume|loudness|fade\w*|crescendo|getting (louder|quieter|softer))\b",
        "pitch_contour": r"\b(melod\w*|contour|ascend\w*|descend\w*)\b",
        "sound_category": r"\b(sound|noise|instrument|animal|source|hear|heard)\b",
        "speech_content": r"\b(say|says|said|mention\w*|spoken|announce\w*|talk\w* about|ask\w*|tell\w*|told|"
                          r"bring|request\w*|name\w*|topic)\b",
    }
    for fam, pat in cues.items():
        if re.search(pat, q):
            out[fam] = 0.5
    return out


def time_span(question: str) -> TimeSpan | None:
    """An explicit part of the clip the question points at: 'in the first 3 seconds', 'at the end of the
    recording'. Ordinals that refer to items ('the first note') are not time spans."""
    m = _TIME_SPAN.search(question.lower())
    if not m:
        return None
    if m.group(1):
        where, length = m.group(1), float(m.group(2))
        if where in ("first", "opening"):
            return TimeSpan(start_s=0.0, end_s=length, where=f"first {length:g} s", length_s=length)
        return TimeSpan(start_s=None, end_s=None, where=f"last {length:g} s", length_s=length)
    where = m.group(3)
    return TimeSpan(start_s=0.0 if where in ("beginning", "start") else None, end_s=None, where=where)


def analyse(question: str, choices: list[str], available: list[ToolManifest],
            reader: Reader | None = None) -> QuestionAnalysis:
    """Families with relevance, steps, explicit time span, and the tools their evidence needs; `frame` is
    the reading of `reader` (default: the rule reader)."""
    frame = read_question(question, list(choices), reader)
    q = question.lower()
    semantic = _semantic_families(question)
    lexical = _lexical_families(q)
    shaped = _choice_families(q, choices)
    families: dict[str, float] = {}
    for fam in FAMILIES:
        s = semantic.get(fam, 0.0)
        sem = max(0.0, min(1.0, (s - 0.35) / 0.4))  # cosine 0.35 -> 0, 0.75 -> 1
        score = max(sem, lexical.get(fam, 0.0) * (0.6 + 0.8 * sem), shaped.get(fam, 0.0))
        into = re.search(r"\bhow (long|far|much time|many seconds) (before|until|into|after|passes?)\b|"
                         r"\b(seconds?|far|time) into\b|\bhow (soon|early|late)\b", q)
        lasting = re.search(r"\bhow long\b|\bduration\b|\bfor how many seconds\b|\blasts?\b|\blength\b|"
                            r"\bgo(es)? on for\b|\bperiod\b", q)
        if fam == "duration" and lasting and not into:
            score = max(score, 0.9)  # 'how long ... heard' is about a length, however close to 'when is it heard'
        if fam in ("onset", "offset") and lasting and not into:
            score = min(score, 0.3)
        starting = re.search(r"\b(start\w*|begin\w*|began|begun|kick\w* in|comes? in|first (heard|appears?|sounds?)|"
                             r"appear\w*|onset|set\w* in)\b", q) and not re.search(r"\b(stop\w*|end\w*|finish\w*)\b", q)
        if fam == "onset" and (into or starting):
            score = max(score, 0.95)  # 'how long until it starts' asks for an onset
        if fam == "duration" and starting and not re.search(r"\b(last|lasts|duration|length)\b", q):
            score = min(score, 0.5)
        if lexical.get(fam) and shaped.get(fam):
            score = min(1.0, score + 0.2)
        if score >= 0.15:
            families[fam] = round(min(1.0, score), 3)
    # choices that are all of one measurable kind (genders, sides, languages, keys, tempi, points in time)
    # say what is asked more reliably than a wording that merely mentions a voice: what was said is then
    # secondary, unless the question asks about it in words
    if "speech_content" in families and not lexical.get("speech_content") and any(
            v >= 0.7 for f_, v in shaped.items() if f_ not in ("speech_content", "count_events")):
        families["speech_content"] = min(families["speech_content"], 0.5)
    if frame.about_speech:
        # 'which position does the voice announce?': a question built on a verb of saying asks what is said,
        # whatever shape its choices have (sides, days, genders are then words to hear, not measurements)
        families["speech_content"] = max(families.get("speech_content", 0.0), 0.85)
        for fam in shaped:
            if fam not in ("speech_content", "count_events", "count_words") and fam in families:
                families[fam] = min(families[fam], 0.3)
    steps = [name for name, pat in STEP_PATTERNS.items() if pat.search(q)]
    day_choices = choices and sum(any(d in c.lower() for d in DAYS) for c in choices) >= max(2, len(choices) - 1)
    if day_choices and "day_offset" not in steps and re.search(
            r"\b(after|before|next|previous|following|preceding|prior|later|earlier|tomorrow|yesterday|follows|"
            r"precedes)\b", q) and not re.search(r"\b(moved|changed|postponed|rescheduled|set|planned)\b", q):
        steps.append("day_offset")  # day choices + a relative word: a step from the spoken day
    unsupported = UNSUPPORTED_STEPS.search(q)
    names = {m.name for m in available}
    tools: list[str] = []
    targets: list[str] = []
    top = max(families.values(), default=0.0)
    for fam, rel in sorted(families.items(), key=lambda kv: -kv[1]):
        if rel < max(0.5, top - 0.3):  # tools for the families the question is about, not for loose neighbours
            continue
        targets.append(fam.replace("_", " "))
        tools += [t for t in FAMILIES[fam][1] if t in names and t not in tools]
    if steps and any(s in ("before_voice", "after_voice") for s in steps):
        tools += [t for t in ("vad", "count_events") if t in names and t not in tools]
    if "not_mentioned" in steps or "day_offset" in steps or frame.about_speech or any(
            st.kind != "pause_length" for st in frame.steps):
        tools += [t for t in ("vad", "asr") if t in names and t not in tools]
    if any(st.kind == "pause_length" for st in frame.steps):
        tools += [t for t in ("vad",) if t in names and t not in tools]
    nearest = sorted(semantic.items(), key=lambda kv: -kv[1])[:3]
    rationale = (
        "families by relevance: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(families.items(), key=lambda kv: -kv[1])[:5])
        + f"; closest prototypes: {', '.join(f'{k} ({v:.2f})' for k, v in nearest)}"
        + (f"; choice shapes: {', '.join(shaped)}" if shaped else "")
        + (f"; steps: {', '.join(steps)}" if steps else "")
        + (f"; needs a step the policy cannot take ({unsupported.group(0)!r})" if unsupported else "")
        + f"; tools: {', '.join(tools) or 'none'}"
        + f"; reading: {frame.summary()}"
    )
    return QuestionAnalysis(
        question=question, choices=list(choices), families=families, steps=steps,
        unsupported_step=unsupported.group(0) if unsupported else None, time_span=time_span(question),
        tools=tools, targets=targets or ["the overall content: speech, sound events and music"],
        similar_tools=[], rationale=rationale, frame=frame,
    )
