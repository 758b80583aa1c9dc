// The seed-004-style question set of the few-shot harness: the 46 algorithms of the seeds' suite
// (sorting, stacks and queues, number theory, arrays, bits, Project Euler), each asked with
// concrete numbers. Every answer is computed by running the reference C program in Ruffian's VM
// (the test also runs each one through gcc), never typed in.
//   node dist/src/eval/algorithm-set.js eval/algorithm-questions.jsonl
import { writeFileSync } from "node:fs";
import { runC } from "../vm/index.js";

export interface AlgorithmQuestion {
  task: string;
  question: string;
  /** The exact answer (primality: "1" or "0"). */
  result: string;
  /** A reference program whose output is the answer (prints it with printf). */
  code: string;
}

interface Algorithm {
  task: string;
  /** One entry per question: its wording and the body of `long solve(void)`. */
  cases: Array<[question: string, body: string]>;
}

const list = (xs: readonly number[]) => xs.join(", ");
const cArray = (name: string, xs: readonly number[]) =>
  `long ${name}[${xs.length}] = {${xs.join(", ")}}; int len = ${xs.length};`;

function sortCase(kind: string, xs: number[], k: number): [string, string] {
  const sorters: Record<string, string> = {
    bubble:
      "for (int i = 0; i < len; i++) for (int j = 0; j + 1 < len - i; j++) if (a[j] > a[j+1]) { long t = a[j]; a[j] = a[j+1]; a[j+1] = t; }",
    selection:
      "for (int i = 0; i < len; i++) { int m = i; for (int j = i + 1; j < len; j++) if (a[j] < a[m]) m = j; long t = a[i]; a[i] = a[m]; a[m] = t; }",
    insertion:
      "for (int i = 1; i < len; i++) { long v = a[i]; int j = i - 1; while (j >= 0 && a[j] > v) { a[j+1] = a[j]; j--; } a[j+1] = v; }",
  };
  return [
    `Sort ${list(xs)} in ascending order with ${kind} sort. What is element number ${k} (counting from 1) of the sorted list?`,
    `${cArray("a", xs)} ${sorters[kind]} return a[${k - 1}];`,
  ];
}

const stackOps = (pushes: number[], pops: number, then: number): [string, string] => [
  `Push ${list(pushes)} onto an empty stack, pop ${pops} times, then push ${then}. What is the sum of the values left on the stack?`,
  `long s[64]; int top = 0; ${pushes.map((p) => `s[top++] = ${p};`).join(" ")} for (int i = 0; i < ${pops}; i++) top--; s[top++] = ${then}; long sum = 0; for (int i = 0; i < top; i++) sum += s[i]; return sum;`,
];

const stackTop = (pushes: number[], pops: number): [string, string] => [
  `Push ${list(pushes)} onto an empty stack and pop ${pops} times. Which value is on top now?`,
  `long s[64]; int top = 0; ${pushes.map((p) => `s[top++] = ${p};`).join(" ")} for (int i = 0; i < ${pops}; i++) top--; return s[top-1];`,
];

const queueFront = (adds: number[], removes: number, then: number): [string, string] => [
  `Enqueue ${list(adds)} into an empty queue, dequeue ${removes} times, then enqueue ${then}. Which value is at the front?`,
  `long q[64]; int head = 0, tail = 0; ${adds.map((p) => `q[tail++] = ${p};`).join(" ")} for (int i = 0; i < ${removes}; i++) head++; q[tail++] = ${then}; return q[head];`,
];

const queueSize = (adds: number[], removes: number, then: number[]): [string, string] => [
  `Enqueue ${list(adds)} into an empty queue, dequeue ${removes} times, then enqueue ${list(then)}. How many values are in the queue?`,
  `int head = 0, tail = 0; tail += ${adds.length}; head += ${removes}; tail += ${then.length}; return tail - head;`,
];

const isPrimeBody = (n: number) =>
  `long n = ${n}; if (n < 2) return 0; for (long d = 2; d * d <= n; d++) if (n % d == 0) return 0; return 1;`;
const nthPrimeBody = (k: number) =>
  `int found = 0; for (long n = 2;; n++) { int p = 1; for (long d = 2; d * d <= n; d++) if (n % d == 0) { p = 0; break; } if (p && ++found == ${k}) return n; }`;
