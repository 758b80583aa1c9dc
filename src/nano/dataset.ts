// Builds ruffian-nano's training and evaluation dialogues from the task family, with every
// result computed by Ruffian's own C VM (the same code the model will write in-band).
import { runC } from "../vm/index.js";
import { TASKS, Rng, fill, type TaskInstance } from "./tasks.js";
import { heldOutQuestion, trainingQuestion } from "./phrasing.js";
import { NANO_ASSISTANT_PREFIX, NANO_TOOL_PREFIX, renderNanoPrompt } from "./format.js";
import { formatToolCall } from "../eval/tool-call.js";

export type Split = "train" | "eval";
/** vm: the answer is a [C: …] region, the injected result, then a sentence using it.
 * direct: the answer is the sentence alone (the no-VM baseline of the evaluation).
 * tools: the region's code goes out as a tool call, the result comes back as a tool message,
 * then the same sentence (the tool-calling baseline). */
export type AnswerStyle = "vm" | "direct" | "tools";
export const ANSWER_STYLES: readonly AnswerStyle[] = ["vm", "direct", "tools"];
/** varied: final sentences may restate the question's numbers ("So 4821 * 377 = 1817517.");
 * plain: only sentences that carry the result alone ("The product is 1817517."). */
export type AnswerSentences = "varied" | "plain";

export interface Example {
  task: string;
  question: string;
  /** Text the model sees before it starts answering. */
  prompt: string;
  /** Everything the model should write after the prompt, injected result included. */
  completion: string;
  /** The region as written, and the text the runtime writes after it (" = VM[…]"; for tools,
   * the tool message "\nT: …\nA:" that the host renders after the call). */
  code: string;
  injected: string;
  /** The VM's result text: what a correct final answer must contain. */
  result: string;
  /** The whole final sentence of a correct answer. */
  finalSentence: string;
}

/** Numbers whose key hashes to 0 mod 10 are reserved for evaluation (keys of commutative tasks
 * are order-free, see operandKey, so "3 + 4" held out means "4 + 3" is held out too). */
export function isHeldOutKey(key: string): boolean {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619) >>> 0;
  return h % 10 === 0;
}

/** The source inside the region markers. */
export function regionSource(code: string): string {
  return code.replace(/^\[C: /, "").replace(/\]$/, "");
}

export function computeResult(inst: TaskInstance): string {
  const outcome = runC(regionSource(inst.code), { profile: "medium" });
  if (!outcome.ok) {
    throw new Error(`VM failed on generated code ${inst.code}: ${outcome.error.message}`);
  }
  return outcome.text;
}

export function makeExample(
  inst: TaskInstance,
  question: string,
  style: AnswerStyle,
  result = computeResult(inst),
  answers: AnswerSentences = "varied",
): Example {
  const injected = ` = VM[${result}]`;
  const finalSentence = inst.answer(result, answers === "plain");
  const prompt = renderNanoPrompt([{ role: "user", text: question }]);
  const toolMessage = `\n${NANO_TOOL_PREFIX}${result}\n${NANO_ASSISTANT_PREFIX}`;
  const completion =
    style === "vm"
      ? ` ${inst.code}${injected}\n${finalSentence}\n`
      : style === "tools"
        ? ` ${formatToolCall(regionSource(inst.code))}${toolMessage} ${finalSentence}\n`
        : ` ${finalSentence}\n`;
  return {
    task: inst.task,
    question,
    prompt,
    completion,
    code: inst.code,
    injected: style === "tools" ? toolMessage : injected,
    result,
    finalSentence,
  };
}

/** Draws `count` examples of a split, cycling through the tasks so each is equally represented.
 * Each draw yields one example per requested style, sharing the question and the VM's result. */
export function* generateExamples(
  count: number,
  seed: number,
  split: Split,
  styles: readonly AnswerStyle[],
  /** Evaluation questions use held-out wordings by default; "seen" keeps training wordings
   * (numbers stay held out), to tell wording from number generalization apart. */
  phrasings: "held-out" | "seen" = "held-out",
  answers: AnswerSentences = "varied",
): Generator<Example[]> {
  const rng = new Rng(seed);
  for (let i = 0; i < count; i++) {
    const task = TASKS[i % TASKS.length]!;
    let inst: TaskInstance;
    do inst = task.draw(rng);
    while (isHeldOutKey(inst.key) !== (split === "eval"));
    const question =
      split === "eval" && phrasings === "held-out"
        ? fill(heldOutQuestion(inst.wording, rng), inst.values)
        : fill(trainingQuestion(inst.wording, rng), inst.values);
    const result = computeResult(inst);
    yield styles.map((style) => makeExample(inst, question, style, result, answers));
  }
}
