// The typed syntax tree the parser builds and the code generator walks, plus the symbol
// tables (variables, functions, typedefs, tags) that a session carries from block to block.
import type { Pos } from "./errors.js";
import { LayeredMap } from "./layered-map.js";
import { isFloat, type Member, type Type } from "./types.js";

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

/** An initializer tree: a scalar (or whole-struct) expression, one entry per element/member
 * given (zeros elsewhere), or a char array's bytes from a string literal. */
export type Initializer =
  | { ty: Type; expr: Expr; items?: undefined; bytes?: undefined }
  | { ty: Type; items: InitItem[]; expr?: undefined; bytes?: undefined }
  | { ty: Type; bytes: number[]; expr?: undefined; items?: undefined };

/** An element or member initializer at its byte offset in the enclosing object. */
export interface InitItem {
  offset: number;
  init: Initializer;
}

export interface SwitchCase {
  value: bigint | null; // null: default
  node: CaseNode;
}

/** Where a node starts in the source. */
interface At {
  line: number;
  col: number;
}
/** Every expression has its C type once built. */
interface ExprAt extends At {
  ty: Type;
}

// ---- expressions ----
/** An integer literal (`ival`) or a floating one (`fval`). */
export type NumNode = ExprAt & { kind: "num" } & (
    { ival: bigint; fval?: undefined } | { fval: number; ival?: undefined }
  );
export interface StrNode extends ExprAt {
  kind: "str";
  bytes: number[];
  /** Address of the literal in VM memory, assigned once at parse time. */
  addr: number;
}
export interface VarNode extends ExprAt {
  kind: "var";
  v: Var;
}
/** A function named as a value (its table slot), or a library function's designator. */
export interface FuncRefNode extends ExprAt {
  kind: "funcref";
  callee: string;
  fnTy: Type;
}
export interface BinaryNode extends ExprAt {
  kind: "binary";
  op: BinOp;
  lhs: Expr;
  rhs: Expr;
  /** The type the operation happens in (the operands' after conversion). */
  opTy: Type;
  /** Signed integer arithmetic written by the user: traps on overflow (the compiler's own
   * address arithmetic wraps). */
  checked?: boolean;
}
export interface LogicalNode extends ExprAt {
  kind: "logand" | "logor";
  lhs: Expr;
  rhs: Expr;
}
export interface AssignNode extends ExprAt {
  kind: "assign";
  lhs: Expr;
  rhs: Expr;
}
export interface OpAssignNode extends ExprAt {
  kind: "opassign";
  op: BinOp;
  lhs: Expr;
  rhs: Expr;
  /** The type the arithmetic happens in. */
  opTy: Type;
  checked?: boolean;
}
export interface IncDecNode extends ExprAt {
  kind: "incdec";
  lhs: Expr;
  /** The step (+1/-1, or the pointee size for pointers). */
  delta: number;
  /** Whether the new value is the result. */
  prefix: boolean;
  checked?: boolean;
}
export interface CommaNode extends ExprAt {
  kind: "comma";
  lhs: Expr;
  rhs: Expr;
}
export interface CondNode extends ExprAt {
  kind: "cond";
  cond: Expr;
  then: Expr;
  els: Expr;
}
export interface NegNode extends ExprAt {
  kind: "neg";
  lhs: Expr;
  checked?: boolean;
}
/** `!x`, `~x`, `&x`, `*p`, and a conversion to `ty`. */
export interface UnaryNode extends ExprAt {
  kind: "not" | "bitnot" | "addr" | "deref" | "cast";
  lhs: Expr;
}
export interface MemberNode extends ExprAt {
  kind: "member";
  lhs: Expr;
  member: Member;
}
export interface CallNode extends ExprAt {
  kind: "call";
  /** The callee's name when it is called directly (user function, library or intrinsic). */
  callee?: string;
  /** The callee expression when it is called through a pointer. */
  lhs?: Expr;
  /** The callee's function type. */
  fnTy: Type;
  args: Expr[];
}
/** GNU statement expression `({ …; value; })`, also what a compound literal becomes: runs
 * `body`, and its value is that of the last statement when it is an expression. */
export interface StmtExprNode extends ExprAt {
  kind: "stmtexpr";
  body: Stmt[];
}
/** A name not declared yet, about to be called (the call resolves it at the end of the block). */
export interface UnresolvedNode extends ExprAt {
  kind: "unresolved";
  callee: string;
}

export type Expr =
  | NumNode
  | StrNode
  | VarNode
  | FuncRefNode
  | BinaryNode
  | LogicalNode
  | AssignNode
  | OpAssignNode
  | IncDecNode
  | CommaNode
  | CondNode
  | NegNode
  | UnaryNode
  | MemberNode
  | CallNode
  | StmtExprNode
  | UnresolvedNode;

