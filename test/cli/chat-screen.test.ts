// The chat's live area on a real terminal (tmux, 20 columns): erasing across wrapped rows and
// back over a newline, lines that exactly fill the width, and a footer that is redrawn below the
// text and leaves nothing behind. Skipped when tmux is not installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { hasTmux, TmuxSession } from "./chat-helpers.js";

const skip = hasTmux ? false : "tmux is not installed";

test("the live area erases and redraws exactly, footer included", { skip }, async () => {
  const driver = join(packageRoot, "dist", "test", "cli", "chat-screen-driver.js");
  const tm = new TmuxSession(`${process.execPath} ${driver}; sleep 600`, 20, 30);
  try {
    const screen = await tm.waitFor(/\[driver done\]/);
    const w = 20;
    assert.deepEqual(screen.split("\n"), [
      "abcdefghijabcdefghijabcdeXYZ",
      "===",
      "x".repeat(2 * w - 1),
      "===",
      "line one more",
      "===",
      "[driver done]",
    ]);
  } finally {
    tm.kill();
  }
});

test(
  "an erase into rows that scrolled away restarts the display below a marker",
  { skip },
  async () => {
    const driver = join(packageRoot, "dist", "test", "cli", "chat-screen-driver.js");
    const tm = new TmuxSession(`${process.execPath} ${driver} tall; sleep 600`, 20, 10);
    try {
      const screen = await tm.waitFor(/\[driver done\]/);
      assert.deepEqual(screen.split("\n"), [
        ...Array.from({ length: 12 }, (_, i) => `row${i + 1}`),
        "<restart>",
        "row2 again",
        "===",
        "[driver done]",
      ]);
    } finally {
      tm.kill();
    }
  },
);
