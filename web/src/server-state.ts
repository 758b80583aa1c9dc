// What the page knows about the server: the loaded model (from /v1/models) and whether the
// server still answers (/health, polled), so a stopped server shows a message, never a blank page.
import { useEffect, useState } from "preact/hooks";
import { getJson, messageOf, UnreachableError } from "./api.js";

export interface ModelInfo {
  id: string;
  /** e.g. "944K parameters · 3.8 MB", from whatever the server reports. */
  detail: string;
}

interface ModelsResponse {
  data?: Array<Record<string, unknown>>;
}

const HEALTH_POLL_MS = 3000;

function compact(n: number): string {
  for (const [unit, size] of [
    ["G", 1e9],
    ["M", 1e6],
    ["K", 1e3],
  ] as const)
    if (n >= size) return `${(n / size).toFixed(n >= size * 10 ? 0 : 1)}${unit}`;
  return String(n);
}

/** Size facts from a model entry, wherever the server puts them (llama-server uses `meta`). */
function detailOf(entry: Record<string, unknown>): string {
  const sources = [entry, entry.meta, entry.ruffian].filter(
    (s): s is Record<string, unknown> => !!s && typeof s === "object",
  );
  const pick = (...keys: string[]) => {
    for (const s of sources)
      for (const k of keys) if (typeof s[k] === "number") return s[k] as number;
    return null;
  };
  const params = pick("parameters", "n_params", "params");
  const bytes = pick("size", "bytes", "sizeBytes", "fileBytes");
  const ctx = pick("slotContext", "contextSize", "n_ctx", "context", "ctx");
  const vocab = pick("vocabulary", "n_vocab");
  const parts: string[] = [];
  if (params !== null) parts.push(`${compact(params)} parameters`);
  if (bytes !== null) parts.push(`${(bytes / 1e6).toFixed(1)} MB`);
  if (vocab !== null) parts.push(`vocabulary ${vocab}`);
  if (ctx !== null) parts.push(`context ${ctx}`);
  return parts.join(" · ");
}

export interface ServerState {
  model: ModelInfo | null;
  /** Why the page cannot work right now (server unreachable, models failed), or null. */
  problem: string | null;
}

export function useServerState(): ServerState {
  const [model, setModel] = useState<ModelInfo | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    let timer = 0;
    const loadModel = async () => {
      try {
        const models = await getJson<ModelsResponse>("/v1/models");
        const entry = models.data?.[0];
        if (cancelled) return;
        if (entry && typeof entry.id === "string")
          setModel({ id: entry.id, detail: detailOf(entry) });
        else setProblem("The server lists no model.");
      } catch (error) {
        if (!cancelled) setProblem(messageOf(error));
      }
    };
    const poll = async () => {
      let up = true;
      try {
        await fetch("/health", { cache: "no-store" });
      } catch {
        up = false;
      }
      if (cancelled) return;
      if (!up) setProblem(new UnreachableError("/health").message);
      else
        setProblem((previous) => {
          // Back up: forget a connection problem and reload the model if it was never read.
          if (previous?.startsWith("Cannot reach")) {
            void loadModel();
            return null;
          }
          return previous;
        });
      timer = window.setTimeout(poll, HEALTH_POLL_MS);
    };
    void loadModel();
    timer = window.setTimeout(poll, HEALTH_POLL_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, []);

  return { model, problem };
}
