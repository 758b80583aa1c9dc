// The conversation format of ruffian-nano ("Q: …\nA: …"), shared by the data generator, the
// runtime's chat template for the model and the evaluation, so all three agree to the character.

export interface Turn {
  /** "tool": a tool's result after an assistant's tool call (the tool-calling protocol). */
  role: "user" | "assistant" | "tool";
  text: string;
}

export const NANO_USER_PREFIX = "Q: ";
export const NANO_ASSISTANT_PREFIX = "A:";
/** Opens a tool message; the assistant's answer continues on the next "A:" line. */
export const NANO_TOOL_PREFIX = "T: ";

/** Renders earlier turns and opens the assistant's next answer. Answers begin with a space, which
 * the model writes itself, so the prompt ends right after "A:". */
export function renderNanoPrompt(turns: readonly Turn[]): string {
  let out = "";
  for (const turn of turns) {
    if (turn.role === "user") out += `${NANO_USER_PREFIX}${turn.text}\n${NANO_ASSISTANT_PREFIX}`;
    else if (turn.role === "tool")
      out += `${NANO_TOOL_PREFIX}${turn.text}\n${NANO_ASSISTANT_PREFIX}`;
    else out += ` ${turn.text}\n`;
  }
  if (turns.length === 0 || turns[turns.length - 1]!.role === "assistant") {
    throw new Error("a nano prompt must end with a user or tool turn");
  }
  return out;
}
