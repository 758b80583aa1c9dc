// The tool-calling protocol that in-band computation is compared with, run for real: the model
// writes a tool call (JSON with the code between <tool_call> tags), generation stops, the host
// runs the code in the same VM sandbox, re-renders the conversation with a tool message and
// generation continues — reusing the KV prefix that still matches, or re-reading everything as a
// remote API does.
import type { ChatMessage, Engine } from "../engine/types.js";
import { DecodeLoop } from "../decode/loop.js";
import { promptStyle, renderPrompt, stopStrings } from "../decode/prompt.js";
import type { DoneEvent } from "../decode/events.js";
import { VmSession, injectionText } from "../vm/index.js";
import { costSince, startCost, type AnswerCost } from "./cost.js";
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN, formatToolCall, parseToolCall } from "./tool-call.js";

export { TOOL_CALL_OPEN, TOOL_CALL_CLOSE, formatToolCall, parseToolCall };

export interface ToolRunOptions {
  /** Reuse the KV cache's matching prefix after each tool message (false: re-read it all). */
  reusePrefix: boolean;
  maxTokens: number;
  /** Tool calls allowed before the answer must come (default 4). */
  maxCalls?: number;
  seq?: number;
  /** The sandbox the calls run in (default: a new session per conversation). */
  vm?: VmSession;
}

export interface ToolRun {
  /** The conversation: the question, each call with its tool message, the final answer. */
  messages: ChatMessage[];
  /** The assistant's final message (what is graded). */
  answer: string;
  calls: number;
  /** A call's code compiled and ran without error. */
  ran: boolean;
  cost: AnswerCost;
}

/** Runs the call a generation stopped at in `vm` and returns the tool message's text: the
 * VM's output, or an error naming what failed (a call that is not JSON, code that fails). */
export function executeToolCall(
  vm: VmSession,
  call: { code: string } | { error: string },
): { message: string; ok: boolean } {
  if ("error" in call) return { message: `error: ${call.error}`, ok: false };
  const outcome = vm.run(call.code);
  return { message: injectionText(outcome), ok: outcome.ok };
}

/** Answers one question through the tool protocol (see runToolConversation). */
export function runWithTools(
  engine: Engine,
  question: string,
  options: ToolRunOptions,
): Promise<ToolRun> {
  return runToolConversation(engine, [{ role: "user", content: question }], options);
}

/** Continues a conversation (as an API request carries it: earlier calls and tool messages
 * included) until the assistant answers. Every call runs in one VM session, as in-band regions of
 * one conversation do. The cost counts every generation and every re-read of the conversation. */
export async function runToolConversation(
  engine: Engine,
  conversation: readonly ChatMessage[],
  options: ToolRunOptions,
): Promise<ToolRun> {
  const seq = options.seq ?? 0;
  const style = promptStyle(engine);
  const vm = options.vm ?? new VmSession();
  const messages: ChatMessage[] = [...conversation];
  const done: DoneEvent[] = [];
  const mark = startCost(engine);
  let calls = 0;
  let ran = false;
  for (;;) {
    const loop = new DecodeLoop(engine, { observe: {}, tokenStats: false });
    let end: DoneEvent | undefined;
    for await (const ev of loop.run([
      {
        seq,
        prompt: renderPrompt(engine, messages),
        maxTokens: options.maxTokens,
        stop: [TOOL_CALL_CLOSE, ...stopStrings(style)],
        inject: false,
        syntaxes: [],
        reusePrefix: options.reusePrefix,
      },
    ])) {
      if (ev.type === "done") end = ev;
    }
    if (!end) throw new Error("the decode loop ended without a result");
    done.push(end);
    // Nano answers start with the space after "A:", which the renderer writes itself.
    const text = style === "nano" ? end.text.replace(/^ /, "") : end.text;
    const call = end.reason === "stop" ? parseToolCall(text) : undefined;
    if (!call || calls >= (options.maxCalls ?? 4)) {
      messages.push({ role: "assistant", content: text });
      return { messages, answer: text, calls, ran, cost: costSince(mark, done) };
    }
    calls++;
    const result = executeToolCall(vm, call);
    ran ||= result.ok;
    messages.push({ role: "assistant", content: text + TOOL_CALL_CLOSE });
    messages.push({ role: "tool", content: result.message });
  }
}
