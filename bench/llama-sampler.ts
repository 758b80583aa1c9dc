// llama.cpp's own sampler chain (llama_sampler_*), called through koffi on the library the engine
// loads: the peer of Ruffian's TypeScript sampler in bench/sampler.ts. Each step refills a
// llama_token_data array from the logits (as llama_sampler_sample does) and applies the chain.
import koffi from "koffi";
import { loadLlamaLibrary } from "../src/engine/llama/library.js";
import type { SamplerOptions } from "../src/decode/sampler.js";

/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = (...args: any[]) => any;

interface ChainApi {
  chainParams: Fn;
  chainInit: Fn;
  chainAdd: Fn;
  greedy: Fn;
  dist: Fn;
  topK: Fn;
  topP: Fn;
  minP: Fn;
  temp: Fn;
  apply: Fn;
  free: Fn;
}

let api: ChainApi | undefined;

async function chainApi(): Promise<ChainApi> {
  if (api) return api;
  const lib = (await loadLlamaLibrary("cpu")).handle;
  koffi.struct("ruffian_sampler_chain_params", { no_perf: "bool" });
  koffi.struct("ruffian_token_data_array", {
    data: "void *",
    size: "size_t",
    selected: "int64_t",
    sorted: "bool",
  });
  const f = (proto: string) => lib.func(proto) as Fn;
  api = {
    chainParams: f("ruffian_sampler_chain_params llama_sampler_chain_default_params()"),
    chainInit: f("void *llama_sampler_chain_init(ruffian_sampler_chain_params params)"),
    chainAdd: f("void llama_sampler_chain_add(void *chain, void *smpl)"),
    greedy: f("void *llama_sampler_init_greedy()"),
    dist: f("void *llama_sampler_init_dist(uint32_t seed)"),
    topK: f("void *llama_sampler_init_top_k(int32_t k)"),
    topP: f("void *llama_sampler_init_top_p(float p, size_t min_keep)"),
    minP: f("void *llama_sampler_init_min_p(float p, size_t min_keep)"),
    temp: f("void *llama_sampler_init_temp(float t)"),
    apply: f("void llama_sampler_apply(void *smpl, _Inout_ ruffian_token_data_array *cur)"),
    free: f("void llama_sampler_free(void *smpl)"),
  };
  return api;
}

export interface LlamaChain {
  /** One sampling step over `logits` (the same every call); returns the chosen token id. */
  sample(): number;
  dispose(): void;
}

/** A chain equivalent to the options, or undefined when llama.cpp has no such stage here
 * (repetition penalty: its signature differs between llama.cpp releases). */
export async function llamaChain(
  logits: Float32Array,
  o: SamplerOptions,
): Promise<LlamaChain | undefined> {
  if ((o.repetitionPenalty ?? 1) !== 1) return undefined;
  const a = await chainApi();
  const chain = a.chainInit(a.chainParams());
  const t = o.temperature ?? 1;
  if (t <= 0) a.chainAdd(chain, a.greedy());
  else {
    if (o.topK) a.chainAdd(chain, a.topK(o.topK));
    if (o.topP !== undefined && o.topP < 1) a.chainAdd(chain, a.topP(o.topP, 1));
    if (o.minP) a.chainAdd(chain, a.minP(o.minP, 1));
    a.chainAdd(chain, a.temp(t));
    a.chainAdd(chain, a.dist(o.seed ?? 0));
  }
  // llama_token_data {int32 id; float logit; float p} per token, in native memory.
  const n = logits.length;
  const data = koffi.alloc("uint8_t", n * 12);
  const view = new DataView(koffi.view(data, n * 12));
  const pristine = new Uint8Array(n * 12);
  const pv = new DataView(pristine.buffer);
  for (let i = 0; i < n; i++) {
    pv.setInt32(12 * i, i, true);
    pv.setFloat32(12 * i + 4, logits[i]!, true);
  }
  const bytes = new Uint8Array(view.buffer);
  return {
    sample() {
      bytes.set(pristine);
      const cur = { data, size: n, selected: -1, sorted: false };
      a.apply(chain, cur);
      const base = cur.data === data ? view : new DataView(koffi.view(cur.data, n * 12));
      return base.getInt32(12 * Number(cur.selected), true);
    },
    dispose() {
      a.free(chain);
      koffi.free(data);
    },
  };
}
