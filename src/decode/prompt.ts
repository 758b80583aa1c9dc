// Turns a conversation into the prompt text a model expects: ruffian-nano's "Q:/A:" format, the
// model's own chat template, or plain text for base models without one.
import type { ChatMessage, Engine } from "../engine/types.js";
import { renderNanoPrompt } from "../nano/format.js";

export type PromptStyle = "nano" | "chat-template" | "plain";

/** Each engine's style: a server asks twice per request, and the metadata lookup is a native
 * call that searches the model's keys. */
const styles = new WeakMap<Engine, PromptStyle>();

/** How prompts for this model are written. */
export function promptStyle(engine: Engine): PromptStyle {
  let style = styles.get(engine);
  if (style === undefined) {
    style =
      engine.metadata("general.name") === "ruffian-nano"
        ? "nano"
        : engine.model.chatTemplate
          ? "chat-template"
          : "plain";
    styles.set(engine, style);
  }
  return style;
}

/** Renders messages and opens the assistant's turn. Plain models get the messages' text joined. */
export function renderPrompt(engine: Engine, messages: ChatMessage[]): string {
  switch (promptStyle(engine)) {
    case "nano":
      return renderNanoPrompt(
        messages
          .filter((m) => m.role === "user" || m.role === "assistant" || m.role === "tool")
          .map((m) => ({ role: m.role as "user" | "assistant" | "tool", text: m.content })),
      );
    case "chat-template":
      return engine.renderChat(messages, { addAssistant: true });
    case "plain":
      return messages.map((m) => m.content).join("\n");
  }
}

/** Where generation should stop for a prompt style, besides end-of-generation tokens. */
export function stopStrings(style: PromptStyle): string[] {
  return style === "nano" ? ["\nQ:"] : [];
}
