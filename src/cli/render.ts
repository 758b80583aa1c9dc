// Prints the decode loop's event stream to a terminal or a pipe: model text on stdout with VM
// regions and results marked (colour on a TTY), the hook console and errors on stderr.
import type { DecodeEvent, DoneEvent } from "../decode/events.js";
import { paint } from "./style.js";

export interface StreamPrinterOptions {
  out: NodeJS.WritableStream;
  console: NodeJS.WritableStream;
  /** Show per-sequence prefixes when several sequences share the output. */
  multi?: boolean;
}

export class StreamPrinter {
  private inRegion = new Set<number>();
  readonly done: DoneEvent[] = [];

  constructor(private readonly options: StreamPrinterOptions) {}

  handle(ev: DecodeEvent): void {
    const { out, console } = this.options;
    switch (ev.type) {
      case "token":
        out.write(this.inRegion.has(ev.seq) ? paint.cyan(ev.text) : ev.text);
        break;
      case "region-start":
        this.inRegion.add(ev.seq);
        break;
      case "region-end":
        this.inRegion.delete(ev.seq);
        break;
      case "injection": {
        const isError = /VM\[error:/.test(ev.text);
        out.write(isError ? paint.red(ev.text) : paint.green(ev.text));
        break;
      }
      case "hook-log":
        for (const line of ev.text.replace(/\n$/, "").split("\n")) {
          console.write(paint.dim(`[hook ${ev.hook} @${ev.step}] `) + line + "\n");
        }
        break;
      case "hook-error":
        console.write(paint.red(`[hook ${ev.hook} @${ev.step}] error: ${ev.message}`) + "\n");
        break;
      case "vm":
        if (ev.origin === "setup" && !ev.outcome.ok) {
          const e = ev.outcome.error;
          console.write(paint.red(`hook program: ${e.line}:${e.column}: ${e.message}`) + "\n");
        }
        break;
      case "rewind":
        out.write(
          paint.dim(
            `\n[explored: ${JSON.stringify(ev.erased.trim().slice(0, 60))}${ev.memo ? ` — "${ev.memo}"` : ""} → rewound]\n`,
          ),
        );
        break;
      case "done":
        this.done.push(ev);
        break;
    }
  }
}
