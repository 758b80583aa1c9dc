#!/usr/bin/env bash
# The ruffian-nano-qwen recipe: ruffian-nano's data and two stages, tokenized with Qwen2's real
# vocabulary in ChatML → training over the ids the data uses → GGUF over the full vocabulary →
# parity references → evaluation. Not part of CI; needs PyTorch for CPU (Debian: python3-torch and
# libopenblas0-pthread). Seeds fix every random choice.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-$(nproc)}
PY=${PYTHON:-python3}
npm run build
node dist/src/nano/generate.js --split train --styles vm --count 80000 --seed 1 --dir training/data
node dist/src/nano/generate.js --split train --styles vm --count 32000 --seed 4 --answers plain \
  --dir training/data
node dist/src/nano/chatml-tokens.js --in training/data/train-vm.jsonl \
  --out training/data/qwen-train-vm.jsonl --seed 1
node dist/src/nano/chatml-tokens.js --in training/data/train-plain-vm.jsonl \
  --out training/data/qwen-train-plain-vm.jsonl --seed 4
# The compact vocabulary: every id either stage uses.
"$PY" - <<'PY'
import json
ids = set()
for path in ("training/data/qwen-train-vm.jsonl", "training/data/qwen-train-plain-vm.jsonl"):
    for line in open(path):
        if line.strip():
            ids.update(json.loads(line)["ids"])
json.dump(sorted(ids), open("training/data/qwen-token-set.json", "w"))
print(f"{len(ids)} distinct ids")
PY
"$PY" training/train-qwen.py --data training/data/qwen-train-vm.jsonl \
  --token-set training/data/qwen-token-set.json --out training/out/qwen-vm-s1 --steps 5500 \
  --threads "$THREADS" --checkpoint-every 500
"$PY" training/train-qwen.py --data training/data/qwen-train-plain-vm.jsonl \
  --token-set training/data/qwen-token-set.json --out training/out/qwen-vm --init training/out/qwen-vm-s1 \
  --lr 5e-4 --warmup 50 --steps 1000 --threads "$THREADS"
node dist/src/nano/export-qwen.js training/out/qwen-vm models/ruffian-nano-qwen.gguf
node dist/src/nano/qwen-parity-prompts.js eval/nano-questions.jsonl training/data/qwen-parity-prompts.jsonl
"$PY" training/parity-qwen.py training/out/qwen-vm training/data/qwen-parity-prompts.jsonl \
  models/ruffian-nano-qwen.parity.json
node bin/ruffian.js eval --table --model models/ruffian-nano-qwen.gguf \
  --baseline models/ruffian-nano-direct.gguf --json training/out/qwen-eval-held-out.json
