// The typed syntax tree the parser builds and the code generator walks, plus the symbol
// tables (variables, functions, typedefs, tags) that a session carries from block to block.
import type { Pos } from "./errors.js";
import { LayeredMap } from "./layered-map.js";
import { T, isFloat, type Member, type Type } from "./types.js";

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

/** What an ordinary identifier names in a block scope. */
export type ScopeEntry = Var | { typedef: Type } | { enumConst: bigint };

/** A block scope's names. Its maps are made on first use: most scopes (a loop's body, an if's
 * braces) declare nothing, and the parser enters one per compound statement. */
export class Scope {
  private vars: Map<string, ScopeEntry> | null = null;
  private tags: Map<string, Type> | null = null;
  getVar(name: string): ScopeEntry | undefined {
    return this.vars === null ? undefined : this.vars.get(name);
  }
  setVar(name: string, entry: ScopeEntry): void {
    (this.vars ??= new Map()).set(name, entry);
  }
  getTag(name: string): Type | undefined {
    return this.tags === null ? undefined : this.tags.get(name);
  }
  setTag(name: string, ty: Type): void {
    (this.tags ??= new Map()).set(name, ty);
  }
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

  /** A root scope holding everything visible here. For a base that no longer changes (the C
   * library's, under every session): a name a block looks up goes through one map for it
   * instead of one per layer it was built in. */
  flattened(): GlobalScope {
    const flat = new GlobalScope();
    for (const [k, v] of this.vars) flat.vars.set(k, v);
    for (const [k, v] of this.funcs) flat.funcs.set(k, v);
    for (const [k, v] of this.typedefs) flat.typedefs.set(k, v);
    for (const [k, v] of this.tags) flat.tags.set(k, v);
    for (const [k, v] of this.enumConsts) flat.enumConsts.set(k, v);
    return flat;
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

/** Every field any node kind has, each present on every node. */
type NodeRecord = { -readonly [F in keyof UnionFields<Node>]: UnionFields<Node>[F] };
type UnionFields<N> = { [F in N extends unknown ? keyof N : never]?: unknown };

/** A node of `kind` at a source position with every field of every kind present, in one
 * order: the nodes then share one hidden class, so the code generator's walks read their
 * fields monomorphically (objects built from differing literals made every `n.lhs` a
 * megamorphic lookup). The factories below fill in a kind's own fields by plain stores: the
 * parser builds a few dozen nodes per statement, and copying a literal of fields in
 * (Object.assign) took four times as long as the node itself. */
function blank(kind: NodeKind, at: Pos): NodeRecord {
  return {
    kind,
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
}

/** A node of kind K from a literal of its fields (for code outside the parser's hot path;
 * the parser uses the factories below). The types give each kind exactly its own fields. */
export function newNode<K extends NodeKind>(kind: K, at: Pos, fields: NodeFields<K>): NodeOf<K> {
  return Object.assign(blank(kind, at), fields) as unknown as NodeOf<K>;
}

/** A literal of type `ty`. */
export function numNode(v: bigint | number, ty: Type, at: Pos): NumNode {
  const n = blank("num", at);
  n.ty = ty;
  if (isFloat(ty)) n.fval = Number(v);
  else n.ival = typeof v === "bigint" ? v : BigInt(v);
  return n as NumNode;
}

export function strNode(at: Pos, bytes: number[], addr: number, ty: Type): StrNode {
  const n = blank("str", at);
  n.bytes = bytes;
  n.addr = addr;
  n.ty = ty;
  return n as StrNode;
}

export function varNode(at: Pos, v: Var, ty: Type): VarNode {
  const n = blank("var", at);
  n.v = v;
  n.ty = ty;
  return n as VarNode;
}

export function funcRefNode(at: Pos, callee: string, fnTy: Type): FuncRefNode {
  const n = blank("funcref", at);
  n.callee = callee;
  n.fnTy = fnTy;
  n.ty = fnTy;
  return n as FuncRefNode;
}

/** `lhs op rhs` (binary) or `lhs op= rhs` (opassign), computed in opTy. */
function operatorNode(
  kind: "binary" | "opassign",
  at: Pos,
  op: BinOp,
  lhs: Expr,
  rhs: Expr,
  ty: Type,
  opTy: Type,
  checked: boolean,
): NodeRecord {
  const n = blank(kind, at);
  n.op = op;
  n.lhs = lhs;
  n.rhs = rhs;
  n.ty = ty;
  n.opTy = opTy;
  n.checked = checked;
  return n;
}

export function binaryNode(
  at: Pos,
  op: BinOp,
  lhs: Expr,
  rhs: Expr,
  ty: Type,
  opTy: Type,
  checked = false,
): BinaryNode {
  return operatorNode("binary", at, op, lhs, rhs, ty, opTy, checked) as BinaryNode;
}

/** A node of two operands and its type: `&&`, `||`, `=`, `,`. */
function pairNode(kind: NodeKind, at: Pos, lhs: Expr, rhs: Expr, ty: Type): NodeRecord {
  const n = blank(kind, at);
  n.lhs = lhs;
  n.rhs = rhs;
  n.ty = ty;
  return n;
}

/** `&&` or `||`: an int. */
export function logicalNode(kind: LogicalNode["kind"], at: Pos, lhs: Expr, rhs: Expr): LogicalNode {
  return pairNode(kind, at, lhs, rhs, T.int) as LogicalNode;
}

export function assignNode(at: Pos, lhs: Expr, rhs: Expr, ty: Type): AssignNode {
  return pairNode("assign", at, lhs, rhs, ty) as AssignNode;
}

export function opAssignNode(
  at: Pos,
  op: BinOp,
  lhs: Expr,
  rhs: Expr,
  ty: Type,
  opTy: Type,
  checked = false,
): OpAssignNode {
  return operatorNode("opassign", at, op, lhs, rhs, ty, opTy, checked) as OpAssignNode;
}

export function incDecNode(
  at: Pos,
  lhs: Expr,
  delta: number,
  prefix: boolean,
  ty: Type,
  checked: boolean,
): IncDecNode {
  const n = blank("incdec", at);
  n.lhs = lhs;
  n.delta = delta;
  n.prefix = prefix;
  n.ty = ty;
  n.checked = checked;
  return n as IncDecNode;
}

export function commaNode(at: Pos, lhs: Expr, rhs: Expr): CommaNode {
  return pairNode("comma", at, lhs, rhs, rhs.ty) as CommaNode;
}

export function condNode(at: Pos, cond: Expr, then: Expr, els: Expr, ty: Type): CondNode {
  const n = blank("cond", at);
  n.cond = cond;
  n.then = then;
  n.els = els;
  n.ty = ty;
  return n as CondNode;
}

export function negNode(at: Pos, lhs: Expr, ty: Type, checked: boolean): NegNode {
  const n = blank("neg", at);
  n.lhs = lhs;
  n.ty = ty;
  n.checked = checked;
  return n as NegNode;
}

/** `!x`, `~x`, `&x`, `*p`, or a conversion of `lhs` to `ty`. */
export function unaryNode(kind: UnaryNode["kind"], at: Pos, lhs: Expr, ty: Type): UnaryNode {
  const n = blank(kind, at);
  n.lhs = lhs;
  n.ty = ty;
  return n as UnaryNode;
}

export function memberNode(at: Pos, lhs: Expr, member: Member): MemberNode {
  const n = blank("member", at);
  n.lhs = lhs;
  n.member = member;
  n.ty = member.ty;
  return n as MemberNode;
}

/** A call of `callee` by name, or (callee undefined) through the pointer `lhs`. */
export function callNode(
  at: Pos,
  callee: string | undefined,
  lhs: Expr | undefined,
  fnTy: Type,
  args: Expr[],
  ty: Type,
): CallNode {
  const n = blank("call", at);
  n.callee = callee;
  n.lhs = lhs;
  n.fnTy = fnTy;
  n.args = args;
  n.ty = ty;
  return n as CallNode;
}

export function stmtExprNode(at: Pos, body: Stmt[], ty: Type): StmtExprNode {
  const n = blank("stmtexpr", at);
  n.body = body;
  n.ty = ty;
  return n as StmtExprNode;
}

export function unresolvedNode(at: Pos, callee: string): UnresolvedNode {
  const n = blank("unresolved", at);
  n.callee = callee;
  n.ty = T.int;
  return n as UnresolvedNode;
}

export function blockNode(at: Pos, body: Stmt[]): BlockNode {
  const n = blank("block", at);
  n.body = body;
  return n as BlockNode;
}

export function exprStmtNode(at: Pos, lhs: Expr): ExprStmtNode {
  const n = blank("exprstmt", at);
  n.lhs = lhs;
  return n as ExprStmtNode;
}

export function returnNode(at: Pos, lhs?: Expr): ReturnNode {
  const n = blank("return", at);
  n.lhs = lhs;
  return n as ReturnNode;
}

export function ifNode(at: Pos, cond: Expr, then: Stmt, els?: Stmt): IfNode {
  const n = blank("if", at);
  n.cond = cond;
  n.then = then;
  n.els = els;
  return n as IfNode;
}

/** `for`, and `while` (a for with only a condition). */
export function forNode(
  at: Pos,
  init: Stmt | undefined,
  cond: Expr | undefined,
  inc: Expr | undefined,
  then: Stmt,
): ForNode {
  const n = blank("for", at);
  n.init = init;
  n.cond = cond;
  n.inc = inc;
  n.then = then;
  return n as ForNode;
}

export function doNode(at: Pos, cond: Expr, then: Stmt): DoNode {
  const n = blank("do", at);
  n.cond = cond;
  n.then = then;
  return n as DoNode;
}

export function switchNode(at: Pos, cond: Expr, then: Stmt, cases: SwitchCase[]): SwitchNode {
  const n = blank("switch", at);
  n.cond = cond;
  n.then = then;
  n.cases = cases;
  return n as SwitchNode;
}

export function caseNode(at: Pos, caseValue: bigint | null, then: Stmt): CaseNode {
  const n = blank("case", at);
  n.caseValue = caseValue;
  n.then = then;
  return n as CaseNode;
}

/** `break`, `continue`, or the empty statement. */
export function jumpNode(kind: JumpNode["kind"], at: Pos): JumpNode {
  return blank(kind, at) as JumpNode;
}

export function declNode(
  at: Pos,
  v: Var,
  lhs: VarNode,
  initializer: Initializer | undefined,
  rhs?: Expr,
): DeclNode {
  const n = blank("decl", at);
  n.v = v;
  n.lhs = lhs;
  n.initializer = initializer;
  n.rhs = rhs;
  return n as DeclNode;
}

export function labelNode(at: Pos, label: string, then: Stmt): LabelNode {
  const n = blank("label", at);
  n.label = label;
  n.then = then;
  return n as LabelNode;
}

export function gotoNode(at: Pos, label: string): GotoNode {
  const n = blank("goto", at);
  n.label = label;
  return n as GotoNode;
}
