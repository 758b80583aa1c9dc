// How questions are worded: a small grammar (frames around each task's noun phrases, plus whole
// sentences, openers, sign-offs) for training, and a disjoint set of held-out wordings for evaluation.

import type { Rng } from "./tasks.js";

/** The words a task contributes; {a} {b} {n} {nth} are filled in later. */
export interface TaskWording {
  /** Noun phrases naming the quantity ("the sum of {a} and {b}"): they go into the shared frames. */
  nounPhrases: readonly string[];
  /** Whole questions in the task's own idiom ("Add {a} and {b}."). */
  sentences: readonly string[];
  /** Whole questions used only for evaluation. */
  heldOutSentences: readonly string[];
  /** Yes/no tasks have no noun phrase to compute, so the shared frames do not apply. */
  yesNo?: boolean;
}

/** Frames that turn a noun phrase X into a training question. */
const TRAINING_FRAMES = [
  "What is {X}?",
  "What's {X}?",
  "what is {X}?",
  "What is {X} equal to?",
  "What is the value of {X}?",
  "How much is {X}?",
  "Compute {X}.",
  "Calculate {X}.",
  "Find {X}.",
  "Evaluate {X}.",
  "Work out {X}.",
  "Determine {X}.",
  "Figure out {X}.",
  "Find the value of {X}.",
  "Tell me {X}.",
  "Give me {X}.",
  "Show me {X}.",
  "Please compute {X}.",
  "Please calculate {X}.",
  "Please find {X}.",
  "Can you compute {X}?",
  "Can you tell me {X}?",
  "Could you calculate {X}?",
  "Could you find {X}?",
  "I need {X}.",
  "I want to know {X}.",
  "Let me know {X}.",
  "{X}?",
  "{X} = ?",
  "Answer this: {X}.",
];

/** Frames never used in training: evaluation wraps the task's noun phrases in these. */
const HELD_OUT_FRAMES = [
  "Do you know what {X} is?",
  "Work this out for me: {X}.",
  "I would like to know {X}.",
  "Hello, could you work out {X} for me?",
  "Help me with {X}, please.",
  "{X} is what?",
];

const OPENERS = [
  "Hi! ",
  "Hello. ",
  "Hey, ",
  "Quick question: ",
  "Question: ",
  "Okay, ",
  "Please help: ",
  "Math: ",
  "Hi there. ",
  "Good morning! ",
];
const SIGN_OFFS = [" Thanks!", " Thank you.", " Please.", " Thanks a lot."];

/** Everyday words with no arithmetic meaning: random runs of them surround training questions so
 * the model learns that only the task's own words decide what to compute. Words that name an
 * operation or a quantity (sum, times, prime, count, less, …) are deliberately absent. */
const FILLER_WORDS = (
  "a about actually again all also always am an and any anyway are as ask asked at be because " +
  "been before being better bit but can carefully check class come could day did do does doing " +
  "done easy else even ever exactly fast fine for friend fun get give go going good got great " +
  "had has have he hello help her here hey hi him his homework how i if in is it its just keep " +
  "kind know late later let like look lot make maybe me mind morning most must my need new next " +
  "nice night no not now of oh ok okay on only or other our out people please pretty problem " +
  "puzzle question quick quickly quite real really right said say school see she should show " +
  "simple since so some something soon sorry still sure teacher tell thank thanks that the " +
  "their them then there these they thing think this those though today tomorrow too try trying " +
  "understand us very want was way we week well were what when where which while who why will " +
  "wish with wonder work would yes yet you your"
).split(" ");

function fillerRun(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  return Array.from({ length: n }, () => rng.pick(FILLER_WORDS)).join(" ");
}

function applyFrame(frame: string, phrase: string): string {
  const out = frame.replace("{X}", phrase);
  // A frame that starts with the phrase capitalizes it ("{X}?" → "The sum of …?").
  return frame.startsWith("{X}") ? out.charAt(0).toUpperCase() + out.slice(1) : out;
}

/** Every training question template of a task, before openers, sign-offs and case noise. */
export function trainingTemplates(w: TaskWording): string[] {
  const framed = w.yesNo
    ? []
    : w.nounPhrases.flatMap((np) => TRAINING_FRAMES.map((f) => applyFrame(f, np)));
  return [...framed, ...w.sentences];
}

