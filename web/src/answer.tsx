// An answer as it streams: regions, injected results and VM errors styled apart, the text a
// rewind erased going away backwards, its memo kept as a footnote. Every sampled token can be
// hovered, or focused (Tab into the answer, then the arrow keys), to show its top alternatives.
import { useState } from "preact/hooks";
import type { Generation } from "./generation.js";
import { spansOf } from "./transcript.js";
import type { TokenInfo } from "./protocol.js";
import { useGeneration } from "./use-generation.js";

const STYLE_LABEL = { region: "code region", result: "VM result", "vm-error": "VM error" } as const;

function shown(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function Alternatives({ token, id }: { token: TokenInfo; id: string }) {
  return (
    <div class="token-tip" role="tooltip" id={id}>
      <div class="token-tip-head">
        <code>{shown(token.text)}</code> p={token.probability.toFixed(3)} · H=
        {token.entropy.toFixed(2)} nats
        {token.entropyEstimated ? " (from top " + token.alternatives.length + ")" : ""}
      </div>
      <ol>
        {token.alternatives.map((alt) => (
          <li key={alt.token}>
            <code>{shown(alt.token)}</code>
            <span class="bar" style={{ width: `${Math.round(alt.probability * 100)}%` }} />
            <span>{(alt.probability * 100).toFixed(1)}%</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

export function Answer({ generation, label }: { generation: Generation; label: string }) {
  useGeneration(generation);
  const [active, setActive] = useState<number | null>(null);
  const [focusIndex, setFocusIndex] = useState(0);
  const pieces = generation.pieces;
  const erasing = generation.erasing;
  const visible = erasing ? pieces.slice(0, erasing.at) : pieces;
  const spans = spansOf(visible);
  const sampled = visible.map((p, i) => (p.token ? i : -1)).filter((i) => i >= 0);
  const tipId = `tip-${generation.startedAt.toFixed(0)}`;

  const move = (event: KeyboardEvent) => {
    const keys: Record<string, number> = {
      ArrowRight: 1,
      ArrowDown: 1,
      ArrowLeft: -1,
      ArrowUp: -1,
    };
    if (event.key === "Escape") setActive(null);
    const delta = keys[event.key];
    if (delta === undefined || sampled.length === 0) return;
    event.preventDefault();
    const at = sampled.indexOf(active ?? sampled[focusIndex] ?? sampled[0]!);
    const next = sampled[Math.max(0, Math.min(sampled.length - 1, at + delta))]!;
    setFocusIndex(sampled.indexOf(next));
    setActive(next);
    const el = (event.currentTarget as HTMLElement).querySelector<HTMLElement>(
      `[data-piece="${next}"]`,
    );
    el?.focus();
  };
  const rover = sampled[Math.min(focusIndex, sampled.length - 1)];
  const activeToken = active !== null ? (visible[active]?.token ?? null) : null;

  return (
    <div class="answer-wrap">
      <div
        class="answer"
        role="group"
        aria-label={`${label}: use the arrow keys on a token to see its alternatives`}
        onKeyDown={move}
        data-phase={generation.phase}
      >
        {spans.map((span, i) => {
          const token = visible[span.piece]!.token;
          const cls = `seg ${span.style}${token ? " tok" : ""}${active === span.piece ? " active" : ""}`;
          const title = span.style === "plain" ? undefined : STYLE_LABEL[span.style];
          if (!token)
            return (
              <span key={i} class={cls} data-style={span.style} title={title}>
                {span.text}
              </span>
            );
          return (
            <span
              key={i}
              class={cls}
              data-style={span.style}
              data-piece={span.piece}
              tabIndex={span.piece === rover ? 0 : -1}
              aria-describedby={active === span.piece ? tipId : undefined}
              onMouseEnter={() => setActive(span.piece)}
              onMouseLeave={() => setActive(null)}
              onFocus={() => setActive(span.piece)}
              onBlur={() => setActive(null)}
            >
              {span.text}
            </span>
          );
        })}
        {erasing && (
          <span class="seg erasing" aria-hidden="true">
            {erasing.text.slice(0, erasing.shown)}
          </span>
        )}
        {generation.phase === "streaming" && !erasing && <span class="cursor" aria-hidden="true" />}
      </div>
      {activeToken && <Alternatives token={activeToken} id={tipId} />}
      {generation.footnotes.length > 0 && (
        <ol class="footnotes" aria-label="rewinds">
          {generation.footnotes.map((note, i) => (
            <li key={i}>
              <span class="memo">[explored: "{note.memo}" → rewound]</span>
              {note.erased && (
                <details>
                  <summary>erased text</summary>
                  <s>{note.erased}</s>
                </details>
              )}
            </li>
          ))}
        </ol>
      )}
      {generation.error && (
        <p class="error" role="alert">
          {generation.error}
        </p>
      )}
    </div>
  );
}
