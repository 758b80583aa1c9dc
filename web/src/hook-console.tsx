// The hook console: every line a hook program printed (and every hook failure), each with the
// decode step and the sequence it ran for. These lines never enter the answer's text.
import { useEffect, useRef } from "preact/hooks";
import type { Generation } from "./generation.js";
import { useGeneration } from "./use-generation.js";

export function HookConsole({ generation }: { generation: Generation | null }) {
  useGeneration(generation);
  const list = useRef<HTMLOListElement>(null);
  const lines = generation?.hookLines ?? [];
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines.length]);
  return (
    <section class="panel hook-console" aria-labelledby="hook-console-title">
      <h2 id="hook-console-title">
        Hook console <span class="count">{lines.length} lines</span>
      </h2>
      {lines.length === 0 ? (
        <p class="empty">What hook programs print appears here, one line per call.</p>
      ) : (
        <ol ref={list} class="hook-lines" tabIndex={0} aria-label="hook output">
          {lines.map((line, i) => (
            <li key={i} class={line.error ? "hook-line hook-error" : "hook-line"}>
              <span class="hook-step">step {line.step}</span>
              <span class="hook-seq">seq {line.seq}</span>
              {line.hook && <span class="hook-name">{line.hook}</span>}
              <span class="hook-text">{line.text}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