/** Every held-out question template of a task. */
export function heldOutTemplates(w: TaskWording): string[] {
  const framed = w.yesNo
    ? []
    : w.nounPhrases.flatMap((np) => HELD_OUT_FRAMES.map((f) => applyFrame(f, np)));
  return [...framed, ...w.heldOutSentences];
}

/** A training wording: a template, sometimes with an opener, a sign-off or a lower-case start, so
 * that the model learns to find the task words inside varied surroundings. */
export function decorate(template: string, rng: Rng): string {
  const r = rng.next();
  // Random everyday words before or after the question: the model must look past them.
  if (r < 0.2) return `${capitalize(fillerRun(rng, 1, 6))} ${lowerFirst(template)}`;
  if (r < 0.35) {
    const end = /[?.!]$/.test(template) ? template.slice(-1) : "";
    return `${template.slice(0, template.length - end.length)} ${fillerRun(rng, 1, 4)}${end}`;
  }
  return decorateLightly(template, rng);
}

/** A noun phrase alone inside random everyday words ("okay so the sum of 3 and 4 then?"). */
export function embedPhrase(phrase: string, rng: Rng): string {
  const before = rng.next() < 0.8 ? fillerRun(rng, 1, 5) + " " : "";
  const after = rng.next() < 0.5 ? " " + fillerRun(rng, 1, 3) : "";
  const q = capitalize(before + phrase + after) + rng.pick(["?", ".", "", "?"]);
  return q;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function decorateLightly(template: string, rng: Rng): string {
  let q = template;
  if (rng.next() < 0.1) q = q.charAt(0).toLowerCase() + q.slice(1);
  if (rng.next() < 0.25) {
    const opener = rng.pick(OPENERS);
    q = opener + (opener.endsWith(", ") || opener.endsWith(": ") ? lowerFirst(q) : q);
  }
  if (rng.next() < 0.15) q += rng.pick(SIGN_OFFS);
  return q;
}

function lowerFirst(s: string): string {
  // Keep acronyms and symbols as they are ("GCD", "F(10)").
  return /^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s;
}

const templateCache = new WeakMap<TaskWording, { framed: string[]; heldOut: string[] }>();

function templates(w: TaskWording): { framed: string[]; heldOut: string[] } {
  let t = templateCache.get(w);
  if (!t) {
    const sentences = new Set(w.sentences);
    t = {
      framed: trainingTemplates(w).filter((s) => !sentences.has(s)),
      heldOut: heldOutTemplates(w),
    };
    templateCache.set(w, t);
  }
  return t;
}

/** An evaluation question template: one of the held-out wordings, as it is. */
export function heldOutQuestion(w: TaskWording, rng: Rng): string {
  return rng.pick(templates(w).heldOut);
}

/** A training question template: the task's own sentences (they are few, and carry the task's
 * idiom), a noun phrase in one of the shared frames, or a noun phrase alone among random words;
 * all but the last are decorated with openers, fillers or sign-offs. */
export function trainingQuestion(w: TaskWording, rng: Rng): string {
  const { framed } = templates(w);
  const r = rng.next();
  if (framed.length === 0 || (w.sentences.length > 0 && r < 0.3))
    return decorate(rng.pick(w.sentences), rng);
  if (r < 0.45) return embedPhrase(rng.pick(w.nounPhrases), rng);
  return decorate(rng.pick(framed), rng);
}

/** Lower-case, letters/placeholders only: two templates that normalize equally count as the same
 * wording, so held-out checks cannot be fooled by case or punctuation. */
export function normalizeWording(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z{}]+/g, " ")
    .trim();
}

/** Every string `decorate` can produce from a template (for the disjointness test). */
export function decoratedVariants(template: string): string[] {
  const starts = [template, template.charAt(0).toLowerCase() + template.slice(1)];
  const opened = starts.flatMap((s) => [
    s,
    ...OPENERS.map((o) => o + (o.endsWith(", ") || o.endsWith(": ") ? lowerFirst(s) : s)),
  ]);
  return opened.flatMap((s) => [s, ...SIGN_OFFS.map((e) => s + e)]);
}