const sievePrefix = (limit: number) =>
  `static char composite[${limit}]; long sum = 0, count = 0; for (long i = 2; i < ${limit}; i++) { if (composite[i]) continue; sum += i; count++; for (long j = i * i; j < ${limit}; j += i) composite[j] = 1; }`;

const arrays: Record<string, number[]> = {
  a: [34, 7, 23, 32, 5, 62, 14],
  b: [91, 18, 45, 3, 77, 60, 29, 12],
  c: [8, 42, 15, 42, 4, 23, 42, 16],
};

export const ALGORITHMS: readonly Algorithm[] = [
  // Sorting
  {
    task: "bubble_sort",
    cases: [sortCase("bubble", arrays.a!, 3), sortCase("bubble", arrays.b!, 5)],
  },
  {
    task: "selection_sort",
    cases: [sortCase("selection", arrays.b!, 2), sortCase("selection", arrays.a!, 6)],
  },
  {
    task: "insertion_sort",
    cases: [sortCase("insertion", arrays.c!, 4), sortCase("insertion", arrays.b!, 7)],
  },
  // Data structures
  { task: "stack_sum", cases: [stackOps([3, 8, 5, 11], 2, 9), stackOps([20, 4, 17, 6, 1], 3, 30)] },
  { task: "stack_top", cases: [stackTop([3, 8, 5, 11], 1), stackTop([9, 2, 40, 7, 13, 5], 3)] },
  {
    task: "queue_front",
    cases: [queueFront([4, 7, 1, 9], 1, 6), queueFront([12, 5, 30, 8, 2], 3, 11)],
  },
  {
    task: "queue_size",
    cases: [queueSize([4, 7, 1, 9], 2, [6, 3]), queueSize([1, 2, 3, 4, 5, 6], 4, [7])],
  },
  // Number theory
  {
    task: "gcd",
    cases: [
      [
        "What is the greatest common divisor of 252 and 198?",
        "long a = 252, b = 198; while (b) { long t = a % b; a = b; b = t; } return a;",
      ],
      [
        "What is gcd(4620, 1155)?",
        "long a = 4620, b = 1155; while (b) { long t = a % b; a = b; b = t; } return a;",
      ],
      [
        "What is the gcd of 3528 and 3780?",
        "long a = 3528, b = 3780; while (b) { long t = a % b; a = b; b = t; } return a;",
      ],
    ],
  },
  {
    task: "lcm",
    cases: [
      [
        "What is the least common multiple of 21 and 6?",
        "long a = 21, b = 6, x = a, y = b; while (y) { long t = x % y; x = y; y = t; } return a / x * b;",
      ],
      [
        "What is lcm(84, 90)?",
        "long a = 84, b = 90, x = a, y = b; while (y) { long t = x % y; x = y; y = t; } return a / x * b;",
      ],
      [
        "What is the lowest common multiple of 144 and 160?",
        "long a = 144, b = 160, x = a, y = b; while (y) { long t = x % y; x = y; y = t; } return a / x * b;",
      ],
    ],
  },
  {
    task: "prime",
    cases: [
      ["Is 7919 a prime number?", isPrimeBody(7919)],
      ["Is 8633 prime?", isPrimeBody(8633)],
      ["Is 104729 a prime number?", isPrimeBody(104729)],
    ],
  },
  {
    task: "nth_prime",
    cases: [
      ["What is the 100th prime number?", nthPrimeBody(100)],
      ["What is the 500th prime?", nthPrimeBody(500)],
      ["What is the 25th prime number?", nthPrimeBody(25)],
    ],
  },
  {
    task: "count_primes",
    cases: [
      ["How many primes are there below 10000?", `${sievePrefix(10000)} return count;`],
      ["How many prime numbers are smaller than 1000?", `${sievePrefix(1000)} return count;`],
    ],
  },
  {
    task: "fibonacci",
    cases: [
      [
        "What is the 40th Fibonacci number?",
        "long a = 0, b = 1; for (int i = 0; i < 40; i++) { long t = a + b; a = b; b = t; } return a;",
      ],
      [
        "What is the 25th Fibonacci number?",
        "long a = 0, b = 1; for (int i = 0; i < 25; i++) { long t = a + b; a = b; b = t; } return a;",
      ],
      [
        "What is the 70th Fibonacci number?",
        "long a = 0, b = 1; for (int i = 0; i < 70; i++) { long t = a + b; a = b; b = t; } return a;",
      ],
    ],
  },
  {
    task: "factorial",
    cases: [
      ["What is 10 factorial?", "long f = 1; for (int i = 2; i <= 10; i++) f *= i; return f;"],
      ["What is 15!?", "long f = 1; for (int i = 2; i <= 15; i++) f *= i; return f;"],
      ["What is 20 factorial?", "long f = 1; for (int i = 2; i <= 20; i++) f *= i; return f;"],
    ],
  },
  {
    task: "divisor_count",
    cases: [
      [
        "How many divisors does 360 have?",
        "long c = 0; for (long d = 1; d <= 360; d++) if (360 % d == 0) c++; return c;",
      ],
      [
        "How many divisors does 5040 have?",
        "long c = 0; for (long d = 1; d <= 5040; d++) if (5040 % d == 0) c++; return c;",
      ],
      [
        "How many positive divisors does 9973 have?",
        "long c = 0; for (long d = 1; d <= 9973; d++) if (9973 % d == 0) c++; return c;",
      ],
    ],
  },
  {
    task: "divisor_sum",
    cases: [
      [
        "What is the sum of all divisors of 496?",
        "long s = 0; for (long d = 1; d <= 496; d++) if (496 % d == 0) s += d; return s;",
      ],
      [
        "What is the sum of the divisors of 1000?",
        "long s = 0; for (long d = 1; d <= 1000; d++) if (1000 % d == 0) s += d; return s;",
      ],
    ],
  },
  {
    task: "collatz",
    cases: [
      [
        "How many steps does the Collatz sequence starting at 27 take to reach 1?",
        "long n = 27, s = 0; while (n != 1) { n = n % 2 ? 3 * n + 1 : n / 2; s++; } return s;",
      ],
      [
        "How many Collatz steps does it take to get from 97 to 1?",
        "long n = 97, s = 0; while (n != 1) { n = n % 2 ? 3 * n + 1 : n / 2; s++; } return s;",
      ],
      [
        "Starting from 871, how many Collatz steps reach 1?",
        "long n = 871, s = 0; while (n != 1) { n = n % 2 ? 3 * n + 1 : n / 2; s++; } return s;",
      ],
    ],
  },
  {
    task: "digit_sum",
    cases: [
      [
        "What is the sum of the digits of 2 to the power of 50?",
        "long n = 1; for (int i = 0; i < 50; i++) n *= 2; long s = 0; while (n) { s += n % 10; n /= 10; } return s;",
      ],
      [
        "What is the digit sum of 987654321?",
        "long n = 987654321, s = 0; while (n) { s += n % 10; n /= 10; } return s;",
      ],
    ],
  },
  {
    task: "reverse_digits",
    cases: [
      [
        "What do you get when you reverse the digits of 123456789?",
        "long n = 123456789, r = 0; while (n) { r = r * 10 + n % 10; n /= 10; } return r;",
      ],
      [
        "Reverse the digits of 90817. What number is it?",
        "long n = 90817, r = 0; while (n) { r = r * 10 + n % 10; n /= 10; } return r;",
      ],
    ],
  },
  {
    task: "power_mod",
    cases: [
      [
        "What is 3 to the power of 200, modulo 1000007?",
        "long r = 1; for (int i = 0; i < 200; i++) r = r * 3 % 1000007; return r;",
      ],
      [
        "What is 7^100 mod 13?",
        "long r = 1; for (int i = 0; i < 100; i++) r = r * 7 % 13; return r;",
      ],
    ],
  },
  {
    task: "totient",
    cases: [
      [
        "What is Euler's totient of 360?",
        "long c = 0; for (long k = 1; k <= 360; k++) { long a = k, b = 360; while (b) { long t = a % b; a = b; b = t; } if (a == 1) c++; } return c;",
      ],
      [
        "How many numbers from 1 to 1000 are coprime to 1000?",
        "long c = 0; for (long k = 1; k <= 1000; k++) { long a = k, b = 1000; while (b) { long t = a % b; a = b; b = t; } if (a == 1) c++; } return c;",
      ],
    ],
  },
  {
    task: "binomial",
    cases: [
      [
        "What is 30 choose 15?",
        "long r = 1; for (int i = 1; i <= 15; i++) r = r * (30 - 15 + i) / i; return r;",
      ],
      [
        "How many ways are there to choose 6 numbers out of 49?",
        "long r = 1; for (int i = 1; i <= 6; i++) r = r * (49 - 6 + i) / i; return r;",
      ],
    ],
  },
  {
    task: "sum_of_squares",
    cases: [
      [
        "What is the sum of the squares of the numbers from 1 to 100?",
        "long s = 0; for (long i = 1; i <= 100; i++) s += i * i; return s;",
      ],
      [
        "Add up k*k for k from 1 to 250.",
        "long s = 0; for (long i = 1; i <= 250; i++) s += i * i; return s;",
      ],
    ],
  },
  {
    task: "triangular",
    cases: [
      [
        "What is the 1500th triangular number?",
        "long s = 0; for (long i = 1; i <= 1500; i++) s += i; return s;",
      ],
      [
        "What is the sum of the integers from 1 to 777?",
        "long s = 0; for (long i = 1; i <= 777; i++) s += i; return s;",
      ],
    ],
  },
  // Array operations
  ...(
    [
      [
        "array_min",
        "smallest",
        "long m = a[0]; for (int i = 1; i < len; i++) if (a[i] < m) m = a[i]; return m;",
      ],
      [
        "array_max",
        "largest",
        "long m = a[0]; for (int i = 1; i < len; i++) if (a[i] > m) m = a[i]; return m;",
      ],
    ] as const
  ).map(([task, word, body]) => ({
    task,
    cases: [arrays.a!, arrays.b!].map((xs): [string, string] => [
      `What is the ${word} number in the list ${list(xs)}?`,
      `${cArray("a", xs)} ${body}`,
    ]),
  })),
  {
    task: "array_sum",
    cases: [arrays.a!, arrays.c!].map((xs): [string, string] => [
      `What is the sum of the list ${list(xs)}?`,
      `${cArray("a", xs)} long s = 0; for (int i = 0; i < len; i++) s += a[i]; return s;`,
    ]),
  },
  {
    task: "array_reverse",
    cases: [
      [arrays.a!, 2],
      [arrays.b!, 3],
    ].map(([xs, k]): [string, string] => [
      `Reverse the list ${list(xs as number[])}. What is element number ${k as number} (counting from 1) of the reversed list?`,
      `${cArray("a", xs as number[])} for (int i = 0, j = len - 1; i < j; i++, j--) { long t = a[i]; a[i] = a[j]; a[j] = t; } return a[${(k as number) - 1}];`,
    ]),
  },
  {
    task: "linear_search",
    cases: [
      [arrays.a!, 5],
      [arrays.b!, 77],
    ].map(([xs, v]): [string, string] => [
      `At which position (counting from 1) does ${v as number} first appear in the list ${list(xs as number[])}?`,
      `${cArray("a", xs as number[])} for (int i = 0; i < len; i++) if (a[i] == ${v as number}) return i + 1; return 0;`,
    ]),
  },
  {
    task: "binary_search",
    cases: [
      [[3, 9, 14, 22, 31, 47, 58, 69, 80, 95], 58],
      [[2, 5, 8, 13, 21, 34, 55, 89, 144], 21],
    ].map(([xs, v]): [string, string] => [
      `Using binary search, at which position (counting from 1) is ${v as number} in the sorted list ${list(xs as number[])}?`,
      `${cArray("a", xs as number[])} int lo = 0, hi = len - 1; while (lo <= hi) { int mid = (lo + hi) / 2; if (a[mid] == ${v as number}) return mid + 1; if (a[mid] < ${v as number}) lo = mid + 1; else hi = mid - 1; } return 0;`,
    ]),
  },
  {
    task: "count_value",
    cases: [
      [arrays.c!, 42],
      [[5, 1, 5, 5, 2, 9, 5, 3, 5], 5],
    ].map(([xs, v]): [string, string] => [
      `How many times does ${v as number} occur in the list ${list(xs as number[])}?`,
      `${cArray("a", xs as number[])} long c = 0; for (int i = 0; i < len; i++) if (a[i] == ${v as number}) c++; return c;`,
    ]),
  },
  {
    task: "count_even",
    cases: [arrays.a!, arrays.b!].map((xs): [string, string] => [
      `How many even numbers are in the list ${list(xs)}?`,
      `${cArray("a", xs)} long c = 0; for (int i = 0; i < len; i++) if (a[i] % 2 == 0) c++; return c;`,
    ]),
  },
  {
    task: "second_largest",
    cases: [arrays.a!, arrays.b!].map((xs): [string, string] => [
      `What is the second largest number in the list ${list(xs)}?`,
      `${cArray("a", xs)} long m1 = -1, m2 = -1; for (int i = 0; i < len; i++) { if (a[i] > m1) { m2 = m1; m1 = a[i]; } else if (a[i] > m2) m2 = a[i]; } return m2;`,
    ]),
  },
  // Bitwise
  {
    task: "popcount",
    cases: [
      [
        "How many 1 bits are in the binary form of 1000000?",
        "long n = 1000000, c = 0; while (n) { c += n & 1; n >>= 1; } return c;",
      ],
      [
        "What is the popcount of 65535?",
        "long n = 65535, c = 0; while (n) { c += n & 1; n >>= 1; } return c;",
      ],
    ],
  },
  {
    task: "next_power_of_two",
    cases: [
      [
        "What is the smallest power of two that is at least 1000?",
        "long p = 1; while (p < 1000) p <<= 1; return p;",
      ],
      [
        "What is the smallest power of 2 greater than or equal to 70000?",
        "long p = 1; while (p < 70000) p <<= 1; return p;",
      ],
    ],
  },
  {
    task: "highest_bit",
    cases: [
      [
        "What is the position of the highest set bit of 1000 (bit 0 is the lowest)?",
        "long n = 1000, p = -1; while (n) { n >>= 1; p++; } return p;",
      ],
      [
        "Counting from bit 0, which is the highest set bit of 123456?",
        "long n = 123456, p = -1; while (n) { n >>= 1; p++; } return p;",
      ],
    ],
  },
  {
    task: "lowest_bit",
    cases: [
      [
        "What is the position of the lowest set bit of 96 (bit 0 is the lowest)?",
        "long n = 96, p = 0; while (!(n & 1)) { n >>= 1; p++; } return p;",
      ],
      [
        "Counting from bit 0, which is the lowest set bit of 40960?",
        "long n = 40960, p = 0; while (!(n & 1)) { n >>= 1; p++; } return p;",
      ],
    ],
  },
  {
    task: "xor_range",
    cases: [
      [
        "What is the XOR of all integers from 1 to 100?",
        "long x = 0; for (long i = 1; i <= 100; i++) x ^= i; return x;",
      ],
      [
        "What do you get by XOR-ing together every integer from 1 to 1234?",
        "long x = 0; for (long i = 1; i <= 1234; i++) x ^= i; return x;",
      ],
    ],
  },
  // Project Euler, with the seeds' small variants and the real problems
  {
    task: "pe001",
    cases: [
      [
        "What is the sum of all the multiples of 3 or 5 below 1000?",
        "long s = 0; for (long i = 1; i < 1000; i++) if (i % 3 == 0 || i % 5 == 0) s += i; return s;",
      ],
      [
        "What is the sum of all the multiples of 3 or 5 below 10?",
        "long s = 0; for (long i = 1; i < 10; i++) if (i % 3 == 0 || i % 5 == 0) s += i; return s;",
      ],
    ],
  },
  {
    task: "pe002",
    cases: [
      [
        "What is the sum of the even Fibonacci numbers that do not exceed four million?",
        "long a = 1, b = 2, s = 0; while (a <= 4000000) { if (a % 2 == 0) s += a; long t = a + b; a = b; b = t; } return s;",
      ],
      [
        "What is the sum of the even Fibonacci numbers not exceeding 100?",
        "long a = 1, b = 2, s = 0; while (a <= 100) { if (a % 2 == 0) s += a; long t = a + b; a = b; b = t; } return s;",
      ],
    ],
  },
  {
    task: "pe003",
    cases: [
      [
        "What is the largest prime factor of 13195?",
        "long n = 13195, f = 2, last = 1; while (n > 1) { if (n % f == 0) { last = f; n /= f; } else f++; } return last;",
      ],
      [
        "What is the largest prime factor of 600851475143?",
        "long n = 600851475143, f = 2, last = 1; while (n > 1) { if (n % f == 0) { last = f; n /= f; } else f++; } return last;",
      ],
    ],
  },
  {
    task: "pe005",
    cases: [
      [
        "What is the smallest number evenly divisible by all of the numbers from 1 to 10?",
        "long r = 1; for (long k = 2; k <= 10; k++) { long a = r, b = k; while (b) { long t = a % b; a = b; b = t; } r = r / a * k; } return r;",
      ],
      [
        "What is the smallest positive number evenly divisible by all of the numbers from 1 to 20?",
        "long r = 1; for (long k = 2; k <= 20; k++) { long a = r, b = k; while (b) { long t = a % b; a = b; b = t; } r = r / a * k; } return r;",
      ],
    ],
  },
  {
    task: "pe006",
    cases: [
      [
        "What is the difference between the square of the sum and the sum of the squares of the first 100 natural numbers?",
        "long s = 0, q = 0; for (long i = 1; i <= 100; i++) { s += i; q += i * i; } return s * s - q;",
      ],
      [
        "What is the difference between the square of the sum and the sum of the squares of the first 10 natural numbers?",
        "long s = 0, q = 0; for (long i = 1; i <= 10; i++) { s += i; q += i * i; } return s * s - q;",
      ],
    ],
  },
  {
    task: "pe007",
    cases: [
      ["What is the 10001st prime number?", nthPrimeBody(10001)],
      ["What is the 6th prime number?", nthPrimeBody(6)],
    ],
  },
  {
    task: "pe009",
    cases: [
      [
        "There is exactly one Pythagorean triplet a < b < c with a + b + c = 1000. What is the product a*b*c?",
        "for (long a = 1; a < 1000; a++) for (long b = a + 1; a + b < 1000; b++) { long c = 1000 - a - b; if (a * a + b * b == c * c) return a * b * c; } return 0;",
      ],
      [
        "There is exactly one Pythagorean triplet a < b < c with a + b + c = 12. What is the product a*b*c?",
        "for (long a = 1; a < 12; a++) for (long b = a + 1; a + b < 12; b++) { long c = 12 - a - b; if (a * a + b * b == c * c) return a * b * c; } return 0;",
      ],
    ],
  },
  {
    task: "pe010",
    cases: [
      [
        "What is the sum of all the primes below two million?",
        `${sievePrefix(2000000)} return sum;`,
      ],
      ["What is the sum of all the primes below 100?", `${sievePrefix(100)} return sum;`],
    ],
  },
];

/** The whole reference program: `solve()` holds the algorithm, main prints its answer. */
export function referenceProgram(body: string): string {
  return `#include <stdio.h>\nlong solve(void) { ${body} }\nint main(void) { printf("%ld", solve()); return 0; }\n`;
}

/** Every question with its answer computed by the VM (throws if a reference program fails). */
export function algorithmQuestions(): AlgorithmQuestion[] {
  return ALGORITHMS.flatMap((alg) =>
    alg.cases.map(([question, body]) => {
      const code = referenceProgram(body);
      const outcome = runC(code, { profile: "large" });
      if (!outcome.ok) throw new Error(`${alg.task}: "${question}": ${outcome.error.message}`);
      return { task: alg.task, question, result: outcome.text, code };
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node dist/src/eval/algorithm-set.js OUT.jsonl");
    process.exit(2);
  }
  const questions = algorithmQuestions();
  writeFileSync(out, questions.map((q) => JSON.stringify(q)).join("\n") + "\n");
  console.error(`wrote ${questions.length} questions to ${out}`);
}
