// The VM playground: C, Lisp or CALC run through `POST /v1/exec` in a fresh sandbox. Shows the
// output, the returned value and the statistics; an error shows its kind and message, and its
// line:col is marked in the editor (the link puts the caret there).
import { useState } from "preact/hooks";
import { messageOf, postJson } from "./api.js";
import { CodeEditor, focusPosition, type Mark } from "./editor.js";

type Language = "c" | "lisp" | "calc";

const SAMPLES: Record<Language, string> = {
  c: `// Whatever main() prints is the output; its return value is the value.
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main() {
  for (int i = 0; i < 10; i++) printf("%d ", fib(i));
  return fib(20);
}
`,
  lisp: `(define (fact n) (if (< n 2) 1 (* n (fact (- n 1)))))
(fact 20)
`,
  calc: `847*293 + 7*6
`,
};

interface ExecStats {
  compileMs?: number;
  runMs?: number;
  instructions?: number;
  memoryBytes?: number;
}

interface ExecResult {
  ok: boolean;
  text?: string;
  stdout?: string;
  value?: { ctype: string; value: unknown };
  error?: { kind: string; message: string; line: number; column: number };
  stats?: ExecStats;
}

function Stats({ stats }: { stats: ExecStats }) {
  const rows: Array<[string, string]> = [];
  if (stats.compileMs !== undefined) rows.push(["compile", `${stats.compileMs.toFixed(2)} ms`]);
  if (stats.runMs !== undefined) rows.push(["run", `${stats.runMs.toFixed(2)} ms`]);
  if (stats.instructions !== undefined)
    rows.push(["instructions", stats.instructions.toLocaleString("en")]);
  if (stats.memoryBytes !== undefined)
    rows.push(["memory", `${stats.memoryBytes.toLocaleString("en")} bytes`]);
  return (
    <dl class="stats">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Playground() {
  const [language, setLanguage] = useState<Language>("c");
  const [sources, setSources] = useState<Record<Language, string>>({ ...SAMPLES });
  const [result, setResult] = useState<ExecResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const source = sources[language];
  const error = result && !result.ok ? (result.error ?? null) : null;
  const mark: Mark | null =
    error && error.line > 0
      ? { line: error.line, column: error.column, message: error.message }
      : null;

  const run = async () => {
    setRunning(true);
    setFailure(null);
    try {
      setResult(await postJson<ExecResult>("/v1/exec", { language, source }));
    } catch (e) {
      setResult(null);
      setFailure(messageOf(e));
    } finally {
      setRunning(false);
    }
  };

  return (
    <section class="playground main-column" aria-label="VM playground">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <div class="row">
          <label for="language">Language</label>
          <select
            id="language"
            value={language}
            onChange={(e) => {
              setLanguage(e.currentTarget.value as Language);
              setResult(null);
            }}
          >
            <option value="c">C</option>
            <option value="lisp">Lisp</option>
            <option value="calc">CALC</option>
          </select>
          <button type="submit" disabled={running}>
            {running ? "Running…" : "Run (Ctrl+Enter)"}
          </button>
          <button
            type="button"
            onClick={() => setSources({ ...sources, [language]: SAMPLES[language] })}
          >
            Reset example
          </button>
        </div>
        <CodeEditor
          id="playground-code"
          label={`Source (${language === "c" ? "C" : language === "lisp" ? "Lisp" : "CALC"})`}
          value={source}
          mark={mark}
          rows={14}
          onChange={(value) => {
            setSources({ ...sources, [language]: value });
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void run();
            }
          }}
        />
      </form>
      <section class="panel exec-result" aria-label="Result" aria-live="polite">
        {failure && (
          <p class="error" role="alert">
            {failure}
          </p>
        )}
        {result?.ok && (
          <>
            <h2>Output</h2>
            <pre class="output">{result.stdout || result.text || ""}</pre>
            {result.value && (
              <p>
                value: <code>{String(result.value.value)}</code> ({result.value.ctype})
              </p>
            )}
          </>
        )}
        {error && (
          <div class="exec-error" role="alert" id="playground-code-error">
            <h2>{error.kind} error</h2>
            <p>
              {error.line > 0 ? (
                <button
                  type="button"
                  class="link position"
                  onClick={() => focusPosition("playground-code", error.line, error.column)}
                >
                  {error.line}:{error.column}
                </button>
              ) : null}{" "}
              {error.message}
            </p>
            {result?.stdout && <pre class="output">{result.stdout}</pre>}
          </div>
        )}
        {result?.stats && <Stats stats={result.stats} />}
        {!result && !failure && <p class="empty">Run the code to see its output and statistics.</p>}
      </section>
    </section>
  );
}
