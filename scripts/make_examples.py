"""Write the shipped example clips (examples/*.wav) and their questions (examples/questions.jsonl).

Every answer is true by construction: the clips are synthesised by flite, sox-free numpy tones and the
freedesktop sound theme (Debian packages; see scripts/install.sh --dev). Re-run to regenerate.
"""

from __future__ import annotations

import json
from pathlib import Path

from audiomind import synth

OUT = Path(__file__).resolve().parent.parent / "examples"

ITEMS = [
    {
        "id": "two_speakers",
        "make": lambda p: synth.conversation(
            [("slt", "Good morning, did you bring the report for the meeting?"),
             ("awb", "Yes, I printed three copies and left them on your desk."),
             ("slt", "Thank you, that is very helpful."),
             ("awb", "No problem, let me know if you need anything else.")], p),
        "question": "How many different speakers are in this conversation?",
        "choices": ["1", "2", "3", "4"],
        "answer": "2",
        "modality": "speech",
    },
    {
        "id": "weather",
        "make": lambda p: synth.speech("The weather today is sunny with a light breeze from the west.", p, voice="slt"),
        "question": "What does the speaker say about the weather?",
        "choices": ["It will rain all afternoon", "It is sunny with a light breeze", "Snow is expected tonight",
                    "It is foggy near the coast"],
        "answer": "It is sunny with a light breeze",
        "modality": "speech",
    },
    {
        "id": "phone_ring",
        "make": lambda p: synth.sound_file("phone-incoming-call", p),
        "question": "What is the source of the sound in this clip?",
        "choices": ["A dog barking", "A telephone ringing", "A car engine", "Rain falling"],
        "answer": "A telephone ringing",
        "modality": "sound",
    },
    {
        "id": "beeps",
        "make": lambda p: synth.beeps(5, p, freq_hz=880.0, gap_s=0.6),
        "question": "How many beeps are there in the recording?",
        "choices": ["3", "4", "5", "6"],
        "answer": "5",
        "modality": "sound",
    },
]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    rows = []
    for item in ITEMS:
        path = OUT / f"{item['id']}.wav"
        item["make"](path)
        rows.append({k: v for k, v in item.items() if k != "make"} | {"audio": path.name})
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
    (OUT / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
