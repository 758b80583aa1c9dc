// The few-shot harness for any model (seed 004's experiment): prompts built from k worked
// examples, each question answered through the in-band runtime, and the success rate per k —
// region written, region compiled and ran, final answer right.
import type { Engine } from "../engine/types.js";
import { promptStyle, renderPrompt, stopStrings } from "../decode/prompt.js";
import {
  WORKED_EXAMPLES,
  answerOf,
  builtinSystemPrompt,
  type WorkedExample,
} from "../cli/chat/system-prompt.js";
import { evaluate, type EvalAnswer, type EvalQuestion } from "./nano-eval.js";
import { fillPrompt, type PromptFile } from "./prompt-file.js";

/** Seed 004's own examples (factorial, Fibonacci, gcd) and two more in its style (primes,
 * Project Euler), with functions written out; results are checked against the VM by the tests. */
export const SEED_STYLE_EXAMPLES: readonly WorkedExample[] = [
  {
    question: "What is 5 factorial?",
    lead: "5! =",
    code: "int f(int n){int r=1;while(n>1){r=r*n;n=n-1;}return r;} return f(5);",
    result: "120",
    tail: "So 5! is 120.",
  },
  {
    question: "What is the 10th Fibonacci number?",
    lead: "fib(10) =",
    code: "int fib(int n){int a=0,b=1;for(int i=0;i<n;i++){int t=a+b;a=b;b=t;}return a;} return fib(10);",
    result: "55",
    tail: "The 10th Fibonacci number is 55.",
  },
  {
    question: "What is gcd(48, 18)?",
    lead: "gcd(48,18) =",
    code: "int gcd(int a,int b){while(b!=0){int t=b;b=a%b;a=t;}return a;} return gcd(48,18);",
    result: "6",
    tail: "So gcd(48, 18) = 6.",
  },
  {
    question: "How many primes are there below 50?",
    lead: "Counting them:",
    code: "int c=0; for(int n=2;n<50;n++){int p=1;for(int d=2;d*d<=n;d++)if(n%d==0)p=0;c+=p;} return c;",
    result: "15",
    tail: "There are 15 primes below 50.",
  },
  {
    question: "What is the sum of all multiples of 4 or 7 below 200?",
    lead: "Project Euler style:",
    code: "int s=0; for(int i=1;i<200;i++) if(i%4==0||i%7==0) s+=i; return s;",
    result: "6958",
    tail: "The sum is 6958.",
  },
];

/** The examples a k-shot prompt takes, in order: seed 004's first, then the chat's. */
export const FEW_SHOT_POOL: readonly WorkedExample[] = [...SEED_STYLE_EXAMPLES, ...WORKED_EXAMPLES];

/** Parses "0,1,2,5,10" into example counts (each at most `most`: by default the built-in pool's
 * size; a prompt file checks its own count, with its line, in checkShotCounts). */
export function parseShotCounts(text: string, most: number = FEW_SHOT_POOL.length): number[] {
  const counts = text.split(",").map((part) => {
    const t = part.trim();
    if (!/^\d+$/.test(t)) throw new Error(`--few-shot: "${t}" is not a whole number`);
    const k = Number(t);
    if (k > most) {
      throw new Error(`--few-shot: ${k} examples asked, ${FEW_SHOT_POOL.length} exist`);
    }
    return k;
  });
  return [...new Set(counts)];
}

/** A question's prompt with k examples. Chat-template models get the instructions as the system
 * message and the examples as earlier turns; plain models the same as "User:/Assistant:" text. */
export function fewShotPrompt(
  engine: Engine,
  k: number,
  question: string,
): { prompt: string; stop: string[] } {
  const examples = FEW_SHOT_POOL.slice(0, k);
  const style = promptStyle(engine);
  if (style === "plain") {
    const turns = examples.map((ex) => `User: ${ex.question}\nAssistant: ${answerOf(ex)}\n`);
    return {
      prompt: `${builtinSystemPrompt(0)}\n\n${turns.join("")}User: ${question}\nAssistant:`,
      stop: ["\nUser:"],
    };
  }
  const messages = [
    { role: "system", content: builtinSystemPrompt(0) },
    ...examples.flatMap((ex) => [
      { role: "user", content: ex.question },
      { role: "assistant", content: answerOf(ex) },
    ]),
    { role: "user", content: question },
  ];
  return { prompt: renderPrompt(engine, messages), stop: stopStrings(style) };
}

