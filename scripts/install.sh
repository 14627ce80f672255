#!/usr/bin/env bash
# Install audiomind and its embedded (offline) model stack into ./.venv.
#   bash scripts/install.sh         # runtime
#   bash scripts/install.sh --dev   # + test tools and the Debian audio generators the tests use
# torch is pinned to the local CPU wheel first, so the loose `torch>=` in pyproject installs nothing more.
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=0; [ "${1:-}" = "--dev" ] && DEV=1

apt_pkgs=(ffmpeg openjdk-17-jre-headless wordnet-base)  # Java runs METEOR and the PTB tokenizer (edit judge); WordNet glosses words no AudioSet class is named after (judges)
[ "$DEV" = 1 ] && apt_pkgs+=(sox libsox-fmt-all espeak-ng flite fluidsynth fluid-soundfont-gm sound-theme-freedesktop chromium
  festival festvox-kdlpc16k festvox-czech-machac tuxpaint-stamps-default)  # the judge set v7's voices and stamps (tests/evals/test_judge_sets.py)
missing=()
for p in "${apt_pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "note: missing Debian packages: ${missing[*]} (install them as root; ffmpeg falls back to imageio-ffmpeg)" >&2
  fi
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
.venv/bin/python -c "import torch" 2>/dev/null || "${PIP[@]}" "torch==2.13.0"
# llama-cpp-python (dev extra) compiles llama.cpp once (~5-10 min on 2 cores; pip caches the wheel);
# GGML_NATIVE=OFF keeps the build portable across CPUs.
if [ "$DEV" = 1 ]; then CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "${PIP[@]}" -e ".[dev]"; else "${PIP[@]}" -e .; fi
.venv/bin/audiomind models install --quiet
