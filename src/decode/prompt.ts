// Turns a conversation into the prompt text a model expects: ruffian-nano's "Q:/A:" format, the
// model's own chat template, or plain text for base models without one.
import type { ChatMessage, Engine } from "../engine/types.js";
import { renderNanoPrompt } from "../nano/format.js";
import { isTemplateName, parseChatTemplate, textAfterReply } from "../engine/chat-template.js";

export type PromptStyle = "nano" | "chat-template" | "plain";

/** Each engine's style: a server asks twice per request, and the metadata lookup is a native
 * call that searches the model's keys. */
const styles = new WeakMap<Engine, PromptStyle>();

/** How prompts for this model are written. */
export function promptStyle(engine: Engine): PromptStyle {
  let style = styles.get(engine);
  if (style === undefined) {
    // A template given in place of the model's own (--chat-template) is used even by nano.
    const template = engine.model.chatTemplate;
    const overridden =
      template !== undefined && template !== engine.metadata("tokenizer.chat_template");
    style =
      engine.metadata("general.name") === "ruffian-nano" && !overridden
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

/** Each engine's derived end-of-turn tokens (see turnStopTokens). */
const turnStops = new WeakMap<Engine, readonly number[]>();

/**
 * Tokens that end the assistant's turn in this model's chat template but that llama.cpp does not
 * already treat as end-of-generation: the special token the template writes right after a reply
 * (its "<|im_end|>", "<|eot_id|>", "<|end|>" …). llama.cpp marks those three and the vocabulary's
 * EOS/EOT as end-of-generation itself, so for most models this is empty; a template that closes
 * turns with another control token gets it here. The loop stops at them without showing them.
 */
export function turnStopTokens(engine: Engine): readonly number[] {
  let stops = turnStops.get(engine);
  if (stops === undefined) {
    stops = deriveTurnStops(engine);
    turnStops.set(engine, stops);
  }
  return stops;
}

function deriveTurnStops(engine: Engine): number[] {
  const source = engine.model.chatTemplate;
  if (source === undefined || isTemplateName(source) || promptStyle(engine) !== "chat-template")
    return [];
  const template = parseChatTemplate(source);
  if (template instanceof Error) return [];
  const text = (t: number | undefined) =>
    t === undefined ? "" : engine.tokenText(t, { renderSpecial: true });
  const after = textAfterReply(template, source, {
    bosToken: text(engine.special.bos),
    eosToken: text(engine.special.eos),
    tokenizerAddsBos: engine.special.addBos,
  });
  if (!after) return [];
  const first = engine.tokenize(after, { addSpecial: false, parseSpecial: true })[0];
  if (first === undefined || !engine.isControl(first) || engine.isEndOfGeneration(first)) return [];
  return [first];
}
