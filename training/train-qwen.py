# Trains ruffian-nano-qwen: ruffian-nano's recipe on Qwen2's real tokenizer in ChatML, as a qwen2-
# architecture transformer (q/k/v biases, grouped-query attention, NEOX rotary embeddings, tied
# embeddings). The data comes pre-tokenized by llama.cpp (src/nano/chatml-tokens.ts), so training sees
# exactly the tokens the in-band runtime will. Training runs over the tokens the data uses (a compact
# vocabulary, --token-set); src/nano/export-qwen.ts expands it to Qwen2's 151,936 rows with an
# output bias that keeps every other token from ever winning.
#
# Usage: python3 training/train-qwen.py --data training/data/qwen-train-vm.jsonl \
#          --token-set training/data/qwen-token-set.json --out training/out/qwen --steps 4000
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ruffian-nano's training script: its RMSNorm, rope tables, batching and weight loading serve here too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train as nano  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="JSONL of {ids, mask} (Qwen2 token ids)")
    p.add_argument("--token-set", required=True, help="JSON: sorted list of the ids trained")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ff", type=int, default=384)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    p.add_argument("--init", default="", help="start from the weights in this output directory")
    p.add_argument("--checkpoint-every", type=int, default=0)
    p.add_argument("--minutes", type=float, default=0, help="stop early after this many minutes")
    p.add_argument("--device", default="cpu")
    return p.parse_args()


RMS_EPS = 1e-6
ROPE_BASE = 10000.0


def apply_rope_neox(x, cos, sin):
    # llama.cpp's NEOX rope (qwen2) rotates the pairs (x[i], x[i + d/2]).
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads = a.heads, a.kv_heads
        self.hd = a.dim // a.heads
        kv = self.kv_heads * self.hd
        self.attn_norm = nano.RMSNorm(a.dim, RMS_EPS)
        self.q = nn.Linear(a.dim, a.dim, bias=True)
        self.k = nn.Linear(a.dim, kv, bias=True)
        self.v = nn.Linear(a.dim, kv, bias=True)
        self.o = nn.Linear(a.dim, a.dim, bias=False)
        self.ffn_norm = nano.RMSNorm(a.dim, RMS_EPS)
        self.gate = nn.Linear(a.dim, a.ff, bias=False)
        self.up = nn.Linear(a.dim, a.ff, bias=False)
        self.down = nn.Linear(a.ff, a.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, C = x.shape
        h = self.attn_norm(x)
        q = apply_rope_neox(self.q(h).view(B, T, self.heads, self.hd), cos, sin)
        k = apply_rope_neox(self.k(h).view(B, T, self.kv_heads, self.hd), cos, sin)
        v = self.v(h).view(B, T, self.kv_heads, self.hd)
        # Query head h reads key/value head h // (heads / kv_heads), as ggml broadcasts them.
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=2)
        v = v.repeat_interleave(group, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd) + mask[:T, :T]
        y = torch.softmax(att, dim=-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(B, T, C))
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Qwen2(nn.Module):
    def __init__(self, a, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = nano.RMSNorm(a.dim, RMS_EPS)
        cos, sin = nano.rope_tables(a.dim // a.heads, a.ctx, ROPE_BASE)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        mask = torch.full((a.ctx, a.ctx), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for b in self.blocks:
            nn.init.normal_(b.o.weight, std=0.02 / math.sqrt(2 * a.layers))
            nn.init.normal_(b.down.weight, std=0.02 / math.sqrt(2 * a.layers))

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed(idx)
        for b in self.blocks:
            x = b(x, self.cos[:T], self.sin[:T], self.mask)
        # Tied embeddings: the output projection is the embedding matrix (llama.cpp does the same
        # when a qwen2 GGUF has no output.weight).
        return self.norm(x) @ self.embed.weight.t()

    def gguf_weights(self):
        """(name, tensor) pairs in GGUF naming and PyTorch layout, over the compact vocabulary."""
        yield "token_embd.weight", self.embed.weight
        yield "output_norm.weight", self.norm.weight
        for i, b in enumerate(self.blocks):
            p = f"blk.{i}."
            yield p + "attn_norm.weight", b.attn_norm.weight
            yield p + "attn_q.weight", b.q.weight
            yield p + "attn_k.weight", b.k.weight
            yield p + "attn_v.weight", b.v.weight
            yield p + "attn_q.bias", b.q.bias
            yield p + "attn_k.bias", b.k.bias
            yield p + "attn_v.bias", b.v.bias
            yield p + "attn_output.weight", b.o.weight
            yield p + "ffn_norm.weight", b.ffn_norm.weight
            yield p + "ffn_gate.weight", b.gate.weight
            yield p + "ffn_up.weight", b.up.weight
            yield p + "ffn_down.weight", b.down.weight


def load_examples(path, index, ctx):
    seqs = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            ex = json.loads(line)
            ids = [index[t] for t in ex["ids"]][:ctx]
            seqs.append((ids, ex["mask"][:ctx]))
    return seqs


def save_weights(model, a, out, tokens, training):
    os.makedirs(out, exist_ok=True)
    manifest = {
        "config": {
            "nVocab": len(tokens), "nEmbd": a.dim, "nLayer": a.layers, "nHead": a.heads,
            "nHeadKv": a.kv_heads, "nFf": a.ff, "nCtx": a.ctx, "rmsEps": RMS_EPS, "ropeBase": ROPE_BASE,
        },
        "tokens": tokens,
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
        json.dump(manifest, f)


def main():
    a = parse_args()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(a.threads or os.cpu_count())
    with open(a.token_set) as f:
        tokens = json.load(f)
    index = {t: i for i, t in enumerate(tokens)}
    seqs = load_examples(a.data, index, a.ctx)
    model = Qwen2(a, len(tokens))
    if a.init:
        nano.load_weights(model, a.init)
        with open(os.path.join(a.init, "manifest.json")) as f:
            trained_over = json.load(f)["tokens"]
        if trained_over != tokens:
            raise SystemExit("--init weights were trained over another token set")
    model.to(a.device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"examples {len(seqs)}  compact vocab {len(tokens)}  params {n_params}  "
          f"threads {torch.get_num_threads()}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    start = time.time()
    log = []
    it = nano.batches(seqs, a.batch, rng)
    step = 0
    for step in range(1, a.steps + 1):
        progress = step / a.steps
        if a.minutes:
            progress = max(progress, (time.time() - start) / (a.minutes * 60))
        progress = min(progress, 1.0)
        lr = a.lr * min(1.0, step / a.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = next(it)
        x, y = x.to(a.device), y.to(a.device)
        loss = F.cross_entropy(model(x).view(-1, len(tokens)), y.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == 1:
            el = time.time() - start
            log.append({"step": step, "loss": round(loss.item(), 4), "seconds": round(el, 1)})
            print(f"step {step}  loss {loss.item():.4f}  lr {lr:.2e}  {el:.0f}s", flush=True)
        if a.checkpoint_every and step % a.checkpoint_every == 0:
            save_weights(model, a, os.path.join(a.out, "checkpoint"), tokens, {"steps": step})
        if a.minutes and progress >= 1.0:
            print(f"time budget reached at step {step}", flush=True)
            break
    save_weights(model, a, a.out, tokens, {
        "steps": step, "seconds": round(time.time() - start, 1), "seed": a.seed, "lr": a.lr,
        "batch": a.batch, "data": a.data, "log": log, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "device": a.device,
    })
    print(f"saved {a.out}", flush=True)


if __name__ == "__main__":
    main()
