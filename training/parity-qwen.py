# Records ruffian-nano-qwen's greedy tokens in PyTorch from the exported weights, for
# test/nano/qwen-parity.test.ts. The embedding is rounded to f16 as the GGUF stores it; greedy runs
# over the compact vocabulary, which equals the full one because every other token's output bias is
# −100; a prompt token outside it (a word of a held-out wording) has the zero embedding the GGUF
# gives it, as one extra row that is never written. As in-band, when the model has written the expected region the runtime's injected ids are
# appended and the model goes on.
# Usage: python3 training/parity-qwen.py training/out/qwen-vm PROMPTS.jsonl OUT.json
import json
import os
import sys
from types import SimpleNamespace

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as nano  # noqa: E402
from importlib import import_module  # noqa: E402

qwen = import_module("train-qwen")
MAX_TOKENS = 120


def main():
    out_dir, prompts_path, dest = sys.argv[1:4]
    manifest = json.load(open(f"{out_dir}/manifest.json"))
    c, tokens = manifest["config"], manifest["tokens"]
    index = {t: i for i, t in enumerate(tokens)}
    args = SimpleNamespace(dim=c["nEmbd"], layers=c["nLayer"], heads=c["nHead"], kv_heads=c["nHeadKv"],
                           ff=c["nFf"], ctx=c["nCtx"])
    model = qwen.Qwen2(args, len(tokens))
    nano.load_weights(model, out_dir)
    unseen = len(tokens)
    with torch.no_grad():
        table = torch.cat([model.embed.weight.half().float(), torch.zeros(1, c["nEmbd"])])
        model.embed = torch.nn.Embedding.from_pretrained(table)
    model.eval()
    end = index[151645]  # <|im_end|>

    def greedy(ids, max_new):
        ids, out = list(ids), []
        for _ in range(max_new):
            t = int(torch.argmax(model(torch.tensor([ids]))[0, -1, :unseen]))
            if t == end:
                break
            out.append(t)
            ids.append(t)
        return out

    refs = []
    with torch.no_grad():
        for line in open(prompts_path):
            if not line.strip():
                continue
            p = json.loads(line)
            ids = [index.get(t, unseen) for t in p["prompt"]]
            region = [index[t] for t in p["region"]]
            budget = min(MAX_TOKENS, c["nCtx"] - len(ids))
            ref = {"question": p["question"], "prompt": p["prompt"], "injected": p["injected"], "max": budget}
            out = greedy(ids, len(region))
            if out == region:
                head = region + [index[t] for t in p["injected"]]
                out = head + greedy(ids + head, budget - len(head))
                ref["injectedAt"] = len(region)
            ref["tokens"] = [tokens[i] for i in out]
            refs.append(ref)
    json.dump(refs, open(dest, "w"))
    print(f"wrote {len(refs)} references to {dest}")


if __name__ == "__main__":
    main()
