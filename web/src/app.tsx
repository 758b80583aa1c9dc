// The page: a header with the model and the theme switch, a banner when the server cannot be
// used, and three tabs (chat, experiments, playground) that keep their state when switched.
import { useState } from "preact/hooks";
import { Chat } from "./chat.js";
import { Gallery } from "./gallery.js";
import { KeyDialog } from "./key-dialog.js";
import { Playground } from "./playground.js";
import { useServerState } from "./server-state.js";
import { applyTheme, initialTheme } from "./theme.js";

const TABS = [
  { id: "chat", label: "Chat" },
  { id: "experiments", label: "Experiments" },
  { id: "playground", label: "VM playground" },
] as const;
type TabId = (typeof TABS)[number]["id"];

export function App() {
  const server = useServerState();
  const [tab, setTab] = useState<TabId>("chat");
  const [theme, setTheme] = useState(() => {
    const t = initialTheme();
    applyTheme(t, false);
    return t;
  });
  const model = server.model?.id ?? null;

  const onTabKey = (event: KeyboardEvent) => {
    const at = TABS.findIndex((t) => t.id === tab);
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    event.preventDefault();
    const next = TABS[(at + step + TABS.length) % TABS.length]!;
    setTab(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };

  return (
    <>
      <header class="top">
        <h1>Ruffian</h1>
        <p class="model" aria-label="loaded model">
          {server.model ? (
            <>
              <strong>{server.model.id}</strong>
              {server.model.detail && <span> · {server.model.detail}</span>}
            </>
          ) : (
            "no model yet"
          )}
        </p>
        <button
          type="button"
          class="theme-toggle"
          aria-pressed={theme === "dark"}
          onClick={() => {
            const next = theme === "dark" ? "light" : "dark";
            applyTheme(next, true);
            setTheme(next);
          }}
        >
          Dark theme
        </button>
      </header>
      {server.problem && (
        <div class="banner" role="alert">
          {server.problem}
        </div>
      )}
      <nav class="tabs" role="tablist" aria-label="Views" onKeyDown={onTabKey}>
        {TABS.map((t) => (
          <button
            key={t.id}
            id={`tab-${t.id}`}
            type="button"
            role="tab"
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </nav>
      <main>
        <div id="panel-chat" role="tabpanel" aria-labelledby="tab-chat" hidden={tab !== "chat"}>
          <Chat model={model} />
        </div>
        <div
          id="panel-experiments"
          role="tabpanel"
          aria-labelledby="tab-experiments"
          hidden={tab !== "experiments"}
        >
          <Gallery model={model} />
        </div>
        <div
          id="panel-playground"
          role="tabpanel"
          aria-labelledby="tab-playground"
          hidden={tab !== "playground"}
        >
          <Playground />
        </div>
      </main>
      <KeyDialog />
    </>
  );
}
