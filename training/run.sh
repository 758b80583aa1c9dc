#!/usr/bin/env bash
# The whole ruffian-nano recipe: data → training (VM model and direct-answer baseline) → GGUF →
# parity references → evaluation. Not part of CI; needs `pip install torch` (CPU). Seeds fix every
# random choice; both models train for the same number of steps.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${STEPS:-5500}
THREADS=${THREADS:-$(nproc)}
npm run build
node dist/src/nano/generate.js --split train --styles vm,direct --count 80000 --seed 1 --dir training/data
node dist/src/nano/generate.js --split eval --styles vm,direct --count 800 --seed 2 --dir training/data \
  --questions eval/nano-questions.jsonl
node dist/src/nano/generate.js --split eval --phrasings seen --styles vm --count 800 --seed 3 \
  --dir training/data --questions eval/nano-questions-seen-wording.jsonl
python3 - <<'PY'
import json
seen, out = set(), []
for line in open("training/data/eval-vm.jsonl"):
    e = json.loads(line)
    if e["task"] not in seen:
        seen.add(e["task"])
        out.append({"prompt": e["prompt"], "code": e["code"], "injected": e["injected"]})
open("training/data/parity-prompts.jsonl", "w").write("".join(json.dumps(o) + "\n" for o in out))
PY
for style in vm direct; do
  python3 training/train.py --data training/data/train-$style.jsonl --vocab training/data/vocab.json \
    --out training/out/$style --steps "$STEPS" --batch 32 --ctx 256 --seed 1 --threads "$THREADS" \
    --checkpoint-every 1000
done
node dist/src/nano/export.js training/out/vm models/ruffian-nano.gguf
node dist/src/nano/export.js training/out/direct models/ruffian-nano-direct.gguf
python3 training/parity.py training/out/vm training/data/parity-prompts.jsonl models/ruffian-nano.parity.json
# The two tables of docs/nano.md: (a) with the VM, (b) injection off, (c) the direct-answer model.
node bin/ruffian.js eval --table --json training/out/eval-held-out.json
node bin/ruffian.js eval --table --set eval/nano-questions-seen-wording.jsonl \
  --json training/out/eval-seen-wording.json
