#!/usr/bin/env bash
# The whole ruffian-nano recipe: data → training (VM model and direct-answer baseline) → GGUF →
# parity references → evaluation. Not part of CI; needs `pip install torch` (CPU). Seeds fix every
# random choice; both models train for the same number of steps.
set -euo pipefail
cd "$(dirname "$0")/.."
export STEPS=${STEPS:-5500}  # stage 1; stage 2 adds 1,000
export THREADS=${THREADS:-$(nproc)}
npm run build
node dist/src/nano/generate.js --split train --styles vm,direct --count 80000 --seed 1 --dir training/data
# Stage 2 data: new draws whose final sentences carry the result alone (no restated numbers).
node dist/src/nano/generate.js --split train --styles vm,direct --count 32000 --seed 4 --answers plain \
  --dir training/data
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
  training/train-style.sh "$style"
done
node dist/src/nano/export.js training/out/vm models/ruffian-nano.gguf
node dist/src/nano/export.js training/out/direct models/ruffian-nano-direct.gguf
python3 training/parity.py training/out/vm training/data/parity-prompts.jsonl models/ruffian-nano.parity.json
# The two tables of docs/nano.md: (a) with the VM, (b) injection off, (c) the direct-answer model.
node bin/ruffian.js eval --table --json training/out/eval-held-out.json
node bin/ruffian.js eval --table --set eval/nano-questions-seen-wording.jsonl \
  --json training/out/eval-seen-wording.json
