#!/usr/bin/env bash
# Trains one answer style of ruffian-nano through both stages of the recipe (training/README.md):
# 5,500 steps (STEPS) on training/data/train-STYLE.jsonl, then 1,000 steps from those weights on
# the plain-answer draws. Writes training/out/STYLE. Used by run.sh and run-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
style=$1
STEPS=${STEPS:-5500}
THREADS=${THREADS:-$(nproc)}
DEVICE=${DEVICE:-cpu}  # cuda trains the same recipe on a GPU
python3 training/train.py --data training/data/train-$style.jsonl --vocab training/data/vocab.json \
  --out training/out/$style-stage1 --steps "$STEPS" --batch 32 --ctx 256 --seed 1 \
  --threads "$THREADS" --device "$DEVICE" --checkpoint-every 1000
# Stage 2: 1,000 steps from the stage-1 weights on answers that restate no question number.
python3 training/train.py --init training/out/$style-stage1 \
  --data training/data/train-plain-$style.jsonl --vocab training/data/vocab.json \
  --out training/out/$style --steps 1000 --lr 5e-4 --warmup 50 --batch 32 --ctx 256 --seed 2 \
  --threads "$THREADS" --device "$DEVICE"
