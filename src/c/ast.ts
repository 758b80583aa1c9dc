// The typed syntax tree the parser builds and the code generator walks, plus the symbol
// tables (variables, functions, typedefs, tags) that a session carries from block to block.
import type { Pos } from "./errors.js";
import { LayeredMap } from "./layered-map.js";
import { isFloat, type Member, type Type } from "./types.js";

export type NodeKind =
  // expressions
  | "num"
  | "str"
  | "var"
  | "funcref"
  | "binary"
  | "logand"
  | "logor"
  | "assign"
  | "opassign"
  | "incdec"
  | "comma"
  | "cond"
  | "neg"
  | "not"
  | "bitnot"
  | "addr"
  | "deref"
  | "member"
  | "cast"
  | "call"
  /** GNU statement expression `({ …; value; })`, also what a compound literal becomes: runs
   * `body`, and its value is that of the last statement when it is an expression. */
  | "stmtexpr"
  /** A call to a name not declared yet (resolved at the end of the block). */
  | "unresolved"
  // statements
  | "block"
  | "exprstmt"
  | "return"
  | "if"
  | "for"
  | "do"
  | "switch"
  | "case"
  | "break"
  | "continue"
  | "decl"
  | "null"
  | "label"
  | "goto";

export type BinOp =
  | "+"
  | "-"
  | "*"
  | "/"
  | "%"
  | "<<"
  | ">>"
  | "&"
  | "|"
  | "^"
  | "=="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">=";

/** Locals bigger than this (e.g. `int sieve[2000000]`) live on the heap for the call's duration,
 * so a small shadow stack still runs programs that declare big arrays in main. */
export const LARGE_LOCAL_BYTES = 64 * 1024;

export interface Var {
  name: string;
  ty: Type;
  global: boolean;
  /** Global: its fixed address in VM memory. */
  addr: number;
  /** Local whose address is taken (or an array/struct): it lives in the shadow-stack frame. */
  inMemory: boolean;
  isParam: boolean;
  /** Unique per function, used by the code generator to find the wasm local or frame slot. */
  id: number;
}

/** An initializer tree: a scalar expression, or one entry per element/member (zeros elsewhere). */
export interface Initializer {
  ty: Type;
  expr?: Node;
  /** For aggregates: [offset-relative initializer, element/member offset]. */
  items?: { offset: number; init: Initializer }[];
  /** char array initialized from a string literal. */
  bytes?: number[];
}

export interface SwitchCase {
  value: bigint | null; // null: default
  node: Node;
}

export interface Node {
  kind: NodeKind;
  line: number;
  col: number;
  ty?: Type;
  op?: BinOp;
  lhs?: Node;
  rhs?: Node;
  cond?: Node;
  then?: Node;
  els?: Node;
  init?: Node;
  inc?: Node;
  body?: Node[];
  args?: Node[];
  v?: Var;
  /** call: the callee's name when it is called directly (user function, library or intrinsic). */
  callee?: string;
  /** call through a pointer / callee function type. */
  fnTy?: Type;
  ival?: bigint;
  fval?: number;
  bytes?: number[];
  /** str: address of the literal in VM memory, assigned once at parse time. */
  addr?: number;
  member?: Member;
  /** incdec: +1/-1 and whether the new value is the result. */
  delta?: number;
  prefix?: boolean;
  /** opassign: the type the arithmetic happens in. */
  opTy?: Type;
  initializer?: Initializer;
  cases?: SwitchCase[];
  /** label/goto: the label's name. */
  label?: string;
  /** case: the constant value, null for default. */
  caseValue?: bigint | null;
  /** binary/neg/opassign/incdec on a signed integer written by the user: traps on overflow
   * (the compiler's own address arithmetic wraps). */
  checked?: boolean;
}

/** A node with every field present, always in the same order: the parser's nodes then share
 * one hidden class, so the code generator's walks read their fields monomorphically (objects
 * built from differing literals made every `n.lhs` a megamorphic lookup). */
export function makeNode(kind: NodeKind, line: number, col: number, extra: Partial<Node>): Node {
  const n: Node = {
    kind,
    line,
    col,
    ty: undefined,
    op: undefined,
    lhs: undefined,
    rhs: undefined,
    cond: undefined,
    then: undefined,
    els: undefined,
    init: undefined,
    inc: undefined,
    body: undefined,
    args: undefined,
    v: undefined,
    callee: undefined,
    fnTy: undefined,
    ival: undefined,
    fval: undefined,
    bytes: undefined,
    addr: undefined,
    member: undefined,
    delta: undefined,
    prefix: undefined,
    opTy: undefined,
    initializer: undefined,
    cases: undefined,
    label: undefined,
    caseValue: undefined,
    checked: undefined,
  };
  return Object.assign(n, extra);
}

export interface Func {
  name: string;
  ty: Type;
  params: Var[];
  locals: Var[];
  body: Node | null;
  line: number;
  col: number;
  /** Names of functions (user, library, intrinsic) this one calls or takes the address of. */
  refs: Map<string, { line: number; col: number }>;
  isStatic: boolean;
  /** The C library's own code: it may touch the null guard, where the allocator keeps its state. */
  library?: boolean;
  /** For a function with `...`: the hidden parameter pointing at its variadic argument slots. */
  varargs?: Var;
  /** Labels defined and goto statements seen (checked when the body has been read). */
  labels?: Set<string>;
  gotos?: { text: string; line: number; col: number }[];
  /** Declares a variable-length array (so the stack pointer is saved and restored). */
  hasVla?: boolean;
  /** Calls through a function pointer (so it may recurse in ways the call graph cannot show). */
  indirect?: boolean;
  /** Its switch statements (a case in a nested statement needs the goto machinery). */
  switches?: Node[];
}

/** Symbols visible at file scope. A session keeps one (layered over the C library's); each
 * block parses into a layer over it (clone), which commit() folds in once the block compiled. */
export class GlobalScope {
  readonly vars: LayeredMap<string, Var>;
  readonly funcs: LayeredMap<string, Func>;
  readonly typedefs: LayeredMap<string, Type>;
  readonly tags: LayeredMap<string, Type>;
  readonly enumConsts: LayeredMap<string, bigint>;

  constructor(private readonly parent: GlobalScope | null = null) {
    this.vars = new LayeredMap(parent?.vars);
    this.funcs = new LayeredMap(parent?.funcs);
    this.typedefs = new LayeredMap(parent?.typedefs);
    this.tags = new LayeredMap(parent?.tags);
    this.enumConsts = new LayeredMap(parent?.enumConsts);
  }

  /** A scope over this one: it sees everything here, and what it defines stays in it. */
  clone(): GlobalScope {
    return new GlobalScope(this);
  }

  /** Folds this scope's definitions into the one it was cloned from, and returns that one. */
  commit(): GlobalScope {
    if (!this.parent) return this;
    this.vars.commit();
    this.funcs.commit();
    this.typedefs.commit();
    this.tags.commit();
    this.enumConsts.commit();
    return this.parent;
  }
}

/** A node at a source position. */
export function newNode(kind: NodeKind, at: Pos, extra: Partial<Node> = {}): Node {
  return makeNode(kind, at.line, at.col, extra);
}

/** A literal of type `ty`. */
export function numNode(v: bigint | number, ty: Type, at: Pos): Node {
  if (isFloat(ty)) return newNode("num", at, { ty, fval: Number(v) });
  return newNode("num", at, { ty, ival: BigInt(v) });
}
