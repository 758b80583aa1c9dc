// The chat: a conversation with the loaded model, streamed token by token, with the hook
// console and the live plots of the latest answer beside it. Settings hold the system prompt
// (the built-in one, with a chosen number of worked examples, or your own), the token limit and
// the temperature.
import { useRef, useState } from "preact/hooks";
import {
  builtinSystemPrompt,
  DEFAULT_FEW_SHOT,
  WORKED_EXAMPLES,
} from "../../src/cli/chat/system-prompt.js";
import { Answer } from "./answer.js";
import { Generation, type ChatMessage } from "./generation.js";
import { HookConsole } from "./hook-console.js";
import { Plots } from "./plots.js";
import { useGeneration } from "./use-generation.js";

type Turn = { role: "user"; content: string } | { role: "assistant"; generation: Generation };

export interface ChatSettings {
  system: string;
  fewShot: number;
  maxTokens: number;
  temperature: number;
}

function Settings({
  settings,
  onChange,
}: {
  settings: ChatSettings;
  onChange: (next: ChatSettings) => void;
}) {
  const set = (patch: Partial<ChatSettings>) => onChange({ ...settings, ...patch });
  const builtin = settings.system === builtinSystemPrompt(settings.fewShot);
  return (
    <details class="settings">
      <summary>Settings: system prompt, examples, sampling</summary>
      <label for="system-prompt">System prompt (empty: none; ruffian-nano needs none)</label>
      <textarea
        id="system-prompt"
        rows={5}
        value={settings.system}
        onInput={(e) => set({ system: e.currentTarget.value })}
      />
      <div class="row">
        <label for="few-shot">Worked examples</label>
        <input
          id="few-shot"
          type="number"
          min={0}
          max={WORKED_EXAMPLES.length}
          value={settings.fewShot}
          onInput={(e) => {
            const fewShot = Math.max(
              0,
              Math.min(WORKED_EXAMPLES.length, Number(e.currentTarget.value) || 0),
            );
            set(builtin ? { fewShot, system: builtinSystemPrompt(fewShot) } : { fewShot });
          }}
        />
        <button
          type="button"
          onClick={() => set({ system: builtinSystemPrompt(settings.fewShot) })}
        >
          Use the built-in prompt
        </button>
        <button type="button" onClick={() => set({ system: "" })}>
          No system prompt
        </button>
      </div>
      <div class="row">
        <label for="max-tokens">Max tokens</label>
        <input
          id="max-tokens"
          type="number"
          min={1}
          max={4096}
          value={settings.maxTokens}
          onInput={(e) => set({ maxTokens: Math.max(1, Number(e.currentTarget.value) || 1) })}
        />
        <label for="temperature">Temperature</label>
        <input
          id="temperature"
          type="number"
          min={0}
          max={2}
          step={0.1}
          value={settings.temperature}
          onInput={(e) => set({ temperature: Math.max(0, Number(e.currentTarget.value) || 0) })}
        />
      </div>
    </details>
  );
}

export const DEFAULT_SETTINGS: ChatSettings = {
  system: "",
  fewShot: DEFAULT_FEW_SHOT,
  maxTokens: 128,
  temperature: 0,
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function Status({ generation }: { generation: Generation }) {
  useGeneration(generation);
  const g = generation;
  const seconds = ((g.endedAt ?? performance.now()) - g.startedAt) / 1000;
  const parts = [`${g.tokens.length} tokens`];
  if (seconds > 0 && g.tokens.length > 0)
    parts.push(`${(g.tokens.length / seconds).toFixed(1)} tok/s`);
  if (g.regions.length) parts.push(plural(g.regions.length, "VM region"));
  if (g.footnotes.length) parts.push(plural(g.footnotes.length, "rewind"));
  if (g.phase === "streaming") parts.push("streaming…");
  else if (g.phase === "stopped") parts.push("stopped");
  else if (g.finishReason) parts.push(`finish: ${g.finishReason}`);
  return (
    <p class="status" aria-live="polite">
      {parts.join(" · ")}
    </p>
  );
}

export function Chat({ model }: { model: string | null }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState("");
  const [settings, setSettings] = useState(DEFAULT_SETTINGS);
  const input = useRef<HTMLTextAreaElement>(null);
  const last = turns.at(-1);
  const current = last?.role === "assistant" ? last.generation : null;
  useGeneration(current);
  const busy = current?.phase === "streaming";

  const send = () => {
    const text = draft.trim();
    if (!text || busy || !model) return;
    const history: ChatMessage[] = [];
    if (settings.system.trim()) history.push({ role: "system", content: settings.system });
    for (const turn of turns) {
      if (turn.role === "user") history.push({ role: "user", content: turn.content });
      else
        history.push({
          role: "assistant",
          content: turn.generation.pieces.map((p) => p.text).join(""),
        });
    }
    history.push({ role: "user", content: text });
    const generation = new Generation(model, {
      messages: history,
      maxTokens: settings.maxTokens,
      temperature: settings.temperature,
    });
    setTurns([...turns, { role: "user", content: text }, { role: "assistant", generation }]);
    setDraft("");
    void generation.run();
  };

  const newChat = () => {
    current?.stop();
    setTurns([]);
    input.current?.focus();
  };

  return (
    <div class="workspace">
      <section class="main-column" aria-label="Chat">
        <Settings settings={settings} onChange={setSettings} />
        <ol class="conversation" aria-label="conversation">
          {turns.length === 0 && (
            <li class="empty">
              Ask something that needs computing, e.g. <q>What is 4821 times 377?</q> Regions the
              model writes run in the VM and their results appear in the text.
            </li>
          )}
          {turns.map((turn, i) =>
            turn.role === "user" ? (
              <li key={i} class="turn user">
                <span class="who">You</span>
                <p>{turn.content}</p>
              </li>
            ) : (
              <li key={i} class="turn assistant">
                <span class="who">Ruffian</span>
                <Answer generation={turn.generation} label="answer" />
                <Status generation={turn.generation} />
              </li>
            ),
          )}
        </ol>
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            send();
          }}
        >
          <label for="message" class="visually-hidden">
            Message
          </label>
          <textarea
            id="message"
            ref={input}
            rows={2}
            placeholder="Message (Enter sends, Shift+Enter for a new line, Esc stops)"
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                send();
              }
              if (e.key === "Escape") current?.stop();
            }}
          />
          <div class="buttons">
            <button type="submit" disabled={busy || !model || !draft.trim()}>
              Send
            </button>
            <button type="button" onClick={() => current?.stop()} disabled={!busy}>
              Stop
            </button>
            <button type="button" onClick={newChat}>
              New chat
            </button>
          </div>
        </form>
      </section>
      <aside class="side-column" aria-label="Live state of the latest answer">
        <HookConsole generation={current} />
        <Plots generation={current} />
      </aside>
    </div>
  );
}
