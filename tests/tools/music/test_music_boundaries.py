"""Every music tool: claims stay within their boundary, outputs are plain JSON."""

from __future__ import annotations

import importlib.util
import json

from audiomind.tools.music.harmony import chords, key
from audiomind.tools.music.notes import notes
from audiomind.tools.music.pitch import pitch
from audiomind.tools.music.tempo import tempo


def test_music_claims_stay_within_their_boundary_and_outputs_are_plain_json(melody, tool_runner):
    """Pitch/tempo/key/chords describe musical structure; none names an instrument, a person or a mood.
    Outputs are plain JSON (no numpy scalars), as traces and the tool cache need."""
    banned = ("piano", "instrument", "speaker", "singer", "male", "female", "happy", "sad", "emotion")
    fns = [pitch, tempo, key, chords] + ([notes] if importlib.util.find_spec("basic_pitch") else [])
    for fn in fns:
        res = tool_runner(fn, {}, melody)
        json.dumps(res.model_dump(), allow_nan=False)
        for claim in res.claims:
            assert not any(w in claim.text.lower() for w in banned), (fn.__name__, claim.text)
