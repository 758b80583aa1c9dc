# Trains ruffian-nano, a small llama-architecture transformer, from scratch on CPU, and exports its
# weights (GGUF names, PyTorch layout) for src/nano/export.ts to turn into a GGUF file.
#
# Usage: python3 training/train.py --data training/data/train-vm.jsonl --out training/out/vm \
#          --steps 3000 --seed 1
# The recipe is fixed by the arguments and the seed; see training/README.md.
import argparse
import json
import math
import os
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="JSONL with prompt/completion pairs")
    p.add_argument("--vocab", default="training/data/vocab.json")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=48)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ff", type=int, default=384)
    p.add_argument("--ctx", type=int, default=384)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    p.add_argument("--parity-prompts", default="", help="JSONL of prompts for the parity reference")
    p.add_argument("--init", default="", help="start from the weights in this output directory")
    p.add_argument("--checkpoint-every", type=int, default=0, help="save weights every N steps")
    p.add_argument("--minutes", type=float, default=0, help="stop early after this many minutes")
    p.add_argument("--device", default="cpu", help="torch device: cpu (the recipe's default) or cuda")
    return p.parse_args()


class Tokenizer:
    """The same character map as src/nano/vocab.ts (exported to vocab.json)."""

    def __init__(self, path):
        with open(path) as f:
            v = json.load(f)
        self.tokens = v["tokens"]
        self.bos, self.eos = v["bos"], v["eos"]
        self.ids = {t: i for i, t in enumerate(self.tokens) if v["types"][i] == 1}
        self.space = v["space"]
        self.byte_base = v["byte_base"]

    def encode(self, text):
        out = []
        for ch in text:
            i = self.ids.get(self.space if ch == " " else ch)
            if i is not None:
                out.append(i)
            else:
                out.extend(self.byte_base + b for b in ch.encode("utf-8"))
        return out


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, ctx, base):
    # llama.cpp's LLAMA rope ("normal" mode) rotates adjacent pairs (x[2i], x[2i+1]).
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    ang = torch.outer(torch.arange(ctx).float(), inv)
    return torch.cos(ang), torch.sin(ang)