// ---- statements ----
export interface BlockNode extends At {
  kind: "block";
  body: Stmt[];
}
export interface ExprStmtNode extends At {
  kind: "exprstmt";
  lhs: Expr;
}
export interface ReturnNode extends At {
  kind: "return";
  lhs?: Expr;
}
export interface IfNode extends At {
  kind: "if";
  cond: Expr;
  then: Stmt;
  els?: Stmt;
}
export interface ForNode extends At {
  kind: "for";
  /** A declaration (a block of them) or an expression statement. */
  init?: Stmt;
  cond?: Expr;
  inc?: Expr;
  then: Stmt;
}
export interface DoNode extends At {
  kind: "do";
  cond: Expr;
  then: Stmt;
}
export interface SwitchNode extends At {
  kind: "switch";
  cond: Expr;
  then: Stmt;
  cases: SwitchCase[];
}
/** `case v: stmt` or `default: stmt`. */
export interface CaseNode extends At {
  kind: "case";
  /** The constant value, null for default. */
  caseValue: bigint | null;
  then: Stmt;
}
export interface JumpNode extends At {
  kind: "break" | "continue" | "null";
}
/** A local's definition: its initializer, or (a variable-length array) its length. */
export interface DeclNode extends At {
  kind: "decl";
  v: Var;
  lhs: VarNode;
  initializer?: Initializer;
  /** Variable-length array: the length expression. */
  rhs?: Expr;
}
export interface LabelNode extends At {
  kind: "label";
  label: string;
  then: Stmt;
}
export interface GotoNode extends At {
  kind: "goto";
  label: string;
}

export type Stmt =
  | BlockNode
  | ExprStmtNode
  | ReturnNode
  | IfNode
  | ForNode
  | DoNode
  | SwitchNode
  | CaseNode
  | JumpNode
  | DeclNode
  | LabelNode
  | GotoNode;

export type Node = Expr | Stmt;
export type NodeKind = Node["kind"];
/** The node type of one kind (a node type may serve several kinds, e.g. UnaryNode). */
export type NodeOf<K extends NodeKind> = OfKind<Node, K>;
type OfKind<N, K> = N extends { kind: infer NK } ? (K extends NK ? N : never) : never;
/** What a node of kind K carries besides its kind and position. */
export type NodeFields<K extends NodeKind> = Omit<NodeOf<K>, "kind" | "line" | "col">;

/** Calls `visit` on each node directly inside `n` (initializers' expressions included), for
 * walks that look at every node. Allocates nothing: tree walks run for every compiled block. */
export function forEachChild(n: Node, visit: (child: Node) => void): void {
  switch (n.kind) {
    case "num":
    case "str":
    case "var":
    case "funcref":
    case "unresolved":
    case "break":
    case "continue":
    case "null":
    case "goto":
      return;
    case "binary":
    case "logand":
    case "logor":
    case "assign":
    case "opassign":
    case "comma":
      visit(n.lhs);
      visit(n.rhs);
      return;
    case "incdec":
    case "neg":
    case "not":
    case "bitnot":
    case "addr":
    case "deref":
    case "cast":
    case "member":
    case "exprstmt":
      visit(n.lhs);
      return;
    case "return":
      if (n.lhs) visit(n.lhs);
      return;
    case "cond":
    case "if":
      visit(n.cond);
      visit(n.then);
      if (n.els) visit(n.els);
      return;
    case "call":
      if (n.lhs) visit(n.lhs);
      for (const a of n.args) visit(a);
      return;
    case "stmtexpr":
    case "block":
      for (const b of n.body) visit(b);
      return;
    case "for":
      if (n.init) visit(n.init);
      if (n.cond) visit(n.cond);
      if (n.inc) visit(n.inc);
      visit(n.then);
      return;
    case "do":
    case "switch":
      visit(n.cond);
      visit(n.then);
      return;
    case "label":
    case "case":
      visit(n.then);
      return;
    case "decl":
      visit(n.lhs);
      if (n.rhs) visit(n.rhs);
      if (n.initializer) forEachInitializerExpr(n.initializer, visit);
      return;
    default: {
      const never: never = n;
      throw new Error(`unknown node ${(never as Node).kind}`);
    }
  }
}

/** The statements directly inside a statement (a loop's body, an if's branches, a block's
 * statements; a for's declaration too). */
export function statementsIn(n: Node): Stmt[] {
  switch (n.kind) {
    case "block":
      return n.body;
    case "if":
      return n.els ? [n.then, n.els] : [n.then];
    case "for":
      return n.init ? [n.then, n.init] : [n.then];
    case "do":
    case "switch":
    case "label":
    case "case":
      return [n.then];
    default:
      return [];
  }
}

/** Calls `visit` on each expression of an initializer tree, in order. */
export function forEachInitializerExpr(init: Initializer, visit: (e: Expr) => void): void {
  if (init.expr) visit(init.expr);
  else if (init.items) for (const it of init.items) forEachInitializerExpr(it.init, visit);
}

export interface Func {
  name: string;
  ty: Type;
  params: Var[];
  locals: Var[];
  body: BlockNode | null;
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
  switches?: SwitchNode[];
  /** The most 8-byte slots any of its calls passes as variadic arguments (noted while parsing,
   * so code generation needs no walk of the body to size the frame's vararg area). */
  varargSlots?: number;
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

/** A node of kind K at a source position. Every node is built with every field of every
 * kind present, in one order: the nodes then share one hidden class, so the code generator's
 * walks read their fields monomorphically (objects built from differing literals made every
 * `n.lhs` a megamorphic lookup). The types still give each kind exactly its own fields. */
export function newNode<K extends NodeKind>(kind: K, at: Pos, fields: NodeFields<K>): NodeOf<K> {
  const n = {
    kind: kind as NodeKind,
    line: at.line,
    col: at.col,
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
  return Object.assign(n, fields) as unknown as NodeOf<K>;
}

/** A literal of type `ty`. */
export function numNode(v: bigint | number, ty: Type, at: Pos): NumNode {
  return isFloat(ty)
    ? (newNode("num", at, { ty, fval: Number(v) } as NodeFields<"num">) as NumNode)
    : (newNode("num", at, { ty, ival: BigInt(v) } as NodeFields<"num">) as NumNode);
}
