// The runtime values of the Lisp: exact integers are bigints, floats are JS numbers, strings are
// JS strings, and everything else (symbols, pairs, procedures) is a small class.
import type { LambdaNode } from "./nodes.js";

/** An interned symbol: two symbols with the same name are the same object, so eq? is ===. */
export class Sym {
  constructor(readonly name: string) {}
}

const symbolTable = new Map<string, Sym>();

export function sym(name: string): Sym {
  let found = symbolTable.get(name);
  if (found === undefined) {
    found = new Sym(name);
    symbolTable.set(name, found);
  }
  return found;
}

/** The empty list. A class (not null) so that printing and type tests stay explicit. */
export class Nil {
  private constructor() {}
  static readonly instance = new Nil();
}
export const NIL = Nil.instance;

/** What set!, display and friends return; prints as nothing. */
export class Unspecified {
  private constructor() {}
  static readonly instance = new Unspecified();
}
export const UNSPECIFIED = Unspecified.instance;

export class Pair {
  constructor(
    public car: Value,
    public cdr: Value,
  ) {}
}

/** A lexical environment frame: one slot per parameter, let variable or internal define. */
export class Env {
  constructor(
    readonly slots: Value[],
    readonly parent: Env | null,
  ) {}
}

export class Closure {
  constructor(
    readonly lambda: LambdaNode,
    readonly env: Env | null,
  ) {}
  get name(): string {
    return this.lambda.name;
  }
}

/** Asks the evaluator to call `proc` with `args` (a fresh array: the callee may keep it); `then` receives the result (null: the call
 * is a tail call and its result is the builtin's result). This is how map, filter, apply and
 * friends call Lisp procedures without recursing in JavaScript. */
export class CallRequest {
  constructor(
    readonly proc: Value,
    readonly args: Value[],
    readonly then: ((result: Value) => Value | CallRequest) | null,
    /** Values the pending builtin holds on to, so the memory scan can count them. */
    readonly holds: Value[] | null = null,
  ) {}
}

/** Services a builtin may use: output, allocation accounting and step charging. */
export interface BuiltinContext {
  write(text: string): void;
  /** Records `bytes` of new heap; throws "memory limit exceeded" when the live heap is full. */
  allocate(bytes: number): void;
  /** Charges extra evaluation steps for work proportional to input size. */
  charge(steps: number): void;
  /** Rejects exact integers beyond the configured size. */
  checkInteger(n: bigint): bigint;
  readonly maxIntegerBits: number;
}

export class Builtin {
  constructor(
    readonly name: string,
    readonly minArgs: number,
    /** -1 for any number of arguments. */
    readonly maxArgs: number,
    readonly fn: (args: Value[], ctx: BuiltinContext) => Value | CallRequest,
  ) {}
}

export type Procedure = Closure | Builtin;

export type Value =
  bigint | number | boolean | string | Sym | Nil | Pair | Closure | Builtin | Unspecified;

/** Marks a letrec/internal-define slot that has not been initialised yet. */
export const UNASSIGNED = Symbol("unassigned") as unknown as Value;

export function isProcedure(v: Value): v is Procedure {
  return v instanceof Closure || v instanceof Builtin;
}

/** Only #f is false, as in Scheme. */
export function isTruthy(v: Value): boolean {
  return v !== false;
}

/** Builds a proper list from an array without recursion. */
export function arrayToList(items: Value[], tail: Value = NIL): Value {
  let list = tail;
  for (let i = items.length - 1; i >= 0; i--) list = new Pair(items[i], list);
  return list;
}

/** The elements of a proper list, or null if `v` is not one (improper or cyclic). */
export function listToArray(v: Value): Value[] | null {
  const items: Value[] = [];
  let slow = v;
  let cur = v;
  while (cur instanceof Pair) {
    items.push(cur.car);
    cur = cur.cdr;
    if ((items.length & 1) === 0) {
      slow = (slow as Pair).cdr;
      if (slow === cur && cur instanceof Pair) return null;
    }
  }
  return cur === NIL ? items : null;
}

/** The Lisp type name reported as VmValue.ctype and used in error messages. */
export function typeName(v: Value): string {
  switch (typeof v) {
    case "bigint":
      return "integer";
    case "number":
      return "float";
    case "boolean":
      return "boolean";
    case "string":
      return "string";
  }
  if (v instanceof Sym) return "symbol";
  if (v === NIL) return "list";
  if (v instanceof Pair) return listToArray(v) === null ? "pair" : "list";
  if (v instanceof Closure || v instanceof Builtin) return "procedure";
  return "void";
}
