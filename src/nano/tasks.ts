// The task family that ruffian-nano learns: each task draws numbers, phrases a question, writes the
// C region that computes the answer, and phrases a final sentence around the VM's result.

import type { TaskWording } from "./phrasing.js";

/** A small seeded PRNG (mulberry32): the same seed gives the same data set everywhere. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  /** Integer with a uniformly chosen digit count in [minDigits, maxDigits], so small and large
   * numbers are equally common. */
  digits(minDigits: number, maxDigits: number): number {
    const d = this.int(minDigits, maxDigits);
    return this.int(d === 1 ? 0 : 10 ** (d - 1), 10 ** d - 1);
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** One drawn instance: the numbers are kept so that held-out splits can be made on them. */
export interface TaskInstance {
  task: string;
  /** The operands; two instances with equal keys count as the same numbers. */
  key: string;
  /** Values for the wording placeholders ({a} {b} {n} {nth}). */
  values: Readonly<Record<string, string | number>>;
  /** How questions about this task are worded (training grammar and held-out wordings). */
  wording: TaskWording;
  /** The C region the model writes, including the [C: …] markers. */
  code: string;
  /** Final sentence given the VM's result text; `plain` picks one that restates none of the
   * question's numbers ("The product is 1817517." rather than "So 4821 * 377 = 1817517."). */
  answer(result: string, plain?: boolean): string;
}

export interface TaskDefinition {
  name: string;
  draw(rng: Rng): TaskInstance;
}

const INT_MAX = 2 ** 31 - 1;

export function fill(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => String(values[k]));
}