def apply_rope(x, cos, sin):
    # x: [B, T, H, D]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    out = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1)
    return out.flatten(-2)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads = a.heads
        self.hd = a.dim // a.heads
        self.attn_norm = RMSNorm(a.dim, 1e-5)
        self.q = nn.Linear(a.dim, a.dim, bias=False)
        self.k = nn.Linear(a.dim, a.dim, bias=False)
        self.v = nn.Linear(a.dim, a.dim, bias=False)
        self.o = nn.Linear(a.dim, a.dim, bias=False)
        self.ffn_norm = RMSNorm(a.dim, 1e-5)
        self.gate = nn.Linear(a.dim, a.ff, bias=False)
        self.up = nn.Linear(a.dim, a.ff, bias=False)
        self.down = nn.Linear(a.ff, a.dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        h = self.attn_norm(x)
        q = apply_rope(self.q(h).view(B, T, self.heads, self.hd), cos, sin)
        k = apply_rope(self.k(h).view(B, T, self.heads, self.hd), cos, sin)
        v = self.v(h).view(B, T, self.heads, self.hd)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.o(y.transpose(1, 2).reshape(B, T, C))
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, a, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.dim, 1e-5)
        self.out = nn.Linear(a.dim, vocab, bias=False)
        cos, sin = rope_tables(a.dim // a.heads, a.ctx, 10000.0)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)
        for b in self.blocks:  # scaled init of residual projections
            nn.init.normal_(b.o.weight, std=0.02 / math.sqrt(2 * a.layers))
            nn.init.normal_(b.down.weight, std=0.02 / math.sqrt(2 * a.layers))

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed(idx)
        for b in self.blocks:
            x = b(x, self.cos[:T], self.sin[:T])
        return self.out(self.norm(x))

    def gguf_weights(self):
        """(name, tensor) pairs in GGUF naming and PyTorch layout."""
        yield "token_embd.weight", self.embed.weight
        yield "output_norm.weight", self.norm.weight
        yield "output.weight", self.out.weight
        for i, b in enumerate(self.blocks):
            p = f"blk.{i}."
            yield p + "attn_norm.weight", b.attn_norm.weight
            yield p + "attn_q.weight", b.q.weight
            yield p + "attn_k.weight", b.k.weight
            yield p + "attn_v.weight", b.v.weight
            yield p + "attn_output.weight", b.o.weight
            yield p + "ffn_norm.weight", b.ffn_norm.weight
            yield p + "ffn_gate.weight", b.gate.weight
            yield p + "ffn_up.weight", b.up.weight
            yield p + "ffn_down.weight", b.down.weight


TOOL_CALL_CLOSE = "</tool_call>"


def load_examples(path, tok, ctx):
    seqs = []
    with open(path) as f:
        for line in f:
            ex = json.loads(line)
            p = [tok.bos] + tok.encode(ex["prompt"])
            completion = ex["completion"]
            # The runtime injects the VM's result, so the model never writes it: no loss on the
            # result and its closing bracket (the model is taught to read results, not to guess them).
            # " = VM[" itself stays in the loss, so with injection off the model still opens it.
            opener = " = VM["
            at = completion.find(opener)
            # Tool-calling style: the host renders the tool message after "</tool_call>" (see
            # src/nano/dataset.ts), so it carries no loss either; the call itself is trained.
            call_end = completion.find(TOOL_CALL_CLOSE)
            if call_end >= 0:
                call_end += len(TOOL_CALL_CLOSE)
                message = ex["injected"]
                if completion[call_end : call_end + len(message)] != message:
                    raise ValueError(f"tool message does not follow the call in {path}: {completion!r}")
                head = tok.encode(completion[:call_end])
                injected = tok.encode(message)
                tail = tok.encode(completion[call_end + len(message) :]) + [tok.eos]
                c = head + injected + tail
                cmask = [1] * len(head) + [0] * len(injected) + [1] * len(tail)
            elif at >= 0:
                head = tok.encode(completion[: at + len(opener)])
                close = completion.index("]", at) + 1
                injected = tok.encode(completion[at + len(opener) : close])
                tail = tok.encode(completion[close:]) + [tok.eos]
                c = head + injected + tail
                cmask = [1] * len(head) + [0] * len(injected) + [1] * len(tail)
            else:
                c = tok.encode(completion) + [tok.eos]
                cmask = [1] * len(c)
            ids = (p + c)[:ctx]
            # Loss only on what the model writes (the completion, EOS included).
            mask = ([0] * len(p) + cmask)[:ctx]
            seqs.append((ids, mask))
    return seqs


def batches(seqs, batch, rng):
    # Batches of similar length: each pool of 64 batches is sorted by length before it is cut, so
    # little compute goes to padding; the order of batches is shuffled again afterwards.
    order = list(range(len(seqs)))
    pool = batch * 64
    while True:
        rng.shuffle(order)
        cut = []
        for p in range(0, len(order), pool):
            group = sorted(order[p : p + pool], key=lambda j: len(seqs[j][0]))
            cut.extend(group[i : i + batch] for i in range(0, len(group) - batch + 1, batch))
        rng.shuffle(cut)
        for idxs in cut:
            chunk = [seqs[j] for j in idxs]
            T = max(len(s[0]) for s in chunk)
            x = torch.zeros(batch, T, dtype=torch.long)
            y = torch.full((batch, T), -100, dtype=torch.long)
            for r, (ids, mask) in enumerate(chunk):
                n = len(ids)
                x[r, :n] = torch.tensor(ids)
                tgt = [ids[t + 1] if mask[t + 1] else -100 for t in range(n - 1)]
                y[r, : n - 1] = torch.tensor(tgt)
            yield x, y


@torch.no_grad()
def greedy(model, ids, max_new, eos):
    ids = list(ids)
    out = []
    device = next(model.parameters()).device
    for _ in range(max_new):
        logits = model(torch.tensor([ids], device=device))[0, -1]
        t = int(torch.argmax(logits))
        if t == eos:
            break
        out.append(t)
        ids.append(t)
    return out


def load_weights(model, out):
    """Loads weights written by save_weights (the GGUF names map onto the model's parameters)."""
    import numpy as np

    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(out, "weights.bin"), "rb") as f:
        blob = f.read()
    params = dict(model.gguf_weights())
    with torch.no_grad():
        for t in manifest["tensors"]:
            n = math.prod(t["shape"])
            data = np.frombuffer(blob, dtype="<f4", count=n, offset=t["offset"]).reshape(t["shape"])
            params[t["name"]].copy_(torch.from_numpy(data.copy()))


