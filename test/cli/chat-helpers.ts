// Shared by the chat tests: how to start `ruffian chat` and a tmux driver for tests in a real
// pseudo-terminal.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

/** The real `ruffian` command. */
export const ruffianScript = join(packageRoot, "bin", "ruffian.js");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function ruffian(args: string[], input = "", env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, [ruffianScript, ...args], {
    input,
    encoding: "utf8",
    cwd: packageRoot,
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const hasTmux = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0;

/** A program running in a detached tmux session of a fixed size. */
export class TmuxSession {
  readonly name = `ruffian-chat-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(command: string, width = 120, height = 40) {
    // A detached session can start its command before the pane has its final size; a program
    // that saw the wrong size would draw for it, so the command waits for the size first.
    // tmux keeps a cleared screen in the history (scroll-on-clear); the tests read the history
    // too, so that is switched off before the command starts.
    const sized = `tmux set-option -w scroll-on-clear off 2>/dev/null; until [ "$(stty size)" = "${height} ${width}" ]; do sleep 0.05; done; clear; ${command}`;
    const r = spawnSync(
      "tmux",
      ["new-session", "-d", "-s", this.name, "-x", String(width), "-y", String(height), sized],
      { encoding: "utf8", env: { ...process.env, TERM: "xterm-256color" } },
    );
    if (r.status !== 0) throw new Error(`tmux new-session failed: ${r.stderr}`);
  }

  /** Types text literally, then presses the keys named (Enter, C-c, C-d …). */
  type(text: string, ...keys: string[]): void {
    if (text !== "") spawnSync("tmux", ["send-keys", "-t", this.name, "-l", text]);
    if (keys.length > 0) spawnSync("tmux", ["send-keys", "-t", this.name, ...keys]);
  }

  /** The screen (with the scrollback) as plain text, wrapped rows joined, line ends trimmed. */
  screen(): string {
    const r = spawnSync("tmux", ["capture-pane", "-p", "-J", "-S", "-200", "-t", this.name], {
      encoding: "utf8",
    });
    return r.stdout
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n")
      .trimEnd();
  }

  /** Waits until the screen matches; fails with the screen after `limitMs` (a hang guard). */
  async waitFor(
    pattern: RegExp | ((screen: string) => boolean),
    limitMs = 60_000,
  ): Promise<string> {
    const t0 = Date.now();
    const ok = typeof pattern === "function" ? pattern : (s: string) => pattern.test(s);
    for (;;) {
      const screen = this.screen();
      if (ok(screen)) return screen;
      if (Date.now() - t0 > limitMs)
        throw new Error(`timed out waiting for ${String(pattern)}; screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  kill(): void {
    spawnSync("tmux", ["kill-session", "-t", this.name]);
  }
}