/** A k-shot prompt from a prompt file: the file's text with its first k examples and the question.
 * Plain models continue that text as it stands; chat-template models (and ruffian-nano) get it
 * as the one user message, and answer in the assistant's turn. */
export function promptFilePrompt(
  engine: Engine,
  file: PromptFile,
  k: number,
  question: string,
): { prompt: string; stop: string[] } {
  const text = fillPrompt(file, k, question);
  const style = promptStyle(engine);
  const nextTask = file.taskPrefix ? [`\n${file.taskPrefix}`] : [];
  if (style === "plain") return { prompt: text, stop: nextTask };
  return {
    prompt: renderPrompt(engine, [{ role: "user", content: text }]),
    stop: [...stopStrings(style), ...nextTask],
  };
}

/** Renders a question's prompt with k examples. */
export type ShotRender = (k: number, question: string) => { prompt: string; stop: string[] };

/** The longest k-shot prompt over the questions, in tokens, for each k. */
export function longestPrompts(
  engine: Engine,
  questions: readonly EvalQuestion[],
  shotCounts: readonly number[],
  render: ShotRender,
): { shots: number; tokens: number; question: string }[] {
  return shotCounts.map((shots) => {
    let longest = { shots, tokens: 0, question: "" };
    for (const q of questions) {
      const { prompt } = render(shots, q.question);
      const tokens = engine.tokenize(prompt, { addSpecial: true, parseSpecial: true }).length;
      if (tokens > longest.tokens) longest = { shots, tokens, question: q.question };
    }
    return longest;
  });
}

export interface ShotScore {
  shots: number;
  total: number;
  wroteRegion: number;
  ran: number;
  correct: number;
  answers: EvalAnswer[];
}

export interface FewShotOptions {
  parallel: number;
  maxTokens: number;
  onProgress?: (shots: number, done: number, total: number) => void;
  /** The prompts (default: the built-in examples, fewShotPrompt). */
  render?: ShotRender;
}

/** Runs every question once per example count, in-band, and counts the three outcomes. */
export async function runFewShot(
  engine: Engine,
  questions: readonly EvalQuestion[],
  shotCounts: readonly number[],
  options: FewShotOptions,
): Promise<ShotScore[]> {
  const scores: ShotScore[] = [];
  const render: ShotRender =
    options.render ?? ((k, question) => fewShotPrompt(engine, k, question));
  for (const shots of shotCounts) {
    const report = await evaluate(engine, questions, {
      inject: true,
      parallel: options.parallel,
      maxTokens: options.maxTokens,
      render: (q) => render(shots, q.question),
      onProgress: (done, total) => options.onProgress?.(shots, done, total),
    });
    scores.push({
      shots,
      total: report.total,
      wroteRegion: report.answers.filter((a) => a.wroteRegion).length,
      ran: report.answers.filter((a) => a.ran).length,
      correct: report.correct,
      answers: report.answers,
    });
  }
  return scores;
}

const pct = (n: number, total: number) => (total ? `${((100 * n) / total).toFixed(1)}%` : "-");

/** The success-rate table: one row per example count. */
export function fewShotTable(scores: readonly ShotScore[]): string {
  const rows = scores.map(
    (s) =>
      `| ${s.shots} | ${s.total} | ${pct(s.wroteRegion, s.total)} | ${pct(s.ran, s.total)} | ${pct(s.correct, s.total)} |`,
  );
  return (
    [
      "| examples | n | region written | compiled and ran | final answer right |",
      "| ---: | ---: | ---: | ---: | ---: |",
      ...rows,
    ].join("\n") + "\n"
  );
}
