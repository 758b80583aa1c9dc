// The built-in system prompt that teaches a chat model to compute with `[C: …]` regions, with a
// configurable number of worked examples (the seeds showed that examples are what teach it).

export interface WorkedExample {
  question: string;
  /** Text before the region. */
  lead: string;
  /** The C code inside `[C: …]`. */
  code: string;
  /** What the VM prints for the code: the example's `VM[…]` result. */
  result: string;
  /** Text after the result. */
  tail: string;
}

/** Ordered from the simplest form (an expression) to whole programs with loops and functions. */
export const WORKED_EXAMPLES: readonly WorkedExample[] = [
  {
    question: "What is 847 times 293?",
    lead: "Let me compute it:",
    code: "847*293",
    result: "248171",
    tail: "847 × 293 is 248171.",
  },
  {
    question: "How many seconds are in a leap year?",
    lead: "A leap year has 366 days of 86400 seconds:",
    code: "366*86400",
    result: "31622400",
    tail: "A leap year has 31622400 seconds.",
  },
  {
    question: "What is 17 to the power of 5?",
    lead: "Multiplying it out:",
    code: "17*17*17*17*17",
    result: "1419857",
    tail: "17^5 = 1419857.",
  },
  {
    question: "Add up the integers from 1 to 1000.",
    lead: "A loop does it:",
    code: "int s = 0; for (int i = 1; i <= 1000; i++) s += i; return s;",
    result: "500500",
    tail: "The sum is 500500.",
  },
  {
    question: "What is the greatest common divisor of 1071 and 462?",
    lead: "Euclid's algorithm:",
    code: "int a = 1071, b = 462; while (b) { int t = a % b; a = b; b = t; } return a;",
    result: "21",
    tail: "gcd(1071, 462) = 21.",
  },
  {
    question: "Is 7919 a prime number?",
    lead: "Trial division up to the square root:",
    code: "int n = 7919; for (int d = 2; d * d <= n; d++) if (n % d == 0) return 0; return 1;",
    result: "1",
    tail: "The VM returned 1, so 7919 is prime.",
  },
  {
    question: "What is the 30th Fibonacci number?",
    lead: "Iterating the recurrence:",
    code: "int a = 0, b = 1; for (int i = 0; i < 30; i++) { int t = a + b; a = b; b = t; } return a;",
    result: "832040",
    tail: "F(30) = 832040.",
  },
  {
    question: "Sum the multiples of 3 or 5 below 1000.",
    lead: "Checking every number below 1000:",
    code: "int s = 0; for (int i = 1; i < 1000; i++) if (i % 3 == 0 || i % 5 == 0) s += i; return s;",
    result: "233168",
    tail: "The sum is 233168.",
  },
  {
    question: "What is 12 factorial?",
    lead: "A recursive function:",
    code: "int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); } int main() { return fact(12); }",
    result: "479001600",
    tail: "12! = 479001600.",
  },
  {
    question: "Print the squares of 1 to 5.",
    lead: "printf output becomes the result:",
    code: 'for (int i = 1; i <= 5; i++) printf("%d ", i * i);',
    result: "1 4 9 16 25 ",
    tail: "The squares are 1, 4, 9, 16 and 25.",
  },
];

/** Worked examples the built-in prompt shows when --few-shot is not given. */
export const DEFAULT_FEW_SHOT = 6;

/** How an example answer reads: the lead, the region with its result, then the sentence. */
export function answerOf(ex: WorkedExample): string {
  return `${ex.lead} [C: ${ex.code}] = VM[${ex.result}]. ${ex.tail}`;
}

/** The system prompt for chat-template models, with the first `fewShot` worked examples. */
export function builtinSystemPrompt(fewShot: number = DEFAULT_FEW_SHOT): string {
  const lines = [
    "You are Ruffian, an assistant that computes while it speaks.",
    "Whenever an answer needs arithmetic, counting or any exact computation, do not work it out " +
      "in your head: write C code inside [C: …] and stop right after the closing bracket. A C " +
      "virtual machine runs the code at once and appends its result as = VM[result]; then you " +
      "continue, using that result.",
    "Inside [C: …] you may write a single expression (its value is the result), statements ending " +
      "in a return, or whole functions with a main(). Whatever printf prints becomes the result. " +
      "Definitions and the int array memory[] persist between regions in the same conversation.",
    "If the VM reports VM[error: …], fix the code and try again in a new region.",
  ];
  const examples = WORKED_EXAMPLES.slice(0, Math.max(0, fewShot));
  if (examples.length > 0) {
    lines.push("", "Examples:");
    for (const ex of examples) lines.push("", `User: ${ex.question}`, `Assistant: ${answerOf(ex)}`);
  }
  return lines.join("\n");
}

/** A continuation prefix for plain base models: examples written as "Q: …\nA: …" lines. */
export function fewShotPrefix(fewShot: number): string {
  return WORKED_EXAMPLES.slice(0, Math.max(0, fewShot))
    .map((ex) => `Q: ${ex.question}\nA: ${answerOf(ex)}\n`)
    .join("");
}
