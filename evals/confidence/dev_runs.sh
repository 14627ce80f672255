#!/usr/bin/env bash
# Build every development set (the retired blind sets v1..v7 and three synthetic splits) and run the offline
# default on each: RUNS/<set>/ (results.jsonl + traces/). Re-running resumes. The traces are what
# evals/confidence/redecide.py re-decides with the current answer code.
#   bash evals/confidence/dev_runs.sh DATA_DIR RUNS_DIR [WORKERS]
set -euo pipefail
DATA=${1:?DATA_DIR}; RUNS=${2:?RUNS_DIR}; W=${3:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd); PY="$ROOT/.venv/bin/python"; AM="$ROOT/.venv/bin/audiomind"
mkdir -p "$DATA" "$RUNS"
if [ ! -f "$DATA/syn/dev/meta.jsonl" ]; then
  "$PY" "$ROOT/evals/synthetic/generate.py" --out "$DATA/syn" --per-kind 4 --seed 0 \
    --splits dev,heldout_phrasing,heldout_condition
fi
for split in dev heldout_phrasing heldout_condition; do
  "$AM" bench run --task synthetic --source "$DATA/syn/$split" --out "$RUNS/syn_$split" --workers "$W" >/dev/null
  echo "done syn_$split $(date +%T)"
done
for v in 1 2 3 4 5 6 7; do
  for kind in reasoning perception; do
    s="${kind}_v$v"
    [ -f "$DATA/$s/items.jsonl" ] || "$PY" "$ROOT/evals/unseen/build.py" --set "$s" --out "$DATA/$s" >/dev/null
    "$AM" bench run --task items --source "$DATA/$s/items.jsonl" --out "$RUNS/$s" --workers "$W" >/dev/null
    echo "done $s $(date +%T)"
  done
done