/** 1st, 2nd, 3rd, 4th, 11th, 21st … */
function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${s}`;
}

interface TaskText extends TaskWording {
  /** Final-sentence templates; {r} is the VM's result. */
  answers: readonly string[];
}

/** Builds an instance; the answer template is chosen by the key's hash so the choice is stable. */
function instance(
  task: string,
  key: string,
  text: TaskText,
  values: Record<string, number>,
  code: string,
): TaskInstance {
  const filled = typeof values.n === "number" ? { ...values, nth: ordinal(values.n) } : values;
  let h = 0;
  for (const ch of key) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const plain = text.answers.filter((t) => !/\{(?!r\})\w+\}/.test(t));
  const template = text.answers[h % text.answers.length]!;
  const plainTemplate = plain[h % plain.length] ?? template;
  return {
    task,
    key,
    values: filled,
    wording: text,
    code,
    answer: (result, usePlain) =>
      fill(usePlain ? plainTemplate : template, { ...filled, r: result }),
  };
}

/** Tasks whose first two operands can be swapped without changing the question ("3 + 4" and
 * "4 + 3"): their keys sort those operands, so a held-out pair is held out in both orders. */
export const COMMUTATIVE_TASKS: ReadonlySet<string> = new Set([
  "add",
  "mul",
  "gcd",
  "lcm",
  "sum_multiples",
]);

/** The key of an instance's operands, order-free for commutative tasks. */
export function operandKey(task: string, values: readonly number[]): string {
  if (!COMMUTATIVE_TASKS.has(task) || values.length < 2) return values.join(",");
  const [a, b, ...rest] = values;
  return [Math.min(a!, b!), Math.max(a!, b!), ...rest].join(",");
}

const binaryOps: Array<{
  name: string;
  op: string;
  text: TaskText;
  ok(a: number, b: number): boolean;
}> = [
  {
    name: "add",
    op: "+",
    ok: (a, b) => a + b <= INT_MAX,
    text: {
      nounPhrases: [
        "{a} + {b}",
        "{a}+{b}",
        "{a} plus {b}",
        "the sum of {a} and {b}",
        "the total of {a} and {b}",
        "{a} added to {b}",
      ],
      sentences: [
        "Add {a} and {b}.",
        "Add {b} to {a}.",
        "Please add {a} and {b}.",
        "What do you get when you add {a} and {b}?",
        "If you add {a} and {b}, what do you get?",
        "Sum {a} and {b}.",
      ],
      heldOutSentences: [
        "If I add {b} to {a}, what is the result?",
        "Add {a} and {b} together: how much is it?",
      ],
      answers: [
        "So {a} + {b} = {r}.",
        "The sum is {r}.",
        "{a} plus {b} is {r}.",
        "The answer is {r}.",
      ],
    },
  },
  {
    name: "sub",
    op: "-",
    ok: () => true,
    text: {
      nounPhrases: [
        "{a} - {b}",
        "{a}-{b}",
        "{a} minus {b}",
        "the difference {a} - {b}",
        "{b} subtracted from {a}",
        "{a} take away {b}",
      ],
      sentences: [
        "Subtract {b} from {a}.",
        "Take {b} away from {a}.",
        "What is left when you take {b} from {a}?",
        "Please subtract {b} from {a}.",
        "What do you get when you subtract {b} from {a}?",
      ],
      heldOutSentences: [
        "If I subtract {b} from {a}, what is the result?",
        "Start at {a} and take away {b}: what remains?",
      ],
      answers: [
        "So {a} - {b} = {r}.",
        "The difference is {r}.",
        "{a} minus {b} is {r}.",
        "The answer is {r}.",
      ],
    },
  },
  {
    name: "mul",
    op: "*",
    ok: (a, b) => a * b <= INT_MAX,
    text: {
      nounPhrases: [
        "{a} * {b}",
        "{a}*{b}",
        "{a} times {b}",
        "{a} x {b}",
        "{a} multiplied by {b}",
        "the product of {a} and {b}",
      ],
      sentences: [
        "Multiply {a} by {b}.",
        "Multiply {a} and {b}.",
        "What do you get when you multiply {a} and {b}?",
        "If you multiply {a} by {b}, what do you get?",
        "Please multiply {a} by {b}.",
      ],
      heldOutSentences: [
        "If I multiply {a} by {b}, what is the result?",
        "Take {a} and multiply it by {b}: how much is it?",
      ],
      answers: [
        "So {a} * {b} = {r}.",
        "The product is {r}.",
        "{a} times {b} is {r}.",
        "The answer is {r}.",
      ],
    },
  },
  {
    name: "div",
    op: "/",
    ok: (_a, b) => b !== 0,
    text: {
      nounPhrases: [
        "{a} / {b}",
        "{a}/{b}",
        "{a} divided by {b}",
        "{a} divided by {b}, rounded down",
        "the integer quotient of {a} and {b}",
        "the quotient of {a} divided by {b}",
        "{a} / {b} in integer division",
      ],
      sentences: [
        "Divide {a} by {b}.",
        "Divide {a} by {b} (integer part).",
        "How many times does {b} fit into {a}?",
        "How many times does {b} go into {a}?",
        "What is the quotient when {a} is divided by {b}?",
      ],
      heldOutSentences: [
        "If I divide {a} by {b}, what is the whole-number result?",
        "Divide {a} by {b} for me: what whole number comes out?",
      ],
      answers: [
        "So {a} / {b} = {r}.",
        "The quotient is {r}.",
        "{a} divided by {b} is {r}.",
        "The answer is {r}.",
      ],
    },
  },
  {
    name: "mod",
    op: "%",
    ok: (_a, b) => b !== 0,
    text: {
      nounPhrases: [
        "{a} % {b}",
        "{a}%{b}",
        "{a} mod {b}",
        "{a} modulo {b}",
        "the remainder of {a} divided by {b}",
        "the remainder when {a} is divided by {b}",
      ],
      sentences: [
        "What remains when {a} is divided by {b}?",
        "Find the remainder when {a} is divided by {b}.",
        "What is left over when dividing {a} by {b}?",
        "Divide {a} by {b} and give the remainder.",
      ],
      heldOutSentences: [
        "If I divide {a} by {b}, what is the remainder?",
        "Reduce {a} modulo {b}: what is left?",
      ],
      answers: [
        "So {a} % {b} = {r}.",
        "The remainder is {r}.",
        "{a} mod {b} is {r}.",
        "The answer is {r}.",
      ],
    },
  },
];

function binaryTask(def: (typeof binaryOps)[number]): TaskDefinition {
  return {
    name: def.name,
    draw(rng) {
      for (;;) {
        const a = rng.digits(1, def.name === "add" || def.name === "sub" ? 9 : 6);
        const b = rng.digits(
          1,
          def.name === "mul" ? 5 : def.name === "add" || def.name === "sub" ? 9 : 4,
        );
        if (!def.ok(a, b) || (def.op !== "+" && def.op !== "-" && def.op !== "*" && b === 0))
          continue;
        return instance(
          def.name,
          operandKey(def.name, [a, b]),
          def.text,
          { a, b },
          `[C: ${a}${def.op}${b}]`,
        );
      }
    },
  };
}

/** Tasks whose code is a small loop. */
function loopTask(
  name: string,
  text: TaskText,
  draw: (rng: Rng) => Record<string, number>,
  code: (v: Record<string, number>) => string,
): TaskDefinition {
  return {
    name,
    draw(rng) {
      const v = draw(rng);
      return instance(name, operandKey(name, Object.values(v)), text, v, `[C: ${code(v)}]`);
    },
  };
}

export const TASKS: TaskDefinition[] = [
  ...binaryOps.map(binaryTask),
  loopTask(
    "power",
    {
      nounPhrases: [
        "{a}^{n}",
        "{a}**{n}",
        "{a} to the power of {n}",
        "{a} to the power {n}",
        "{a} raised to the power {n}",
        "{a} raised to the {nth} power",
        "{a} to the {n}",
      ],
      sentences: [
        "Raise {a} to the power {n}.",
        "Raise {a} to the {nth} power.",
        "Multiply {a} by itself {n} times.",
      ],
      heldOutSentences: [
        "If I raise {a} to the power {n}, what is the result?",
        "Take {a} to the power {n}: how much is it?",
      ],
      answers: ["So {a}^{n} = {r}.", "{a} to the power of {n} is {r}.", "The answer is {r}."],
    },
    (rng) => {
      const a = rng.int(2, 99);
      const maxN = Math.max(2, Math.floor(62 / Math.log2(a + 1)));
      return { a, n: rng.int(2, Math.min(maxN, 30)) };
    },
    ({ a, n }) => `long r=1; for(int i=0;i<${n};i++) r*=${a}; return r;`,
  ),
  loopTask(
    "factorial",
    {
      nounPhrases: [
        "{n}!",
        "{n} factorial",
        "the factorial of {n}",
        "factorial({n})",
        "the product of the numbers from 1 to {n}",
      ],
      sentences: ["Multiply all the numbers from 1 to {n}.", "Take the factorial of {n}."],
      heldOutSentences: [
        "If I take the factorial of {n}, what is the result?",
        "Multiply together all the numbers from 1 to {n}: what is it?",
      ],
      answers: ["The answer is {r}.", "That gives {r}.", "So the factorial of {n} is {r}."],
    },
    (rng) => ({ n: rng.int(1, 20) }),
    ({ n }) => `long f=1; for(int i=2;i<=${n};i++) f*=i; return f;`,
  ),
  loopTask(
    "fibonacci",
    {
      nounPhrases: [
        "the {nth} Fibonacci number",
        "Fibonacci number {n}",
        "fib({n})",
        "Fibonacci({n})",
        "the {nth} term of the Fibonacci sequence",
        "the Fibonacci number at position {n}",
        "F({n}) in the Fibonacci sequence",
      ],
      sentences: [
        "Which number is at position {n} in the Fibonacci sequence?",
        "Give the {nth} Fibonacci number.",
      ],
      heldOutSentences: [
        "In the Fibonacci sequence, what is the {nth} term?",
        "Run the Fibonacci sequence to term {n}: which number is it?",
      ],
      answers: ["The answer is {r}.", "That gives {r}.", "So fib({n}) = {r}."],
    },
    (rng) => ({ n: rng.int(1, 90) }),
    ({ n }) => `long a=0,b=1; for(int i=0;i<${n};i++){long t=a+b;a=b;b=t;} return a;`,
  ),
  loopTask(
    "gcd",
    {
      nounPhrases: [
        "the gcd of {a} and {b}",
        "gcd({a}, {b})",
        "gcd({a},{b})",
        "the greatest common divisor of {a} and {b}",
        "the GCD of {a} and {b}",
        "the greatest common factor of {a} and {b}",
        "the highest common factor of {a} and {b}",
        "the largest number dividing both {a} and {b}",
      ],
      sentences: ["Which is the largest number that divides both {a} and {b}?"],
      heldOutSentences: [
        "If I want the greatest common divisor of {a} and {b}, what is it?",
        "Reduce {a} and {b} to their greatest common divisor: what is it?",
      ],
      answers: [
        "So gcd({a}, {b}) = {r}.",
        "The greatest common divisor is {r}.",
        "The answer is {r}.",
      ],
    },
    (rng) => {
      const g = rng.digits(1, 3);
      return { a: g * rng.int(1, 999), b: g * rng.int(1, 999) };
    },
    ({ a, b }) => `long a=${a},b=${b}; while(b){long t=a%b;a=b;b=t;} return a;`,
  ),
  loopTask(
    "lcm",
    {
      nounPhrases: [
        "the lcm of {a} and {b}",
        "lcm({a}, {b})",
        "lcm({a},{b})",
        "the least common multiple of {a} and {b}",
        "the LCM of {a} and {b}",
        "the lowest common multiple of {a} and {b}",
        "the smallest common multiple of {a} and {b}",
        "the smallest number divisible by both {a} and {b}",
      ],
      sentences: ["Which is the smallest number that both {a} and {b} divide?"],
      heldOutSentences: [
        "If I want the least common multiple of {a} and {b}, what is it?",
        "Bring {a} and {b} to their least common multiple: what is it?",
      ],
      answers: [
        "So lcm({a}, {b}) = {r}.",
        "The least common multiple is {r}.",
        "The answer is {r}.",
      ],
    },
    (rng) => ({ a: rng.int(2, 9999), b: rng.int(2, 9999) }),
    ({ a, b }) => `long x=${a},y=${b}; while(y){long t=x%y;x=y;y=t;} return ${a}/x*${b};`,
  ),
  {
    name: "prime",
    draw(rng) {
      const n = rng.digits(1, 7);
      const wording: TaskWording = {
        yesNo: true,
        nounPhrases: [],
        sentences: [
          "Is {n} prime?",
          "Is {n} a prime?",
          "Is {n} a prime number?",
          "Is the number {n} prime?",
          "Is {n} prime or not?",
          "Is {n} a prime or not?",
          "Is {n} prime or composite?",
          "Check whether {n} is prime.",
          "Check if {n} is a prime number.",
          "Tell me if {n} is a prime.",
          "Tell me whether {n} is prime.",
          "Determine if {n} is prime.",
          "Determine whether {n} is a prime number.",
          "Can you check if {n} is prime?",
          "Find out whether {n} is prime.",
          "Test {n} for primality.",
          "Is {n} a prime number or not?",
          "{n}: prime or not?",
          "Would {n} be a prime number?",
          "Decide whether {n} is prime.",
        ],
        heldOutSentences: [
          "Do you know if {n} is a prime number?",
          "I wonder whether {n} is prime.",
          "Hello, is {n} prime, yes or no?",
          "Would you say {n} is a prime?",
          "Help me check if {n} is prime, please.",
          "Is it true that {n} is prime?",
        ],
      };
      const say = (r: string) => (r === "1" ? `Yes, ${n} is prime.` : `No, ${n} is not prime.`);
      return {
        task: "prime",
        key: `${n}`,
        values: { n },
        wording,
        code: `[C: long n=${n}; if(n<2) return 0; for(long d=2;d*d<=n;d++) if(n%d==0) return 0; return 1;]`,
        answer: say,
      };
    },
  },
  loopTask(
    "count_primes",
    {
      nounPhrases: [
        "the number of primes below {n}",
        "the number of primes less than {n}",
        "the number of prime numbers under {n}",
        "the count of primes smaller than {n}",
        "the count of prime numbers below {n}",
        "how many primes are below {n}",
      ],
      sentences: [
        "How many primes are there below {n}?",
        "How many primes are less than {n}?",
        "How many prime numbers are smaller than {n}?",
        "How many primes lie below {n}?",
        "Count the primes below {n}.",
        "Count the prime numbers less than {n}.",
        "Count primes under {n}.",
        "Find how many primes are less than {n}.",
      ],
      heldOutSentences: [
        "If I list the primes below {n}, how many are there?",
        "Count up the prime numbers smaller than {n}: how many?",
      ],
      answers: ["There are {r} primes below {n}.", "So the count is {r}.", "The answer is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 5) }),
    ({ n }) =>
      `int c=0; for(int n=2;n<${n};n++){int p=1; for(int d=2;d*d<=n;d++) if(n%d==0){p=0;break;} c+=p;} return c;`,
  ),
  loopTask(
    "sum_primes",
    {
      nounPhrases: [
        "the sum of all primes below {n}",
        "the sum of the primes less than {n}",
        "the sum of the prime numbers under {n}",
        "the total of all primes smaller than {n}",
        "the sum of every prime below {n}",
      ],
      sentences: [
        "Add up the prime numbers less than {n}.",
        "Add up the primes below {n}.",
        "What do the primes under {n} sum to?",
        "What do the primes below {n} add up to?",
        "Sum the primes below {n}.",
        "Sum all prime numbers smaller than {n}.",
      ],
      heldOutSentences: [
        "If I add up the primes below {n}, what total do I get?",
        "Sum up every prime number smaller than {n}: how much is it?",
      ],
      answers: ["The primes below {n} sum to {r}.", "So the sum is {r}.", "The answer is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 5) }),
    ({ n }) =>
      `long s=0; for(int n=2;n<${n};n++){int p=1; for(int d=2;d*d<=n;d++) if(n%d==0){p=0;break;} if(p) s+=n;} return s;`,
  ),
  loopTask(
    "sum_range",
    {
      nounPhrases: [
        "the sum of the integers from {a} to {b}",
        "the sum of all numbers from {a} to {b}",
        "the sum of every integer between {a} and {b} inclusive",
        "the total of all whole numbers from {a} to {b}",
        "the sum from {a} up to {b}",
        "{a} + ... + {b}",
      ],
      sentences: [
        "Add up all numbers from {a} to {b}.",
        "Add up the integers from {a} through {b}.",
        "Sum the numbers {a} through {b}.",
        "What do the integers from {a} to {b} add up to?",
        "What do the numbers from {a} to {b} sum to?",
      ],
      heldOutSentences: [
        "If I add every number from {a} to {b}, what total do I get?",
        "Add each number from {a} to {b}: what is the sum?",
      ],
      answers: ["The sum from {a} to {b} is {r}.", "So the total is {r}.", "The answer is {r}."],
    },
    (rng) => {
      const a = rng.digits(1, 4);
      return { a, b: a + rng.digits(1, 6) };
    },
    ({ a, b }) => `long s=0; for(long i=${a};i<=${b};i++) s+=i; return s;`,
  ),
  loopTask(
    "sum_multiples",
    {
      nounPhrases: [
        "the sum of all multiples of {a} or {b} below {n}",
        "the sum of the multiples of {a} or {b} less than {n}",
        "the total of all multiples of {a} or {b} under {n}",
        "the sum of the numbers below {n} that are multiples of {a} or {b}",
        "the sum of numbers smaller than {n} divisible by {a} or {b}",
      ],
      sentences: [
        "Add up the numbers below {n} that are multiples of {a} or {b}.",
        "Sum every number under {n} divisible by {a} or {b}.",
        "What do the multiples of {a} or {b} below {n} add up to?",
        "If we list the natural numbers below {n} that are multiples of {a} or {b}, what is their sum?",
      ],
      heldOutSentences: [
        "If I add the multiples of {a} or {b} below {n}, what total do I get?",
        "Take every number under {n} divisible by {a} or {b} and sum them: how much is it?",
      ],
      answers: [
        "The multiples of {a} or {b} below {n} sum to {r}.",
        "So the sum is {r}.",
        "The answer is {r}.",
      ],
    },
    (rng) => {
      const a = rng.int(2, 12);
      let b = rng.int(2, 12);
      if (b === a) b = a + 1;
      return { a, b, n: rng.digits(2, 6) };
    },
    ({ a, b, n }) => `long s=0; for(long i=1;i<${n};i++) if(i%${a}==0||i%${b}==0) s+=i; return s;`,
  ),
  loopTask(
    "digit_sum",
    {
      nounPhrases: [
        "the digit sum of {n}",
        "the sum of the digits of {n}",
        "the sum of all digits of {n}",
        "the total of the digits of {n}",
        "the digit sum of the number {n}",
      ],
      sentences: [
        "Add up the digits of {n}.",
        "Sum the digits in {n}.",
        "What do the digits of {n} add up to?",
        "What do the digits of {n} sum to?",
      ],
      heldOutSentences: [
        "If I add the digits of {n}, what total do I get?",
        "Take each digit of {n} and sum them: how much is it?",
      ],
      answers: ["The digits of {n} sum to {r}.", "So the digit sum is {r}.", "The answer is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 15) }),
    ({ n }) => `long n=${n}, s=0; while(n){s+=n%10;n/=10;} return s;`,
  ),
];
