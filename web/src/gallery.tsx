// The experiments gallery: one click runs an experiment's hook program on the loaded model; its
// code and prompt stay editable for the next run, and the answer, the hook console and the plots
// show what it did.
import { useState } from "preact/hooks";
import { Answer } from "./answer.js";
import { CodeEditor } from "./editor.js";
import {
  EXPERIMENTS,
  EXPERIMENT_MAX_TOKENS,
  EXPERIMENT_PROMPT,
  type Experiment,
} from "./experiments.js";
import { Generation } from "./generation.js";
import { HookConsole } from "./hook-console.js";
import { Plots } from "./plots.js";
import { useGeneration } from "./use-generation.js";

const CATEGORIES = [...new Set(EXPERIMENTS.map((e) => e.category))];

export function Gallery({ model }: { model: string | null }) {
  const [chosen, setChosen] = useState<Experiment | null>(null);
  const [code, setCode] = useState("");
  const [prompt, setPrompt] = useState(EXPERIMENT_PROMPT);
  const [generation, setGeneration] = useState<Generation | null>(null);
  useGeneration(generation);
  const busy = generation?.phase === "streaming";

  const run = (source: string, question: string) => {
    if (!model) return;
    generation?.stop();
    const next = new Generation(model, {
      messages: [{ role: "user", content: question }],
      maxTokens: EXPERIMENT_MAX_TOKENS,
      temperature: 0,
      hook: source,
    });
    setGeneration(next);
    void next.run();
  };

  const pick = (experiment: Experiment) => {
    setChosen(experiment);
    setCode(experiment.code);
    run(experiment.code, prompt);
    // The experiment's code and answer sit above the gallery: bring them into view.
    requestAnimationFrame(() =>
      document.getElementById("experiment-title")?.scrollIntoView({ block: "nearest" }),
    );
  };

  return (
    <div class="workspace">
      <section class="main-column" aria-label="Experiments">
        {chosen && (
          <form
            class="experiment"
            onSubmit={(e) => {
              e.preventDefault();
              run(code, prompt);
            }}
          >
            <h2 id="experiment-title">{chosen.title}</h2>
            <label for="experiment-prompt">Prompt</label>
            <input
              id="experiment-prompt"
              value={prompt}
              onInput={(e) => setPrompt(e.currentTarget.value)}
            />
            <CodeEditor
              id="experiment-code"
              label="Hook program (C, sent as ruffian.hook)"
              value={code}
              onChange={setCode}
            />
            <div class="buttons">
              <button type="submit" disabled={!model}>
                Run again
              </button>
              <button type="button" onClick={() => generation?.stop()} disabled={!busy}>
                Stop
              </button>
              <button type="button" onClick={() => setCode(chosen.code)}>
                Reset code
              </button>
            </div>
          </form>
        )}
        {generation && (
          <section class="turn assistant" aria-label="Experiment answer">
            <span class="who">Ruffian</span>
            <Answer generation={generation} label="experiment answer" />
          </section>
        )}
        <div class="gallery">
          {CATEGORIES.map((category) => (
            <section key={category} class="category" aria-label={category}>
              <h2>{category}</h2>
              <ul>
                {EXPERIMENTS.filter((e) => e.category === category).map((experiment) => (
                  <li key={experiment.id}>
                    <button
                      type="button"
                      class={chosen?.id === experiment.id ? "card chosen" : "card"}
                      aria-pressed={chosen?.id === experiment.id}
                      data-experiment={experiment.id}
                      disabled={!model}
                      onClick={() => pick(experiment)}
                    >
                      <strong>{experiment.title}</strong>
                      <span>{experiment.summary}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      </section>
      <aside class="side-column" aria-label="Live state of the experiment">
        <HookConsole generation={generation} />
        <Plots generation={generation} />
      </aside>
    </div>
  );
}
