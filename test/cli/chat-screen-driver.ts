// Drives the chat's LiveArea on a real terminal for chat-screen.test.ts: appends, erases across
// wrapped and earlier lines, exact-width lines, with a footer drawn below all along.
import { LiveArea } from "../../src/cli/chat/live-area.js";

const out = process.stdout;
const columns = () => out.columns || 80;
const rows = () => out.rows || 24;
const pause = () => new Promise((r) => setTimeout(r, 20));

async function scenario(steps: Array<(a: LiveArea) => void>): Promise<void> {
  const area = new LiveArea(out, columns, rows, "<restart>");
  for (const step of steps) {
    step(area);
    await pause();
  }
  area.close();
  out.write("===\n");
}

const footer = (a: LiveArea) =>
  a.setFooter([
    "\x1b[35m┌ hook console\x1b[39m",
    "│ a footer line that is longer than the terminal is wide",
    "status",
  ]);
const w = columns();

if (process.argv[2] === "tall") {
  // Taller than the terminal: erasing back into rows that scrolled away restarts the display.
  await scenario([
    footer,
    (a) => a.append(Array.from({ length: 12 }, (_, i) => `row${i + 1}`).join("\n")),
    (a) => a.erase(a.length - "row1\nro".length),
    (a) => a.append("w2 again"),
  ]);
  out.write("[driver done]\n");
  process.exit(0);
}

await scenario([
  footer,
  (a) => a.append("abcdefghij".repeat(5)),
  (a) => a.erase(25),
  (a) => a.append("XYZ", (t) => `\x1b[32m${t}\x1b[39m`),
]);
await scenario([
  footer,
  (a) => a.append("x".repeat(2 * w)),
  (a) => a.append("Z"),
  (a) => a.erase(2),
  (a) => a.append("!!"),
  (a) => a.erase(2),
]);
await scenario([
  footer,
  (a) => a.append("line one\nline two"),
  (a) => a.erase(9),
  (a) => a.append(" more"),
  (a) => a.restyle(4, (t) => `\x1b[36m${t}\x1b[39m`),
]);
out.write("[driver done]\n");
