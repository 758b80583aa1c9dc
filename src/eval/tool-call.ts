// The syntax of a tool call as models write it in the tool-calling protocol: JSON with the code
// between <tool_call> tags (the form Qwen-style chat templates use), shared by the protocol
// runtime and the data generator of ruffian-nano-tools.

export const TOOL_CALL_OPEN = "<tool_call>";
export const TOOL_CALL_CLOSE = "</tool_call>";

/** The call as the model writes it: `<tool_call>{"code": "4821*377"}</tool_call>`. */
export function formatToolCall(code: string): string {
  return `${TOOL_CALL_OPEN}${JSON.stringify({ code })}${TOOL_CALL_CLOSE}`;
}

/** The code of the tool call a generation stopped at, or an error naming what is wrong with it;
 * undefined when the text holds no call (the model answered). */
export function parseToolCall(text: string): { code: string } | { error: string } | undefined {
  const at = text.lastIndexOf(TOOL_CALL_OPEN);
  if (at < 0) return undefined;
  const body = text.slice(at + TOOL_CALL_OPEN.length).replace(TOOL_CALL_CLOSE, "");
  let call: unknown;
  try {
    call = JSON.parse(body);
  } catch (err) {
    return { error: `tool call is not JSON: ${(err as Error).message}` };
  }
  const code = (call as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return { error: 'tool call needs a "code" string' };
  return { code };
}
