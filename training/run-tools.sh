#!/usr/bin/env bash
# ruffian-nano-tools: the same size, recipe, seeds and number of steps as ruffian-nano, on the same
# dialogues with the region replaced by a tool call and the result delivered as a tool message
# (src/nano/dataset.ts, style "tools"). Not part of CI; needs `pip install torch` (CPU).
# RETRAIN_ALL=1 also retrains ruffian-nano and ruffian-nano-direct on this session's data, so all
# three models of `ruffian eval --compare` saw exactly the same questions (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export STEPS=${STEPS:-5500}  # stage 1; stage 2 adds 1,000
export THREADS=${THREADS:-$(nproc)}
STYLES=tools
if [ "${RETRAIN_ALL:-0}" = 1 ]; then STYLES=vm,direct,tools; fi
npm run build
# The same draws (seeds 1 and 4) as run.sh: every style of one draw shares its question and result.
node dist/src/nano/generate.js --split train --styles vm,direct,tools --count 80000 --seed 1 \
  --dir training/data
node dist/src/nano/generate.js --split train --styles vm,direct,tools --count 32000 --seed 4 \
  --answers plain --dir training/data
node dist/src/nano/generate.js --split eval --styles vm,direct,tools --count 800 --seed 2 --dir training/data
# Parity references, one prompt per task. For tools the call is the "region" and the tool
# message the "injection" that parity.py appends before the model goes on.
python3 - <<'PY'
import json
for style, dest in (("vm", "parity-prompts.jsonl"), ("tools", "parity-prompts-tools.jsonl")):
    seen, out = set(), []
    for line in open(f"training/data/eval-{style}.jsonl"):
        e = json.loads(line)
        if e["task"] in seen:
            continue
        seen.add(e["task"])
        code = e["code"]
        if style == "tools":
            code = e["completion"][1 : e["completion"].index("</tool_call>") + len("</tool_call>")]
        out.append({"prompt": e["prompt"], "code": code, "injected": e["injected"]})
    open(f"training/data/{dest}", "w").write("".join(json.dumps(o) + "\n" for o in out))
PY
for style in ${STYLES//,/ }; do
  training/train-style.sh "$style"
done
node dist/src/nano/export.js training/out/tools models/ruffian-nano-tools.gguf
python3 training/parity.py training/out/tools training/data/parity-prompts-tools.jsonl \
  models/ruffian-nano-tools.parity.json
if [ "${RETRAIN_ALL:-0}" = 1 ]; then
  node dist/src/nano/export.js training/out/vm models/ruffian-nano.gguf
  node dist/src/nano/export.js training/out/direct models/ruffian-nano-direct.gguf
  python3 training/parity.py training/out/vm training/data/parity-prompts.jsonl \
    models/ruffian-nano.parity.json
fi
# The three-mode comparison of docs/evidence.md.
node bin/ruffian.js eval --compare --limit 160 --plot docs/evidence-compare.svg \
  --json training/out/compare.json
