// A plain-text code editor: a textarea over a backdrop that draws line numbers and marks an
// error's line and column. No syntax colouring; Tab keeps moving focus, so keyboard users are
// never trapped in it.
import { useEffect, useRef } from "preact/hooks";

export interface Mark {
  line: number;
  column: number;
  message: string;
}

export function CodeEditor({
  id,
  label,
  value,
  onChange,
  mark,
  onKeyDown,
  rows = 12,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  mark?: Mark | null;
  onKeyDown?: (event: KeyboardEvent) => void;
  rows?: number;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const backdrop = useRef<HTMLDivElement>(null);
  const lines = value.split("\n");
  const sync = () => {
    if (area.current && backdrop.current) {
      backdrop.current.scrollTop = area.current.scrollTop;
      backdrop.current.scrollLeft = area.current.scrollLeft;
    }
  };
  useEffect(sync);
  return (
    <div class="editor-field">
      <label for={id}>{label}</label>
      <div class={mark ? "editor has-error" : "editor"} style={{ "--rows": rows }}>
        <div class="editor-backdrop" ref={backdrop} aria-hidden="true">
          {lines.map((text, i) => {
            const line = i + 1;
            const marked = mark && mark.line === line;
            const col = marked ? Math.max(0, Math.min(text.length, mark.column - 1)) : 0;
            return (
              <div
                key={i}
                class={marked ? "editor-line error-line" : "editor-line"}
                data-line={line}
              >
                <span class="gutter">{line}</span>
                {marked ? (
                  <span class="code">
                    {text.slice(0, col)}
                    <mark class="error-mark" title={mark.message}>
                      {text.slice(col, col + 1) || " "}
                    </mark>
                    {text.slice(col + 1)}
                  </span>
                ) : (
                  <span class="code">{text || " "}</span>
                )}
              </div>
            );
          })}
        </div>
        <textarea
          id={id}
          ref={area}
          spellcheck={false}
          autocomplete="off"
          autocapitalize="off"
          wrap="off"
          value={value}
          aria-invalid={mark ? true : undefined}
          aria-describedby={mark ? `${id}-error` : undefined}
          onInput={(e) => onChange(e.currentTarget.value)}
          onScroll={sync}
          onKeyDown={onKeyDown}
        />
      </div>
    </div>
  );
}

/** Puts the caret of the editor `id` at line:column and focuses it. */
export function focusPosition(id: string, line: number, column: number): void {
  const area = document.getElementById(id) as HTMLTextAreaElement | null;
  if (!area) return;
  const lines = area.value.split("\n");
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
  offset += Math.max(0, column - 1);
  area.focus();
  area.setSelectionRange(offset, offset + 1);
}
