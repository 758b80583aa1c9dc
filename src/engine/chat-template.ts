// A model's Jinja chat template (GGUF tokenizer.chat_template, or one given with --chat-template)
// rendered with @huggingface/jinja, the implementation transformers.js uses: any template, not
// only the fixed list llama.cpp's llama_chat_apply_template recognises. The engine falls back to
// that list only for a template given by name ("chatml", "llama3", …) and for a model's own
// template that this Jinja cannot parse (llama.cpp then recognises it by its markers, or not).
import { Template } from "@huggingface/jinja";
import type { ChatMessage } from "./types.js";
import { EngineError } from "./errors.js";

export interface ChatTemplateContext {
  /** Open the assistant's turn after the messages (the template's add_generation_prompt). */
  addGenerationPrompt: boolean;
  /** Text of the vocabulary's BOS / EOS tokens ("" when it has none). */
  bosToken: string;
  eosToken: string;
  /** The tokenizer adds BOS itself: a BOS the template writes first is dropped, as llama.cpp
   * does, so that the prompt does not start with two. */
  tokenizerAddsBos: boolean;
}

/** Compiled templates by their text: a server renders the same one for every request. */
const compiled = new Map<string, Template>();

/** The parsed template, or the parser's error. */
export function parseChatTemplate(source: string): Template | Error {
  const known = compiled.get(source);
  if (known) return known;
  try {
    const template = new Template(source);
    if (compiled.size >= 16) compiled.clear();
    compiled.set(source, template);
    return template;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** A name from llama.cpp's built-in list ("chatml", "llama3", "phi3" …) rather than Jinja. */
export function isTemplateName(template: string): boolean {
  return /^[A-Za-z0-9_.-]+$/.test(template);
}

/** Throws an EngineError "chat-template" when `source` is not a Jinja template this renders. */
export function checkChatTemplate(source: string, where: string): void {
  const parsed = parseChatTemplate(source);
  if (parsed instanceof Error)
    throw new EngineError("chat-template", `${where} is not a Jinja template: ${parsed.message}`);
}

/**
 * The prompt a template makes of a conversation. Messages keep their roles; "developer" (the
 * OpenAI API's newer name for the system role) becomes "system" for templates that never mention
 * it. `tools` is left undefined; raise_exception and strftime_now are the library's own.
 */
export function renderChatTemplate(
  template: Template,
  source: string,
  messages: readonly ChatMessage[],
  context: ChatTemplateContext,
): string {
  const knowsDeveloper = source.includes("developer");
  let text: string;
  try {
    text = template.render({
      messages: messages.map((m) => ({
        role: m.role === "developer" && !knowsDeveloper ? "system" : m.role,
        content: m.content,
      })),
      add_generation_prompt: context.addGenerationPrompt,
      bos_token: context.bosToken,
      eos_token: context.eosToken,
    });
  } catch (err) {
    throw new EngineError(
      "chat-template",
      `the chat template failed to render this conversation: ${(err as Error).message}`,
    );
  }
  if (context.tokenizerAddsBos && context.bosToken !== "" && text.startsWith(context.bosToken))
    text = text.slice(context.bosToken.length);
  return text;
}

/** Stands for an assistant reply's content when looking for what a template writes after it. */
const REPLY = "\u2063ruffian-reply\u2063";

/**
 * What the template writes right after an assistant's reply (e.g. "<|im_end|>\n"), found by
 * rendering a user turn and a reply; undefined when the template cannot render that or drops
 * the reply.
 */
export function textAfterReply(
  template: Template,
  source: string,
  context: Omit<ChatTemplateContext, "addGenerationPrompt">,
): string | undefined {
  try {
    const text = renderChatTemplate(
      template,
      source,
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: REPLY },
      ],
      { ...context, addGenerationPrompt: false },
    );
    const at = text.indexOf(REPLY);
    return at < 0 ? undefined : text.slice(at + REPLY.length);
  } catch {
    return undefined;
  }
}
