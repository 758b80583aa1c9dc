# Records ruffian-nano's greedy answers in PyTorch from the exported weights (the same weights.bin
# the GGUF is made from), so test/nano/parity.test.ts can check llama.cpp writes the same tokens.
# Like the runtime, when the model has written the expected region the VM's result is appended and
# the model goes on, so the final sentence is compared too.
# Usage: python3 training/parity.py training/out/vm training/data/parity-prompts.jsonl OUT.json
import json
import sys
from types import SimpleNamespace


sys.path.insert(0, __import__("os").path.dirname(__file__))
from train import Llama, Tokenizer, greedy, load_weights  # noqa: E402

MAX_TOKENS = 200


def main():
    out_dir, prompts_path, dest = sys.argv[1:4]
    vocab = sys.argv[4] if len(sys.argv) > 4 else "training/data/vocab.json"
    manifest = json.load(open(f"{out_dir}/manifest.json"))
    c = manifest["config"]
    args = SimpleNamespace(dim=c["nEmbd"], layers=c["nLayer"], heads=c["nHead"], ff=c["nFf"], ctx=c["nCtx"])
    model = Llama(args, c["nVocab"])
    load_weights(model, out_dir)
    model.eval()
    tok = Tokenizer(vocab)
    refs = []
    for line in open(prompts_path):
        p = json.loads(line)
        ids = [tok.bos] + tok.encode(p["prompt"])
        budget = min(MAX_TOKENS, c["nCtx"] - len(ids))
        ref = {"prompt": p["prompt"], "max": budget}
        region = tok.encode(" " + p["code"]) if "code" in p else None
        out = greedy(model, ids, budget, tok.eos)
        if region is not None and out[: len(region)] == region:
            # In-band the runtime injects here: continue after the injected result.
            injected = tok.encode(p["injected"])
            head = region + injected
            rest = greedy(model, ids + head, budget - len(head), tok.eos)
            out = head + rest
            ref["injectedAt"] = len(region)
            ref["injected"] = p["injected"]
        ref["tokens"] = out
        refs.append(ref)
    json.dump(refs, open(dest, "w"))
    print(f"wrote {len(refs)} references to {dest}")


if __name__ == "__main__":
    main()