def save_weights(model, a, out, n_vocab, training):
    """Writes one little-endian f32 blob plus a manifest of names, shapes and offsets."""
    os.makedirs(out, exist_ok=True)
    manifest = {
        "config": {
            "nVocab": n_vocab, "nEmbd": a.dim, "nLayer": a.layers, "nHead": a.heads,
            "nHeadKv": a.heads, "nFf": a.ff, "nCtx": a.ctx, "rmsEps": 1e-5, "ropeBase": 10000.0,
        },
        "tensors": [],
        "training": training,
    }
    offset = 0
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        for name, t in model.gguf_weights():
            data = t.detach().float().cpu().contiguous().numpy().tobytes()
            f.write(data)
            manifest["tensors"].append({"name": name, "shape": list(t.shape), "offset": offset})
            offset += len(data)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def main():
    a = parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(a.threads or os.cpu_count())
    tok = Tokenizer(a.vocab)
    seqs = load_examples(a.data, tok, a.ctx)
    model = Llama(a, len(tok.tokens))
    if a.init:
        load_weights(model, a.init)
    # The same recipe runs on a GPU when one is lent: the batches and the seed are the same, only the
    # floating-point order of the kernels differs.
    model.to(a.device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"examples {len(seqs)}  params {n_params}  threads {torch.get_num_threads()}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    start = time.time()
    log = []
    it = batches(seqs, a.batch, rng)
    step = 0
    for step in range(1, a.steps + 1):
        # Cosine decay over whichever budget runs out first: steps, or minutes when given.
        progress = step / a.steps
        if a.minutes:
            progress = max(progress, (time.time() - start) / (a.minutes * 60))
        progress = min(progress, 1.0)
        lr = a.lr * min(1.0, step / a.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = next(it)
        x, y = x.to(a.device, non_blocking=True), y.to(a.device, non_blocking=True)
        loss = F.cross_entropy(model(x).view(-1, len(tok.tokens)), y.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == 1:
            el = time.time() - start
            log.append({"step": step, "loss": round(loss.item(), 4), "seconds": round(el, 1)})
            print(f"step {step}  loss {loss.item():.4f}  lr {lr:.2e}  {el:.0f}s", flush=True)
        if a.checkpoint_every and step % a.checkpoint_every == 0:
            # Intermediate weights, so a long run can be evaluated while it trains.
            save_weights(model, a, os.path.join(a.out, "checkpoint"), len(tok.tokens), {"steps": step})
        if a.minutes and progress >= 1.0:
            print(f"time budget reached at step {step}", flush=True)
            break
    elapsed = time.time() - start
    model.eval()
    training = {
        "data": a.data, "init": a.init or None, "examples": len(seqs), "steps": step, "batch": a.batch, "lr": a.lr,
        "dim": a.dim, "layers": a.layers, "heads": a.heads, "ff": a.ff,
        "seed": a.seed, "params": n_params, "seconds": round(elapsed, 1),
        "threads": torch.get_num_threads(), "final_loss": log[-1]["loss"] if log else None,
        "torch": torch.__version__, "device": a.device, "log": log,
    }
    save_weights(model, a, a.out, len(tok.tokens), training)
    if a.parity_prompts:
        ref = []
        with open(a.parity_prompts) as f:
            for line in f:
                prompt = json.loads(line)["prompt"]
                ids = [tok.bos] + tok.encode(prompt)
                ref.append({"prompt": prompt, "tokens": greedy(model, ids, 48, tok.eos)})
        with open(os.path.join(a.out, "parity.json"), "w") as f:
            json.dump(ref, f)
    print(f"done: {step} steps in {elapsed:.0f}s, weights in {a.out}", flush=True)


if __name__ == "__main__":
    main()
