"""acoustic_music_features: pitch, tempo and beats, key, chords and note events.

These are measurements of musical structure (how high, how fast, which tonal centre, which triads, which
notes). None of them says what instrument or voice makes the sound, who is singing, or what the music
means; their claims stay with pitch, time and harmony.

One module per family, each holding its tools, their argument and output models and their method:
- `pitch`: pYIN (librosa) refined by YIN (the `pitch` tool);
- `tempo`: librosa's onset envelope, tempo estimate and dynamic-programming beat tracker (`tempo`);
- `harmony`: Krumhansl-Schmuckler profile correlation of CQT chroma (`key`) and triad templates on CQT
  chroma with a Viterbi smoother (`chords`);
- `notes`: the basic-pitch ONNX model (Spotify, Apache-2.0, carried by the `basic-pitch` package,
  installed --no-deps), with its note decoding ported so neither TensorFlow nor its MIDI dependencies are
  needed (`notes`).
The manifests in tools/ name each tool's module (`audiomind.tools.music.pitch:pitch`). The output models
are re-exported here for readers of tool outputs; the tool functions are not (they share their modules'
names).
"""

from __future__ import annotations

from audiomind.tools.music.harmony import ChordsOutput, KeyOutput
from audiomind.tools.music.notes import NotesOutput
from audiomind.tools.music.pitch import PitchOutput
from audiomind.tools.music.tempo import TempoOutput

__all__ = ["ChordsOutput", "KeyOutput", "NotesOutput", "PitchOutput", "TempoOutput"]
