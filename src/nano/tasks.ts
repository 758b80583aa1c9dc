// The task family that ruffian-nano learns: each task draws numbers, phrases a question, writes the
// C region that computes the answer, and phrases a final sentence around the VM's result.

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
  /** Question phrasings, with {a} {b} {n} already filled in; the split decides which one is used. */
  questions: readonly string[];
  /** The C region the model writes, including the [C: …] markers. */
  code: string;
  /** Final sentence given the VM's result text. */
  answer(result: string): string;
  /** The final sentence for a model that answers without the VM (it must know the result). */
  directAnswer(result: string): string;
}

export interface TaskDefinition {
  name: string;
  draw(rng: Rng): TaskInstance;
}

const INT_MAX = 2 ** 31 - 1;

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => String(values[k]));
}

/** 1st, 2nd, 3rd, 4th, 11th, 21st … */
function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${s}`;
}

interface Phrased {
  questions: string[];
  answers: string[];
}

/** Builds an instance from phrasing lists; the answer template is chosen by the result's hash so
 * the choice is stable for a given instance. */
function instance(
  task: string,
  key: string,
  phrased: Phrased,
  values: Record<string, string | number>,
  code: string,
): TaskInstance {
  const withOrdinal = typeof values.n === "number" ? { ...values, nth: ordinal(values.n) } : values;
  const questions = phrased.questions.map((q) => fill(q, withOrdinal));
  const pickAnswer = (result: string) => {
    let h = 0;
    for (const ch of key) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return fill(phrased.answers[h % phrased.answers.length]!, { ...values, r: result });
  };
  return { task, key, questions, code, answer: pickAnswer, directAnswer: pickAnswer };
}

const binaryOps: Array<{
  name: string;
  op: string;
  phrased: Phrased;
  ok(a: number, b: number): boolean;
}> = [
  {
    name: "add",
    op: "+",
    ok: (a, b) => a + b <= INT_MAX,
    phrased: {
      questions: [
        "What is {a} plus {b}?",
        "What is {a} + {b}?",
        "Add {a} and {b}.",
        "Compute the sum of {a} and {b}.",
        "How much is {a} + {b}?",
        "Please add {b} to {a}.",
        "Calculate {a} + {b}.",
        "What do you get when you add {a} and {b}?",
      ],
      answers: ["So {a} + {b} = {r}.", "The sum is {r}.", "{a} plus {b} is {r}."],
    },
  },
  {
    name: "sub",
    op: "-",
    ok: () => true,
    phrased: {
      questions: [
        "What is {a} minus {b}?",
        "What is {a} - {b}?",
        "Subtract {b} from {a}.",
        "Compute {a} - {b}.",
        "How much is {a} minus {b}?",
        "Take {b} away from {a}.",
        "Calculate {a} - {b}.",
        "What is the difference {a} - {b}?",
      ],
      answers: ["So {a} - {b} = {r}.", "The difference is {r}.", "{a} minus {b} is {r}."],
    },
  },
  {
    name: "mul",
    op: "*",
    ok: (a, b) => a * b <= INT_MAX,
    phrased: {
      questions: [
        "What is {a} times {b}?",
        "What is {a} * {b}?",
        "Multiply {a} by {b}.",
        "Compute the product of {a} and {b}.",
        "How much is {a} x {b}?",
        "What is {a} multiplied by {b}?",
        "Calculate {a} * {b}.",
        "What do you get when you multiply {a} and {b}?",
      ],
      answers: ["So {a} * {b} = {r}.", "The product is {r}.", "{a} times {b} is {r}."],
    },
  },
  {
    name: "div",
    op: "/",
    ok: (_a, b) => b !== 0,
    phrased: {
      questions: [
        "What is {a} divided by {b}, rounded down?",
        "What is {a} / {b} in integer division?",
        "Divide {a} by {b} (integer part).",
        "Compute the integer quotient of {a} and {b}.",
        "How many times does {b} fit into {a}?",
        "What is the whole-number part of {a} / {b}?",
        "Calculate {a} / {b} with integer division.",
        "What is the quotient when {a} is divided by {b}?",
      ],
      answers: ["So {a} / {b} = {r}.", "The quotient is {r}.", "{a} divided by {b} is {r}."],
    },
  },
  {
    name: "mod",
    op: "%",
    ok: (_a, b) => b !== 0,
    phrased: {
      questions: [
        "What is {a} mod {b}?",
        "What is {a} % {b}?",
        "What is the remainder of {a} divided by {b}?",
        "Compute {a} modulo {b}.",
        "Find the remainder when {a} is divided by {b}.",
        "What remains when {a} is divided by {b}?",
        "Calculate {a} % {b}.",
        "What is {a} modulo {b}?",
      ],
      answers: ["So {a} % {b} = {r}.", "The remainder is {r}.", "{a} mod {b} is {r}."],
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
        return instance(def.name, `${a},${b}`, def.phrased, { a, b }, `[C: ${a}${def.op}${b}]`);
      }
    },
  };
}

/** Tasks whose code is a small loop; `make` returns values for the phrasing and the code. */
function loopTask(
  name: string,
  phrased: Phrased,
  draw: (rng: Rng) => Record<string, number>,
  code: (v: Record<string, number>) => string,
): TaskDefinition {
  return {
    name,
    draw(rng) {
      const v = draw(rng);
      const key = Object.values(v).join(",");
      return instance(name, key, phrased, v, `[C: ${code(v)}]`);
    },
  };
}

export const TASKS: TaskDefinition[] = [
  ...binaryOps.map(binaryTask),
  loopTask(
    "power",
    {
      questions: [
        "What is {a} to the power of {n}?",
        "Compute {a}^{n}.",
        "What is {a} raised to the power {n}?",
        "Calculate {a} to the {n}.",
        "What is {a}**{n}?",
        "Raise {a} to the power {n}.",
        "How much is {a} to the power {n}?",
        "Evaluate {a}^{n}.",
      ],
      answers: ["So {a}^{n} = {r}.", "{a} to the power of {n} is {r}."],
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
      questions: [
        "What is {n} factorial?",
        "What is {n}!?",
        "Compute the factorial of {n}.",
        "Calculate {n}!.",
        "What is the factorial of {n}?",
        "Find {n} factorial.",
        "How much is {n}!?",
        "Evaluate {n} factorial.",
      ],
      answers: ["So {n}! = {r}.", "The factorial of {n} is {r}."],
    },
    (rng) => ({ n: rng.int(1, 20) }),
    ({ n }) => `long f=1; for(int i=2;i<=${n};i++) f*=i; return f;`,
  ),
  loopTask(
    "fibonacci",
    {
      questions: [
        "What is the {nth} Fibonacci number?",
        "Compute Fibonacci number {n}.",
        "What is fib({n})?",
        "Find the {nth} term of the Fibonacci sequence.",
        "Calculate F({n}), the Fibonacci number.",
        "What is Fibonacci({n})?",
        "Give me Fibonacci number {n}.",
        "Which number is at position {n} in the Fibonacci sequence?",
      ],
      answers: ["So fib({n}) = {r}.", "The Fibonacci number is {r}."],
    },
    (rng) => ({ n: rng.int(1, 90) }),
    ({ n }) => `long a=0,b=1; for(int i=0;i<${n};i++){long t=a+b;a=b;b=t;} return a;`,
  ),
  loopTask(
    "gcd",
    {
      questions: [
        "What is the gcd of {a} and {b}?",
        "What is gcd({a}, {b})?",
        "Find the greatest common divisor of {a} and {b}.",
        "Compute the GCD of {a} and {b}.",
        "What is the greatest common factor of {a} and {b}?",
        "Calculate gcd({a},{b}).",
        "What is the largest number dividing both {a} and {b}?",
        "Find the highest common factor of {a} and {b}.",
      ],
      answers: ["So gcd({a}, {b}) = {r}.", "The greatest common divisor is {r}."],
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
      questions: [
        "What is the lcm of {a} and {b}?",
        "What is lcm({a}, {b})?",
        "Find the least common multiple of {a} and {b}.",
        "Compute the LCM of {a} and {b}.",
        "What is the smallest common multiple of {a} and {b}?",
        "Calculate lcm({a},{b}).",
        "What is the lowest common multiple of {a} and {b}?",
        "Find the smallest number divisible by both {a} and {b}.",
      ],
      answers: ["So lcm({a}, {b}) = {r}.", "The least common multiple is {r}."],
    },
    (rng) => ({ a: rng.int(2, 9999), b: rng.int(2, 9999) }),
    ({ a, b }) => `long x=${a},y=${b}; while(y){long t=x%y;x=y;y=t;} return ${a}/x*${b};`,
  ),
  {
    name: "prime",
    draw(rng) {
      const n = rng.digits(1, 7);
      const phrased: Phrased = {
        questions: [
          "Is {n} a prime number?",
          "Is {n} prime?",
          "Check whether {n} is prime.",
          "Tell me if {n} is a prime.",
          "Determine if {n} is prime.",
          "Is the number {n} prime?",
          "Can {n} be a prime number?",
          "Find out whether {n} is a prime number.",
        ],
        answers: [],
      };
      const questions = phrased.questions.map((q) => fill(q, { n }));
      const say = (r: string) => (r === "1" ? `Yes, ${n} is prime.` : `No, ${n} is not prime.`);
      return {
        task: "prime",
        key: `${n}`,
        questions,
        code: `[C: long n=${n}; if(n<2) return 0; for(long d=2;d*d<=n;d++) if(n%d==0) return 0; return 1;]`,
        answer: say,
        directAnswer: say,
      };
    },
  },
  loopTask(
    "count_primes",
    {
      questions: [
        "How many primes are there below {n}?",
        "Count the prime numbers less than {n}.",
        "How many prime numbers are smaller than {n}?",
        "What is the number of primes under {n}?",
        "Count primes below {n}.",
        "How many primes lie below {n}?",
        "Find how many primes are less than {n}.",
        "What is the count of primes smaller than {n}?",
      ],
      answers: ["There are {r} primes below {n}.", "So the count is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 5) }),
    ({ n }) =>
      `int c=0; for(int n=2;n<${n};n++){int p=1; for(int d=2;d*d<=n;d++) if(n%d==0){p=0;break;} c+=p;} return c;`,
  ),
  loopTask(
    "sum_primes",
    {
      questions: [
        "What is the sum of all primes below {n}?",
        "Add up the prime numbers less than {n}.",
        "What do the primes under {n} sum to?",
        "Compute the sum of primes smaller than {n}.",
        "Sum the primes below {n}.",
        "What is the total of all primes less than {n}?",
        "Find the sum of every prime below {n}.",
        "What is the sum of the prime numbers under {n}?",
      ],
      answers: ["The primes below {n} sum to {r}.", "So the sum is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 5) }),
    ({ n }) =>
      `long s=0; for(int n=2;n<${n};n++){int p=1; for(int d=2;d*d<=n;d++) if(n%d==0){p=0;break;} if(p) s+=n;} return s;`,
  ),
  loopTask(
    "sum_range",
    {
      questions: [
        "What is the sum of the integers from {a} to {b}?",
        "Add up all numbers from {a} to {b}.",
        "What is {a} + ... + {b}?",
        "Compute the sum of every integer between {a} and {b} inclusive.",
        "Sum the numbers {a} through {b}.",
        "What do the integers from {a} to {b} add up to?",
        "Find the total of all whole numbers from {a} to {b}.",
        "What is the sum from {a} up to {b}?",
      ],
      answers: ["The sum from {a} to {b} is {r}.", "So the total is {r}."],
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
      questions: [
        "What is the sum of all multiples of {a} or {b} below {n}?",
        "Add up the numbers below {n} that are multiples of {a} or {b}.",
        "Find the sum of the multiples of {a} or {b} less than {n}.",
        "Sum every number under {n} divisible by {a} or {b}.",
        "What do the multiples of {a} or {b} below {n} add up to?",
        "Compute the sum of numbers smaller than {n} divisible by {a} or {b}.",
        "What is the total of all multiples of {a} or {b} under {n}?",
        "If we list the natural numbers below {n} that are multiples of {a} or {b}, what is their sum?",
      ],
      answers: ["The multiples of {a} or {b} below {n} sum to {r}.", "So the sum is {r}."],
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
      questions: [
        "What is the digit sum of {n}?",
        "Add up the digits of {n}.",
        "What is the sum of the digits of {n}?",
        "Compute the digit sum of {n}.",
        "What do the digits of {n} add up to?",
        "Sum the digits in {n}.",
        "Find the sum of all digits of {n}.",
        "What is the total of the digits of the number {n}?",
      ],
      answers: ["The digits of {n} sum to {r}.", "So the digit sum is {r}."],
    },
    (rng) => ({ n: rng.digits(2, 15) }),
    ({ n }) => `long n=${n}, s=0; while(n){s+=n%10;n/=10;} return s;`,
  ),
];
