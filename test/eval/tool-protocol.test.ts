// The tool-calling protocol: call syntax, running calls in the VM sandbox, the tool message in
// nano's format, and on the real engine the cost of continuing a conversation after a tool
// message with the KV prefix reused and re-read from scratch (as a remote API does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  executeToolCall,
  formatToolCall,
  parseToolCall,
  runToolConversation,
  runWithTools,
} from "../../src/eval/tool-protocol.js";
import { renderNanoPrompt } from "../../src/nano/format.js";
import { VmSession } from "../../src/vm/index.js";
import { openEngine } from "../../src/engine/open.js";
import { renderPrompt } from "../../src/decode/prompt.js";
import { cachedTokens } from "../../src/decode/loop.js";
import { packageRoot } from "../../src/paths.js";

test("a tool call is JSON with the code between <tool_call> tags; bad calls are named", () => {
  const call = formatToolCall('printf("%d", 6*7);');
  assert.equal(call, '<tool_call>{"code":"printf(\\"%d\\", 6*7);"}</tool_call>');
  assert.deepEqual(parseToolCall(` ${call}`), { code: 'printf("%d", 6*7);' });
  assert.equal(parseToolCall("The answer is 42."), undefined);
  assert.match((parseToolCall("<tool_call>{code: 1}") as { error: string }).error, /not JSON/);
  assert.deepEqual(parseToolCall('<tool_call>{"src": "1"}'), {
    error: 'tool call needs a "code" string',
  });
});

test("calls run in one VM session: results, compile errors with their position, kept definitions", () => {
  const vm = new VmSession();
  assert.deepEqual(executeToolCall(vm, { code: "4821*377" }), { message: "1817517", ok: true });
  const bad = executeToolCall(vm, { code: "int x = ; return x;" });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /^error: .*1:\d+/);
  executeToolCall(vm, { code: "int sq(int x) { return x * x; } int main() { return 0; }" });
  assert.deepEqual(executeToolCall(vm, { code: "sq(12)" }), { message: "144", ok: true });
  assert.deepEqual(executeToolCall(vm, { error: "tool call is not JSON" }), {
    message: "error: tool call is not JSON",
    ok: false,
  });
});

test("nano's format renders a tool message after the call and reopens the answer", () => {
  assert.equal(
    renderNanoPrompt([
      { role: "user", text: "What is 4821 times 377?" },
      { role: "assistant", text: formatToolCall("4821*377") },
      { role: "tool", text: "1817517" },
    ]),
    'Q: What is 4821 times 377?\nA: <tool_call>{"code":"4821*377"}</tool_call>\nT: 1817517\nA:',
  );
  assert.throws(() =>
    renderNanoPrompt([
      { role: "user", text: "q" },
      { role: "assistant", text: "a" },
    ]),
  );
});

test("after a tool message, reusing the KV prefix prefills only the new part; a remote API re-reads it all", async () => {
  const engine = await openEngine(join(packageRoot, "models", "ruffian-nano.gguf"), {
    sequences: 1,
    contextSize: 1024,
    glassBox: false,
  });
  try {
    const question = "What is 4821 times 377?";
    // The model's first turn (ruffian-nano answers in-band; the protocol sees no call in it).
    const first = await runWithTools(engine, question, { reusePrefix: true, maxTokens: 40 });
    assert.equal(first.calls, 0);
    assert.ok(
      first.cost.forwardPasses >= first.cost.tokensDecoded,
      "one pass per decoded token at least",
    );
    const history = [
      { role: "user", content: question },
      { role: "assistant", content: formatToolCall("4821*377") },
      { role: "tool", content: "1817517" },
    ];
    const promptTokens = engine.tokenize(renderPrompt(engine, history), { addSpecial: true });
    const cached = [...cachedTokens(engine, 0)];
    let common = 0;
    while (common < cached.length && cached[common] === promptTokens[common]) common++;
    assert.ok(common > 10, "the question is still in the KV cache");

    const reused = await runToolConversation(engine, history, { reusePrefix: true, maxTokens: 40 });
    const reread = await runToolConversation(engine, history, {
      reusePrefix: false,
      maxTokens: 40,
    });
    assert.equal(reused.cost.tokensPrefilled, promptTokens.length - common);
    assert.equal(reread.cost.tokensPrefilled, promptTokens.length);
    assert.equal(reused.answer, reread.answer, "greedy: the same answer either way");
    assert.equal(reused.messages.at(-1)!.content, reused.answer);
  } finally {
    engine.dispose();
  }
});
