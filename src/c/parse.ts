// Stage 3: a recursive-descent parser that builds the typed tree (type checking happens as
// nodes are built, chibicc-style): declarations, statements and expressions, each parse
// function under its grammar rule. Its helper passes live beside it: fold.ts (constant
// folding), initializers.ts (initializer lists and static data), entry.ts (the synthetic
// function that runs a block's top-level statements), layout.ts (struct layout).
import type {
  BinOp,
  BlockNode,
  CallNode,
  Expr,
  Func,
  Initializer,
  NumNode,
  Stmt,
  SwitchCase,
  Var,
} from "./ast.js";
import {
  GlobalScope,
  Scope,
  type ScopeEntry,
  LARGE_LOCAL_BYTES,
  numNode,
  assignNode,
  binaryNode,
  blockNode,
  callNode,
  caseNode,
  commaNode,
  condNode,
  declNode,
  doNode,
  exprStmtNode,
  forNode,
  funcRefNode,
  gotoNode,
  ifNode,
  incDecNode,
  jumpNode,
  labelNode,
  logicalNode,
  memberNode,
  negNode,
  opAssignNode,
  returnNode,
  stmtExprNode,
  strNode,
  switchNode,
  unaryNode,
  unresolvedNode,
  varNode,
} from "./ast.js";
import {
  ENTRY_NAME,
  EntryState,
  entryReturn,
  ensureEntry,
  finishEntry,
  topLevelStatement,
} from "./entry.js";
import { fold, foldLogical, foldNum, intValue, wrapInt } from "./fold.js";
import { initializer, staticInit } from "./initializers.js";
import { CompileError, syntaxError, typeError, type Pos } from "./errors.js";
import { layoutMembers, type MemberDecl } from "./layout.js";
import { keepShape } from "./shapes.js";
import type { Token } from "./tokenize.js";
import {
  T,
  arrayOf,
  enumType,
  funcType,
  isAggregate,
  isFloat,
  isInteger,
  isNumeric,
  isPointerLike,
  isScalar,
  newType,
  pointerTo,
  promote,
  sameType,
  typeName,
  usualArith,
  varargSlots,
  type Type,
} from "./types.js";

/** What the parser needs from its surroundings: memory for literals and globals, known callees. */
export interface ParseHost {
  /** Reserves permanent VM memory (globals, string literals) and returns its address. */
  alloc(size: number, align: number): number;
  /** Writes bytes into VM memory at once (string literals). */
  write(addr: number, bytes: Uint8Array): void;
  /** Where a string literal's bytes are, when the host shares identical literals (C allows it:
   * C11 6.4.5p7); without it each literal gets its own alloc and write. */
  literal?(bytes: Uint8Array, align: number): number;
  /** Where a string literal written straight as an argument of `callee` in the top-level
   * statements goes when the host can keep it for this run only (the entry runs once, and a
   * callee it accepts reads the string without keeping the pointer); undefined: a lasting one. */
  argumentLiteral?(bytes: Uint8Array, align: number, callee: string): number | undefined;
  /** C type of a library function, if `name` is one. */
  libraryType(name: string): Type | undefined;
  /** C type of an intrinsic registered for this session. */
  intrinsicType(name: string): Type | undefined;
  /** True for the names Ruffian reserves for intrinsics, registered or not. */
  isKnownIntrinsic(name: string): boolean;
  /** Address of `main`'s argv: { argv[0], NULL } in VM memory (0 when there is none). */
  argv?(): number;
}

export interface StaticInit {
  addr: number;
  bytes: Uint8Array;
}

export interface ParsedBlock {
  scope: GlobalScope;
  /** Functions defined (or redefined) by this block. */
  defined: Func[];
  /** Global data to write before the block runs. */
  inits: StaticInit[];
  /** The synthetic function holding top-level statements, if there are any. */
  entry: Func | null;
  /** The block is a whole program: it defines main and the entry runs it. */
  runsMain: boolean;
}

export interface DeclSpec {
  ty: Type;
  isTypedef: boolean;
  isStatic: boolean;
  isExtern: boolean;
}

const ASSIGN_OPS: ReadonlyMap<string, BinOp> = new Map<string, BinOp>([
  ["+=", "+"],
  ["-=", "-"],
  ["*=", "*"],
  ["/=", "/"],
  ["%=", "%"],
  ["<<=", "<<"],
  [">>=", ">>"],
  ["&=", "&"],
  ["|=", "|"],
  ["^=", "^"],
]);

const BUILTIN_TYPEDEFS: [string, Type][] = [
  ["size_t", T.ulong],
  ["ssize_t", T.long],
  ["ptrdiff_t", T.long],
  ["intptr_t", T.long],
  ["uintptr_t", T.ulong],
  ["int8_t", T.char],
  ["uint8_t", T.uchar],
  ["int16_t", T.short],
  ["uint16_t", T.ushort],
  ["int32_t", T.int],
  ["uint32_t", T.uint],
  ["int64_t", T.long],
  ["uint64_t", T.ulong],
  ["FILE", T.void],
  ["wchar_t", T.int],
  ["wint_t", T.uint],
  ["va_list", pointerTo(T.char)],
  ["__builtin_va_list", pointerTo(T.char)],
];

/** The C type of a number literal, by the tokenizer's spelling of it. */
const LITERAL_TYPES: Record<NonNullable<Token["numType"]>, Type> = {
  int: T.int,
  uint: T.uint,
  long: T.long,
  ulong: T.ulong,
  float: T.float,
  double: T.double,
};

const STDARG_MACROS: ReadonlySet<string> = new Set(["va_start", "va_arg", "va_end", "va_copy"]);

/** Keywords that cannot begin a declaration. */
const STATEMENT_KEYWORDS: ReadonlySet<string> = new Set(
  "break case continue default do else for goto if return sizeof switch while".split(" "),
);

export { ENTRY_NAME, mainArgs } from "./entry.js";

/** How often each type keyword appears in one declaration's specifiers (`unsigned long long`):
 * plain counters, since a declaration is parsed for nearly every statement of a block. */
class TypeWords {
  void = 0;
  bool = 0;
  char = 0;
  short = 0;
  int = 0;
  long = 0;
  float = 0;
  double = 0;
  signed = 0;
  unsigned = 0;
  total = 0;
  add(word: string): void {
    this.total++;
    switch (word) {
      case "void":
        this.void++;
        return;
      case "_Bool":
      case "bool":
        this.bool++;
        return;
      case "char":
        this.char++;
        return;
      case "short":
        this.short++;
        return;
      case "int":
        this.int++;
        return;
      case "long":
        this.long++;
        return;
      case "float":
        this.float++;
        return;
      case "double":
        this.double++;
        return;
      case "signed":
        this.signed++;
        return;
      case "unsigned":
        this.unsigned++;
        return;
    }
  }
}
keepShape(new TypeWords());
keepShape(new Scope());

export function parse(tokens: Token[], base: GlobalScope, host: ParseHost): ParsedBlock {
  const parser = new Parser(tokens, base.clone(), host);
  try {
    return parser.program();
  } catch (e) {
    // Recursive descent on absurdly nested input: report where the nesting got too deep.
    if (e instanceof RangeError && /call stack/i.test(e.message))
      throw syntaxError("program is nested too deeply", parser.current);
    throw e;
  }
}

export class Parser {
  pos = 0;
  scopes: Scope[] = [];
  fn: Func | null = null;
  /** The entry function being synthesized from top-level statements (see entry.ts). */
  readonly entry = new EntryState();
  localId = 0;
  breakDepth = 0;
  continueDepth = 0;
  switches: SwitchCase[][] = [];
  readonly defined: Func[] = [];
  readonly inits: { addr: number; bytes: Uint8Array }[] = [];
  /** Calls to names not yet declared; resolved when the block has been read. */
  pending: { node: CallNode; name: string; fn: Func }[] = [];

  constructor(
    readonly toks: Token[],
    readonly g: GlobalScope,
    readonly host: ParseHost,
  ) {
    // Entered where a scope chain starts, all together (no typedef is ever removed), so one
    // test tells whether the chain has them.
    if (!g.typedefs.has(BUILTIN_TYPEDEFS[0]![0]))
      for (const [name, ty] of BUILTIN_TYPEDEFS)
        if (!g.typedefs.has(name)) g.typedefs.set(name, { ...ty, name });
  }

  // ---- token helpers ----
  /** The token being read (for errors raised outside the parser's own checks). */
  get current(): Token {
    return this.toks[Math.min(this.pos, this.toks.length - 1)]!;
  }
  get tok(): Token {
    return this.toks[this.pos]!;
  }
  peek(n = 1): Token {
    return this.toks[Math.min(this.pos + n, this.toks.length - 1)]!;
  }
  /** Whether the token is the punctuator or keyword `text`. (Their spellings are the engine's
   * internalized strings, so V8 compiles the comparison to one pointer test; a number's or a
   * string literal's text, which are not, never reaches it.) */
  is(text: string): boolean {
    const t = this.toks[this.pos]!;
    return (t.kind === "punct" || t.kind === "keyword") && t.text === text;
  }
  consume(text: string): boolean {
    if (this.is(text)) {
      this.pos++;
      return true;
    }
    return false;
  }
  expect(text: string): Token {
    if (!this.is(text)) {
      const t = this.tok;
      const found = t.kind === "eof" ? "end of input" : `'${t.text}'`;
      throw syntaxError(`expected '${text}' but found ${found}`, t);
    }
    return this.toks[this.pos++]!;
  }
  ident(): Token {
    const t = this.tok;
    if (t.kind !== "ident")
      throw syntaxError(`expected an identifier but found '${t.text || "end of input"}'`, t);
    this.pos++;
    return t;
  }

  // ---- scopes ----
  enter(): void {
    this.scopes.push(new Scope());
  }
  leave(): void {
    this.scopes.pop();
  }
  lookup(name: string): ScopeEntry | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]!.getVar(name);
      if (s) return s;
    }
    const v = this.g.vars.get(name);
    if (v) return v;
    const td = this.g.typedefs.get(name);
    if (td) return { typedef: td };
    const ec = this.g.enumConsts.get(name);
    if (ec !== undefined) return { enumConst: ec };
    return undefined;
  }
  lookupTag(name: string): Type | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]!.getTag(name);
      if (s) return s;
    }
    return this.g.tags.get(name);
  }
  declareTag(name: string, ty: Type): void {
    if (this.scopes.length > 0) this.scopes[this.scopes.length - 1]!.setTag(name, ty);
    else this.g.tags.set(name, ty);
  }
  isTypedefName(t: Token): boolean {
    if (t.kind !== "ident") return false;
    // Asked at the start of nearly every statement: a name that no file-scope typedef has
    // needs no look through the file scope's variables and enumerators.
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]!.getVar(t.text);
      if (s) return "typedef" in s;
    }
    if (this.g.typedefs.get(t.text) === undefined) return false;
    const s = this.lookup(t.text);
    return !!s && "typedef" in s;
  }
  isTypeStart(t: Token = this.tok): boolean {
    if (t.kind === "keyword") return !STATEMENT_KEYWORDS.has(t.text);
    return this.isTypedefName(t);
  }

  // ---- node constructors ----
  num(v: bigint | number, ty: Type, at: Pos): NumNode {
    return numNode(v, ty, at);
  }
  /** Converts an expression to `ty` (a no-op when it already has that type). */
  cast(n: Expr, ty: Type): Expr {
    const from = n.ty;
    if (sameType(from, ty) && from.kind !== "array" && from.kind !== "func") return n;
    if (ty.kind === "void") return unaryNode("cast", n, n, ty);
    if (from.kind === "void") throw typeError("void value used where a value is needed", n);
    if (isAggregate(ty) || isAggregate(from)) {
      if (isAggregate(ty) && isAggregate(from) && sameType(ty, from)) return n;
      throw typeError(`cannot convert '${typeName(from)}' to '${typeName(ty)}'`, n);
    }
    if (n.kind === "num" && isNumeric(ty) && isNumeric(from)) return foldNum(n, ty);
    return unaryNode("cast", n, n, ty);
  }
  toRvalueType(t: Type): Type {
    if (t.kind === "array") return pointerTo(t.base!);
    if (t.kind === "func") return pointerTo(t);
    return t;
  }
  checkScalar(n: Expr, what: string): void {
    const t = n.ty;
    if (!isScalar(t) && t.kind !== "array" && t.kind !== "func")
      throw typeError(`${what} needs a scalar value, not '${typeName(t)}'`, n);
  }
  newBinary(op: BinOp, l: Expr, r: Expr, at: Pos): Expr {
    const lt = l.ty;
    const rt = r.ty;
    if (lt.kind === "void" || rt.kind === "void")
      throw typeError(`operator '${op}' applied to a void value`, at);
    if (isAggregate(lt) || isAggregate(rt))
      throw typeError(
        `operator '${op}' cannot be applied to '${typeName(isAggregate(lt) ? lt : rt)}'`,
        at,
      );
    if (op === "+" || op === "-") {
      if (isPointerLike(lt) || lt.kind === "func" || isPointerLike(rt))
        return this.ptrArith(op, l, r, at);
    }
    if (op === "==" || op === "!=" || op === "<" || op === "<=" || op === ">" || op === ">=") {
      if (isPointerLike(lt) || isPointerLike(rt) || lt.kind === "func" || rt.kind === "func") {
        const pt = pointerTo(T.void);
        return binaryNode(
          at,
          op,
          this.cast(l, { ...T.uint }),
          this.cast(r, { ...T.uint }),
          T.int,
          pt,
        );
      }
      const ct = usualArith(lt, rt);
      return binaryNode(at, op, this.cast(l, ct), this.cast(r, ct), T.int, ct);
    }
    if (op === "<<" || op === ">>") {
      if (!isInteger(lt) || !isInteger(rt))
        throw typeError(`operator '${op}' needs integer operands`, at);
      const ty = promote(lt);
      return fold(binaryNode(at, op, this.cast(l, ty), this.cast(r, ty), ty, ty));
    }
    if (
      (op === "%" || op === "&" || op === "|" || op === "^") &&
      (!isInteger(lt) || !isInteger(rt))
    )
      throw typeError(
        `operator '${op}' needs integer operands, got '${typeName(isInteger(lt) ? rt : lt)}'`,
        at,
      );
    if (!isNumeric(lt) || !isNumeric(rt))
      throw typeError(
        `operator '${op}' cannot be applied to '${typeName(isNumeric(lt) ? rt : lt)}'`,
        at,
      );
    const ty = usualArith(lt, rt);
    const checked = (op === "+" || op === "-" || op === "*") && isInteger(ty) && !ty.unsigned;
    return fold(binaryNode(at, op, this.cast(l, ty), this.cast(r, ty), ty, ty, checked));
  }
  ptrArith(op: "+" | "-", l: Expr, r: Expr, at: Pos): Expr {
    let lt = this.toRvalueType(l.ty);
    let rt = this.toRvalueType(r.ty);
    if (op === "+" && !isPointerLike(lt) && isPointerLike(rt)) {
      [l, r] = [r, l];
      [lt, rt] = [rt, lt];
    }
    if (op === "-" && lt.kind === "ptr" && rt.kind === "ptr") {
      const size = Math.max(lt.base!.size, 1);
      const diff = binaryNode(at, "-", this.cast(l, T.int), this.cast(r, T.int), T.int, T.int);
      const q =
        size === 1 ? diff : binaryNode(at, "/", diff, this.num(size, T.int, at), T.int, T.int);
      return this.cast(q, T.long);
    }
    if (lt.kind !== "ptr" || !isInteger(rt))
      throw typeError(
        `invalid operands to '${op}': '${typeName(l.ty)}' and '${typeName(r.ty)}'`,
        at,
      );
    if (lt.base!.kind === "void" && false) throw typeError("arithmetic on void pointer", at);
    const size = lt.base!.kind === "void" || lt.base!.kind === "func" ? 1 : lt.base!.size;
    let idx = this.cast(r, T.int);
    if (size !== 1) idx = fold(binaryNode(at, "*", idx, this.num(size, T.int, at), T.int, T.int));
    return binaryNode(at, op, this.cast(l, lt), idx, lt, T.int);
  }

  // ---- top level ----
  // program = (function-definition | declaration | statement)*
  program(): ParsedBlock {
    while (this.tok.kind !== "eof") {
      if (this.consume(";")) continue;
      if (this.isTypeStart() && !(this.tok.kind === "ident" && this.peek().text === ":")) {
        this.externalDeclaration();
        continue;
      }
      topLevelStatement(this);
    }
    this.resolvePending();
    if (this.entry.func) {
      for (const [k, v] of this.topRefs)
        if (!this.entry.func.refs.has(k)) this.entry.func.refs.set(k, v);
      finishEntry(this);
    }
    const definesMain = this.defined.some((f) => f.name === "main");
    return {
      scope: this.g,
      defined: this.defined,
      inits: this.inits,
      entry: this.entry.func,
      runsMain: definesMain && !this.entry.hasStatements,
    };
  }

  // external-declaration = declspec (function-definition | declarator ("=" initializer)? ("," ...)* ";")
  externalDeclaration(): void {
    const spec = this.declspec();
    if (this.consume(";")) return;
    let first = true;
    for (;;) {
      const { ty, name } = this.declarator(spec.ty);
      if (!name) throw syntaxError("expected a name in declaration", this.tok);
      if (spec.isTypedef) {
        this.g.typedefs.set(name.text, { ...ty, name: name.text });
      } else if (ty.kind === "func") {
        if (first && this.is("{")) {
          this.functionDefinition(ty, name, spec);
          return;
        }
        this.declareFunction(ty, name, spec, false);
      } else {
        this.globalVariable(ty, name, spec);
      }
      first = false;
      if (this.consume(";")) return;
      if (!this.is(",")) this.expectSemi();
      this.expect(",");
    }
  }

  declareFunction(ty: Type, name: Token, spec: DeclSpec, defining: boolean): Func {
    const existing = this.g.funcs.get(name.text);
    if (existing && !defining) return existing;
    const f: Func = {
      name: name.text,
      ty,
      params: [],
      locals: [],
      body: null,
      line: name.line,
      col: name.col,
      refs: new Map(),
      isStatic: spec.isStatic,
    };
    if (existing && existing.body === null) Object.assign(existing, f);
    this.g.funcs.set(name.text, existing && existing.body === null ? existing : f);
    this.g.vars.delete(name.text);
    return this.g.funcs.get(name.text)!;
  }

  // function-definition = declspec declarator compound-stmt
  functionDefinition(ty: Type, name: Token, spec: DeclSpec): void {
    if (name.text === ENTRY_NAME || (this.host.libraryType(name.text) && false))
      throw syntaxError(`'${name.text}' is a reserved name`, name);
    const prev = this.g.funcs.get(name.text);
    // Redefinition replaces the old body (REPL semantics); a prior prototype is filled in.
    const f: Func =
      prev && prev.body === null
        ? prev
        : {
            name: name.text,
            ty,
            params: [],
            locals: [],
            body: null,
            line: name.line,
            col: name.col,
            refs: new Map(),
            isStatic: spec.isStatic,
          };
    f.ty = ty;
    f.line = name.line;
    f.col = name.col;
    f.refs = new Map();
    f.indirect = false;
    f.locals = [];
    f.switches = [];
    this.g.funcs.set(name.text, f);
    this.g.vars.delete(name.text);
    const savedFn = this.fn;
    this.fn = f;
    this.enter();
    // Loops rather than callbacks on the per-block path: a closure made per call loses its
    // optimized code with it at the next full collection (see shapes.ts).
    f.params = [];
    const paramNames = ty.paramNames ?? [];
    for (let i = 0; i < paramNames.length; i++) {
      const pn = paramNames[i]!;
      const pty = ty.params![i]!;
      if (isAggregate(pty) && !pty.complete)
        throw typeError(`parameter has incomplete type '${typeName(pty)}'`, pn);
      const v = this.newLocal(pn.text, pty, pn);
      v.isParam = true;
      f.params.push(v);
    }
    f.varargs = ty.variadic ? this.newLocal("__va_area", pointerTo(T.char), name) : undefined;
    f.body = this.compoundStmt();
    for (const g of f.gotos ?? [])
      if (!f.labels?.has(g.text)) throw syntaxError(`label '${g.text}' used but not defined`, g);
    this.leave();
    this.fn = savedFn;
    if (!this.defined.includes(f)) this.defined.push(f);
  }

  newLocal(name: string, ty: Type, at: Pos): Var {
    const v: Var = {
      name,
      ty,
      global: false,
      addr: 0,
      inMemory: ty.kind === "array" || isAggregate(ty),
      isParam: false,
      id: this.localId++,
    };
    const scope = this.scopes[this.scopes.length - 1]!;
    const prior = scope.getVar(name);
    if (prior && "id" in prior && !prior.isParam && !this.fn?.params.includes(prior))
      throw typeError(`redefinition of '${name}'`, at);
    scope.setVar(name, v);
    this.fn!.locals.push(v);
    return v;
  }

  newGlobal(name: string, ty: Type, at: Pos): Var {
    if (ty.kind === "void") throw typeError(`variable '${name}' declared void`, at);
    if (ty.kind === "array" && ty.len! < 0) throw typeError(`array '${name}' has no size`, at);
    const existing = this.g.vars.get(name);
    // Re-declaring a global with the same type keeps its storage, so values survive.
    if (existing && sameType(existing.ty, ty) && existing.ty.size === ty.size) return existing;
    const v: Var = {
      name,
      ty,
      global: true,
      addr: this.host.alloc(Math.max(ty.size, 1), Math.max(ty.align, 4)),
      inMemory: true,
      isParam: false,
      id: -1,
    };
    this.g.funcs.delete(name);
    return v;
  }

  globalVariable(ty: Type, name: Token, spec: DeclSpec): void {
    if (ty.vlaLen) {
      // `int a[n];` among top-level statements: a local array of the entry.
      const entry = ensureEntry(this, name);
      const saved = this.fn;
      this.fn = entry;
      this.scopes.push(this.entry.scope);
      const v = this.newLocal(name.text, ty, name);
      const count = this.newLocal(`__count_${name.text}`, T.int, name);
      v.ty = { ...ty, vlaCount: count };
      entry.hasVla = true;
      this.entry.stmts.push(declNode(name, v, varNode(name, v, v.ty), undefined, ty.vlaLen));
      this.scopes.pop();
      this.fn = saved;
      if (this.is("="))
        throw typeError("a variable-length array cannot have an initializer", this.tok);
      return;
    }
    if (spec.isExtern && !this.is("=")) {
      if (!this.g.vars.has(name.text))
        this.g.vars.set(name.text, this.newGlobal(name.text, ty, name));
      return;
    }
    let init: Initializer | undefined;
    if (this.consume("=")) {
      init = initializer(this, ty);
      if (ty.kind === "array" && ty.len! < 0) ty = init.ty;
    }
    const v = this.newGlobal(name.text, ty, name);
    this.g.vars.set(name.text, v);
    staticInit(this, v, init, name);
  }

  // ---- declarations ----
  // declspec = ("void" | "char" | "short" | "int" | "long" | "float" | "double" | "_Bool"
  //            | "signed" | "unsigned" | struct-decl | union-decl | enum-specifier | typedef-name
  //            | "typedef" | "static" | "extern" | "const" | "volatile" | "inline" | "register")+
  declspec(): DeclSpec {
    const spec: DeclSpec = { ty: T.int, isTypedef: false, isStatic: false, isExtern: false };
    const counts = new TypeWords();
    let named: Type | null = null;
    let isConst = false;
    const start = this.tok;
    for (;;) {
      const t = this.tok;
      if (t.kind === "keyword") {
        switch (t.text) {
          case "typedef":
            spec.isTypedef = true;
            this.pos++;
            continue;
          case "static":
            spec.isStatic = true;
            this.pos++;
            continue;
          case "extern":
            spec.isExtern = true;
            this.pos++;
            continue;
          case "const":
            isConst = true;
            this.pos++;
            continue;
          case "volatile":
          case "inline":
          case "register":
          case "auto":
          case "restrict":
            this.pos++;
            continue;
          case "struct":
          case "union":
            if (named || counts.total > 0) throw syntaxError("too many types in declaration", t);
            this.pos++;
            named = this.structDecl(t.text as "struct" | "union");
            continue;
          case "enum":
            if (named || counts.total > 0) throw syntaxError("too many types in declaration", t);
            this.pos++;
            named = this.enumSpecifier();
            continue;
          case "void":
          case "char":
          case "short":
          case "int":
          case "long":
          case "float":
          case "double":
          case "signed":
          case "unsigned":
          case "_Bool":
          case "bool":
            counts.add(t.text);
            this.pos++;
            continue;
        }
        break;
      }
      if (t.kind === "ident" && !named && counts.total === 0 && this.isTypedefName(t)) {
        named = (this.lookup(t.text) as { typedef: Type }).typedef;
        this.pos++;
        continue;
      }
      break;
    }
    let ty: Type;
    if (named) ty = named;
    else ty = this.basicType(counts, start);
    if (isConst) ty = { ...ty, isConst: true };
    spec.ty = ty;
    return spec;
  }

  basicType(c: TypeWords, at: Pos): Type {
    const unsigned = c.unsigned > 0;
    if (c.void) return T.void;
    if (c.bool) return T.bool;
    if (c.char) return unsigned ? T.uchar : T.char;
    if (c.float) return T.float;
    if (c.double) return T.double; // long double is double
    if (c.short) return unsigned ? T.ushort : T.short;
    if (c.long) {
      if (c.long > 2) throw syntaxError("'long long long' is too long", at);
      return unsigned ? T.ulong : T.long;
    }
    if (c.int || c.signed || unsigned) return unsigned ? T.uint : T.int;
    throw syntaxError(`expected a type but found '${this.tok.text}'`, this.tok);
  }

  // struct-decl = ident? ("{" (declspec declarator ("," declarator)* ";")* "}")?
  structDecl(kind: "struct" | "union"): Type {
    let tag: string | undefined;
    const at = this.tok;
    if (this.tok.kind === "ident") tag = this.ident().text;
    if (tag && !this.is("{")) {
      const found = this.lookupTag(tag);
      if (found) {
        if (found.kind !== kind) throw typeError(`'${tag}' is not a ${kind}`, at);
        return found;
      }
      const fwd = aggregateType(kind, tag);
      this.declareTag(tag, fwd);
      return fwd;
    }
    this.expect("{");
    // Fill in a forward declaration in place so pointers to it see the members.
    let ty = aggregateType(kind, tag);
    if (tag) {
      const cur = this.scopes.length
        ? this.scopes[this.scopes.length - 1]!.getTag(tag)
        : this.g.tags.get(tag);
      if (cur && !cur.complete && cur.kind === kind) ty = cur;
      else this.declareTag(tag, ty);
    }
    const decls: MemberDecl[] = [];
    while (!this.consume("}")) {
      const spec = this.declspec();
      if (this.consume(";")) {
        // anonymous struct/union member: its members are flattened in
        if (isAggregate(spec.ty) && spec.ty.members) decls.push({ name: null, ty: spec.ty });
        continue;
      }
      for (;;) {
        const at = this.tok;
        const { ty: mty, name } = this.is(":")
          ? { ty: spec.ty, name: null }
          : this.declarator(spec.ty);
        if (this.consume(":")) decls.push(this.bitField(mty, name, at));
        else {
          if (!name) throw syntaxError("expected a member name", this.tok);
          if (mty.kind === "struct" || mty.kind === "union") {
            if (!mty.complete) throw typeError(`member '${name.text}' has incomplete type`, name);
          }
          decls.push({ name: name.text, ty: mty });
        }
        if (this.consume(";")) break;
        this.expect(",");
      }
    }
    const layout = layoutMembers(kind, decls);
    ty.members = layout.members;
    if (layout.fields.length !== layout.members.length) ty.fields = layout.fields;
    ty.align = layout.align;
    ty.size = layout.size;
    ty.complete = true;
    return ty;
  }

  // bit-field = declarator? ":" const-expr
  /** Checks a bit-field's type and width (the ":" has been read). */
  bitField(ty: Type, name: Token | null, at: Pos): MemberDecl {
    const what = name ? `bit-field '${name.text}'` : "unnamed bit-field";
    if (!isInteger(ty))
      throw typeError(`${what} has type '${typeName(ty)}', which is not an integer type`, at);
    const widthAt = this.tok;
    const width = this.constInt();
    const bits = ty.kind === "bool" ? 1 : ty.size * 8;
    if (width < 0n) throw typeError(`${what} has a negative width (${width})`, widthAt);
    if (width > BigInt(bits))
      throw typeError(
        `width of ${what} (${width}) exceeds the width of its type (${bits} bit${bits === 1 ? "" : "s"})`,
        widthAt,
      );
    if (width === 0n && name) throw typeError(`${what} has zero width`, widthAt);
    // An enum without negative enumerators reads back unsigned (its underlying type in gcc).
    const declared = ty.kind === "enum" && !ty.negative ? { ...ty, unsigned: true } : ty;
    return { name: name ? name.text : null, ty: declared, width: Number(width) };
  }

  // enum-specifier = ident? "{" enum-list? "}" | ident
  enumSpecifier(): Type {
    const ty = enumType();
    let tag: string | undefined;
    if (this.tok.kind === "ident") tag = this.ident().text;
    if (tag && !this.is("{")) {
      const found = this.lookupTag(tag);
      return found ?? ty;
    }
    this.expect("{");
    let value = 0n;
    while (!this.consume("}")) {
      const name = this.ident();
      if (this.consume("=")) value = this.constInt();
      if (value < 0n) ty.negative = true;
      if (this.scopes.length > 0)
        this.scopes[this.scopes.length - 1]!.setVar(name.text, { enumConst: value });
      else {
        this.g.enumConsts.set(name.text, value);
        this.g.vars.delete(name.text);
      }
      value++;
      if (!this.consume(",")) {
        this.expect("}");
        break;
      }
    }
    if (tag) this.declareTag(tag, ty);
    return ty;
  }

  // pointers = ("*" ("const" | "volatile" | "restrict")*)*
  pointers(ty: Type): Type {
    while (this.consume("*")) {
      ty = pointerTo(ty);
      while (this.consume("const") || this.consume("volatile") || this.consume("restrict"));
    }
    return ty;
  }

  // declarator = pointers ("(" declarator ")" | ident)? type-suffix
  declarator(ty: Type): { ty: Type; name: Token | null } {
    ty = this.pointers(ty);
    if (this.is("(") && !this.isTypeStart(this.peek()) && !this.peek().text.startsWith(")")) {
      // Nested declarator, e.g. int (*f)(int): read the suffix first, then come back.
      const start = this.pos;
      this.pos++;
      let depth = 1;
      while (depth > 0) {
        if (this.tok.kind === "eof")
          throw syntaxError("unbalanced parentheses in declarator", this.toks[start]!);
        if (this.is("(")) depth++;
        else if (this.is(")")) depth--;
        this.pos++;
      }
      const outer = this.typeSuffix(ty);
      const end = this.pos;
      this.pos = start + 1;
      const inner = this.declarator(outer);
      this.expect(")");
      this.pos = end;
      return inner;
    }
    let name: Token | null = null;
    if (this.tok.kind === "ident") name = this.ident();
    return { ty: this.typeSuffix(ty), name };
  }

  // type-suffix = "(" func-params | "[" const-expr? "]" type-suffix | ε
  typeSuffix(ty: Type): Type {
    if (this.consume("(")) return this.funcParams(ty);
    if (this.consume("[")) {
      let len = -1;
      let vlaLen: Expr | undefined;
      // C99 qualifiers in a parameter's array declarator: int x[const 5], int x[static 5].
      while (
        this.consume("const") ||
        this.consume("volatile") ||
        this.consume("restrict") ||
        this.consume("static")
      );
      // int x[*]: a VLA of unspecified size (only in prototypes): an incomplete array.
      if (this.is("*") && this.peek().text === "]") this.pos++;
      const at = this.tok;
      if (!this.is("]")) {
        const e = this.conditional();
        if (e.kind === "num") {
          if (e.ival === undefined && !Number.isFinite(e.fval))
            throw typeError(`array size ${e.fval} is not a finite number`, at);
          const n = e.ival !== undefined ? BigInt.asIntN(64, e.ival) : BigInt(Math.trunc(e.fval));
          if (n < 0n) throw typeError("array size is negative", at);
          len = Number(n);
        } else {
          // A variable-length array: only as a local, sized when its declaration runs.
          if (!isInteger(e.ty)) throw typeError("array size is not an integer", at);
          vlaLen = this.cast(e, T.int);
        }
      }
      this.expect("]");
      const inner = this.typeSuffix(ty);
      if (inner.kind === "void") throw typeError("array of void", this.tok);
      if (inner.vlaLen)
        throw typeError("multi-dimensional variable-length arrays are not supported", at);
      if (vlaLen) return { ...arrayOf(inner, 0), vlaLen };
      return arrayOf(inner, len);
    }
    return ty;
  }

  // func-params = ("void" | param ("," param)* ("," "...")?)? ")"
  funcParams(ret: Type): Type {
    const params: Type[] = [];
    const names: Token[] = [];
    let variadic = false;
    if (this.is("void") && this.peek().text === ")") {
      this.pos += 2;
      return withParamNames(funcType(ret, []), []);
    }
    if (this.consume(")")) {
      // `int f()`: parameters unspecified (pre-C23); calls through such a type pass what
      // they are given, with the default promotions.
      return withParamNames({ ...funcType(ret, []), oldStyle: true }, []);
    }
    while (!this.consume(")")) {
      if (params.length > 0) this.expect(",");
      if (this.consume("...")) {
        variadic = true;
        this.expect(")");
        break;
      }
      const spec = this.declspec();
      const { ty, name } = this.declarator(spec.ty);
      // Parameters of array or function type are pointers.
      let pty = ty;
      if (ty.kind === "array") pty = pointerTo(ty.base!);
      else if (ty.kind === "func") pty = pointerTo(ty);
      params.push(pty);
      names.push(name ?? { ...this.tok, text: `__arg${params.length}` });
    }
    return withParamNames(funcType(ret, params, variadic), names);
  }

  // abstract-declarator for casts and sizeof: declspec pointers ("(" abstract ")")? suffix
  typeName(): Type {
    const spec = this.declspec();
    const { ty, name } = this.declarator(spec.ty);
    if (name) throw syntaxError(`unexpected name '${name.text}' in type`, name);
    return ty;
  }

  constInt(): bigint {
    const at = this.tok;
    const n = this.conditional();
    if (n.kind !== "num" || n.ival === undefined) {
      if (n.kind === "num") {
        if (!Number.isFinite(n.fval))
          throw typeError(`expected a constant integer, but ${n.fval} is not finite`, at);
        return BigInt(Math.trunc(n.fval));
      }
      throw typeError("expected a constant integer expression", at);
    }
    return BigInt.asIntN(64, n.ival);
  }

  // string-literal = str+ (adjacent literals concatenate; any L"…" makes the whole one wide)
  /** Reads adjacent string literals: the bytes with the terminating NUL, and the element type
   * (char, or int for wchar_t strings, stored little-endian). */
  /** Static storage for a string literal's bytes. */
  private literalAddress(bytes: number[], align: number): number {
    const data = new Uint8Array(bytes);
    if (this.host.literal) return this.host.literal(data, align);
    const addr = this.host.alloc(data.length, align);
    this.host.write(addr, data);
    return addr;
  }

  stringLiteral(): { bytes: number[]; elem: Type } {
    const parts: Token[] = [];
    while (this.tok.kind === "str") parts.push(this.toks[this.pos++]!);
    if (!parts.some((p) => p.units)) {
      const bytes: number[] = [];
      for (const p of parts) for (const b of p.bytes!) bytes.push(b);
      bytes.push(0);
      return { bytes, elem: T.char };
    }
    const bytes: number[] = [];
    for (const p of parts)
      for (const u of p.units ?? p.bytes!)
        bytes.push(u & 255, (u >> 8) & 255, (u >> 16) & 255, u >>> 24);
    bytes.push(0, 0, 0, 0);
    return { bytes, elem: T.int };
  }

  /** Converts a value for assignment to `ty`, rejecting what C rejects. */
  assignConvert(e: Expr, ty: Type, at: Pos): Expr {
    const et = e.ty;
    if (et.kind === "void") throw typeError("void value used where a value is needed", at);
    if (isAggregate(ty) || isAggregate(et)) {
      if (sameType(ty, et)) return e;
      throw typeError(`cannot assign '${typeName(et)}' to '${typeName(ty)}'`, at);
    }
    if (ty.kind === "ptr" && isFloat(et))
      throw typeError(`cannot assign '${typeName(et)}' to '${typeName(ty)}'`, at);
    if (isFloat(ty) && (et.kind === "ptr" || et.kind === "array"))
      throw typeError(`cannot assign '${typeName(et)}' to '${typeName(ty)}'`, at);
    return this.cast(e, ty);
  }

  // ---- statements ----
  // compound-stmt = "{" (declaration | stmt)* "}"
  compoundStmt(): BlockNode {
    const at = this.expect("{");
    const body: Stmt[] = [];
    this.enter();
    while (!this.consume("}")) {
      if (this.tok.kind === "eof") throw syntaxError("expected '}' before end of input", at);
      if (this.isTypeStart() && this.peek().text !== ":") body.push(...this.localDeclaration());
      else body.push(this.stmt());
    }
    this.leave();
    return blockNode(at, body);
  }

  // declaration = declspec (declarator ("=" initializer)?) ("," ...)* ";"
  localDeclaration(): Stmt[] {
    const spec = this.declspec();
    const out: Stmt[] = [];
    if (this.consume(";")) return out;
    for (;;) {
      const { ty: declTy, name } = this.declarator(spec.ty);
      let ty = declTy;
      if (!name) throw syntaxError("expected a variable name", this.tok);
      if (spec.isTypedef) {
        this.scopes[this.scopes.length - 1]!.setVar(name.text, {
          typedef: { ...ty, name: name.text },
        });
      } else if (ty.kind === "func") {
        this.declareFunction(ty, name, spec, false);
      } else if (spec.isStatic || spec.isExtern) {
        let init: Initializer | undefined;
        if (this.consume("=")) {
          init = initializer(this, ty);
          if (ty.kind === "array" && ty.len! < 0) ty = init.ty;
        }
        const v = this.newGlobal(`${this.fn!.name}.${name.text}`, ty, name);
        this.scopes[this.scopes.length - 1]!.setVar(name.text, v);
        staticInit(this, v, init, name);
      } else {
        if (ty.kind === "void") throw typeError(`variable '${name.text}' declared void`, name);
        if ((ty.kind === "struct" || ty.kind === "union") && !ty.complete)
          throw typeError(`variable '${name.text}' has incomplete type '${typeName(ty)}'`, name);
        // The name is in scope inside its own initializer (`Node *n = malloc(sizeof *n)`).
        const v = this.newLocal(name.text, ty, name);
        if (ty.vlaLen) {
          if (this.is("="))
            throw typeError("a variable-length array cannot have an initializer", this.tok);
          const count = this.newLocal(`__count_${name.text}`, T.int, name);
          v.ty = ty = { ...ty, vlaCount: count };
          const ref = varNode(name, v, ty);
          out.push(declNode(name, v, ref, undefined, ty.vlaLen));
          this.fn!.hasVla = true;
          if (this.consume(";")) return out;
          if (!this.is(",")) this.expectSemi();
          this.expect(",");
          continue;
        }
        let init: Initializer | undefined;
        if (this.consume("=")) {
          init = initializer(this, ty);
          if (ty.kind === "array" && ty.len! < 0) ty = init.ty;
        }
        if (ty.kind === "array" && ty.len! < 0)
          throw typeError(`array '${name.text}' has no size`, name);
        v.ty = ty;
        if (ty.size > LARGE_LOCAL_BYTES) {
          this.noteRef("malloc", name);
          this.noteRef("free", name);
        }
        if (init || v.inMemory) {
          const ref = varNode(name, v, ty);
          out.push(declNode(name, v, ref, init));
        }
      }
      if (this.consume(";")) return out;
      if (!this.is(",")) this.expectSemi();
      this.expect(",");
    }
  }

  makeReturn(e: Expr | null, at: Pos): Stmt {
    const f = this.fn!;
    if (f === this.entry.func) return entryReturn(this, e, at);
    const ret = f.ty.ret!;
    if (!e) {
      return returnNode(at);
    }
    if (ret.kind === "void") {
      if (e.ty.kind !== "void") throw typeError(`void function '${f.name}' returns a value`, at);
      return returnNode(at, e);
    }
    return returnNode(at, this.assignConvert(e, ret, e));
  }

  // stmt = "return" expr? ";" | "if" ... | "switch" ... | "case" ... | "default" ":" stmt
  //      | "for" ... | "while" ... | "do" ... | "break" ";" | "continue" ";" | compound-stmt | expr-stmt
  stmt(): Stmt {
    const t = this.tok;
    if (t.kind === "keyword") {
      switch (t.text) {
        case "return": {
          this.pos++;
          if (this.consume(";")) return this.makeReturn(null, t);
          const e = this.expr();
          const r = this.makeReturn(e, t);
          this.expectSemi();
          return r;
        }
        case "if": {
          this.pos++;
          this.expect("(");
          const cond = this.condition();
          this.expect(")");
          const then = this.stmt();
          const els = this.consume("else") ? this.stmt() : undefined;
          return ifNode(t, cond, then, els);
        }
        case "switch": {
          this.pos++;
          this.expect("(");
          let cond = this.expr();
          if (!isInteger(cond.ty))
            throw typeError(`switch needs an integer, not '${typeName(cond.ty)}'`, cond);
          cond = this.cast(cond, promote(cond.ty));
          this.expect(")");
          const cases: SwitchCase[] = [];
          this.switches.push(cases);
          this.breakDepth++;
          const body = this.stmt();
          this.breakDepth--;
          this.switches.pop();
          const sw = switchNode(t, cond, body, cases);
          (this.fn!.switches ??= []).push(sw);
          return sw;
        }
        case "case":
        case "default": {
          this.pos++;
          const cases = this.switches[this.switches.length - 1];
          if (!cases) throw syntaxError(`'${t.text}' outside of a switch`, t);
          let value: bigint | null = null;
          if (t.text === "case") {
            value = this.constInt();
            if (this.consume("...")) throw syntaxError("case ranges are not supported", t);
          }
          this.expect(":");
          if (cases.some((c) => c.value === value))
            throw typeError(
              value === null
                ? "multiple default labels in one switch"
                : `duplicate case value ${value}`,
              t,
            );
          // Registered before its statement is read, which may hold the switch's next case.
          const n = caseNode(t, value, jumpNode("null", t));
          cases.push({ value, node: n });
          if (!this.is("}")) n.then = this.stmt();
          return n;
        }
        case "for": {
          this.pos++;
          this.expect("(");
          this.enter();
          let init: Stmt | undefined;
          if (this.isTypeStart()) init = blockNode(t, this.localDeclaration());
          else if (!this.consume(";")) {
            init = exprStmtNode(t, this.expr());
            this.expect(";");
          }
          const cond = this.is(";") ? undefined : this.condition();
          this.expect(";");
          const inc = this.is(")") ? undefined : this.expr();
          this.expect(")");
          const then = this.loopBody();
          this.leave();
          return forNode(t, init, cond, inc, then);
        }
        case "while": {
          this.pos++;
          this.expect("(");
          const cond = this.condition();
          this.expect(")");
          return forNode(t, undefined, cond, undefined, this.loopBody());
        }
        case "do": {
          this.pos++;
          const then = this.loopBody();
          this.expect("while");
          this.expect("(");
          const cond = this.condition();
          this.expect(")");
          this.expectSemi();
          return doNode(t, cond, then);
        }
        case "break":
          this.pos++;
          if (this.breakDepth === 0) throw syntaxError("'break' outside of a loop or switch", t);
          this.expectSemi();
          return jumpNode("break", t);
        case "continue":
          this.pos++;
          if (this.continueDepth === 0) throw syntaxError("'continue' outside of a loop", t);
          this.expectSemi();
          return jumpNode("continue", t);
        case "goto": {
          this.pos++;
          const target = this.ident();
          this.expectSemi();
          this.fn?.gotos?.push(target) ?? (this.fn!.gotos = [target]);
          return gotoNode(t, target.text);
        }
      }
    }
    if (t.kind === "ident" && this.peek().text === ":") {
      this.pos += 2;
      const f = this.fn!;
      f.labels ??= new Set();
      if (f.labels.has(t.text)) throw syntaxError(`duplicate label '${t.text}'`, t);
      f.labels.add(t.text);
      const then = this.is("}") ? jumpNode("null", t) : this.stmt();
      return labelNode(t, t.text, then);
    }
    if (this.is("{")) return this.compoundStmt();
    if (this.consume(";")) return jumpNode("null", t);
    const e = this.expr();
    this.expectSemi();
    return exprStmtNode(t, e);
  }

  expectSemi(): void {
    if (this.is(";")) {
      this.pos++;
      return;
    }
    const prev = this.toks[this.pos - 1]!;
    throw syntaxError(`expected ';' after '${prev.text}'`, {
      line: prev.line,
      col: prev.col + prev.text.length,
    });
  }

  loopBody(): Stmt {
    this.breakDepth++;
    this.continueDepth++;
    const body = this.stmt();
    this.breakDepth--;
    this.continueDepth--;
    return body;
  }

  /** A controlling expression: any scalar. */
  condition(): Expr {
    const e = this.expr();
    this.checkScalar(e, "a condition");
    return e;
  }

  // ---- expressions ----
  // expr = assign ("," expr)?
  expr(): Expr {
    const l = this.assign();
    if (this.is(",")) {
      const at = this.tok;
      this.pos++;
      const r = this.expr();
      return commaNode(at, l, r);
    }
    return l;
  }

  checkLvalue(n: Expr, at: Pos): void {
    if (n.kind === "var" && n.ty.kind !== "array") {
      if (n.ty.isConst) throw typeError(`cannot assign to const variable '${n.v.name}'`, at);
      return;
    }
    if (n.kind === "deref" || n.kind === "member") {
      if (n.ty.kind === "array") throw typeError("cannot assign to an array", at);
      return;
    }
    throw typeError("expression is not assignable", at);
  }

  // assign = conditional (assign-op assign)?
  assign(): Expr {
    const l = this.conditional();
    const t = this.tok;
    if (t.kind !== "punct") return l;
    if (t.text === "=") {
      this.pos++;
      this.checkLvalue(l, t);
      const r = this.assign();
      return assignNode(t, l, this.assignConvert(r, l.ty, r), l.ty);
    }
    const op = t.text.length > 1 ? ASSIGN_OPS.get(t.text) : undefined;
    if (!op) return l;
    this.pos++;
    this.checkLvalue(l, t);
    const r = this.assign();
    const lt = l.ty;
    if (lt.kind === "ptr" && (op === "+" || op === "-")) {
      if (!isInteger(r.ty)) throw typeError(`invalid operands to '${t.text}'`, t);
      const size = lt.base!.kind === "void" ? 1 : lt.base!.size;
      let idx = this.cast(r, T.int);
      if (size !== 1) idx = fold(binaryNode(t, "*", idx, this.num(size, T.int, t), T.int, T.int));
      return opAssignNode(t, op, l, idx, lt, T.int);
    }
    // Type-check as the binary operator would, then convert the result back.
    const probe = this.newBinary(op, { ...l }, r, t);
    const opTy = probe.kind === "binary" ? probe.opTy : probe.ty;
    const rhs = probe.kind === "binary" ? probe.rhs : this.cast(r, opTy);
    const checked = (op === "+" || op === "-" || op === "*") && isInteger(opTy) && !opTy.unsigned;
    return opAssignNode(t, op, l, rhs, lt, opTy, checked);
  }

  // conditional = logor ("?" expr ":" conditional)?
  conditional(): Expr {
    const cond = this.logor();
    if (!this.is("?")) return cond;
    const at = this.tok;
    this.pos++;
    this.checkScalar(cond, "'?:'");
    let a = this.expr();
    this.expect(":");
    let b = this.conditional();
    const at_ = a.ty;
    const bt = b.ty;
    let ty: Type;
    if (at_.kind === "void" || bt.kind === "void") ty = T.void;
    else if (isNumeric(at_) && isNumeric(bt)) ty = usualArith(at_, bt);
    else if (isAggregate(at_) && sameType(at_, bt)) ty = at_;
    else if (isPointerLike(at_) || at_.kind === "func") ty = this.toRvalueType(at_);
    else if (isPointerLike(bt) || bt.kind === "func") ty = this.toRvalueType(bt);
    else
      throw typeError(
        `incompatible operands to '?:': '${typeName(at_)}' and '${typeName(bt)}'`,
        at,
      );
    a = this.cast(a, ty);
    b = this.cast(b, ty);
    return foldLogical(condNode(at, cond, a, b, ty));
  }

  // logor = logand ("||" logand)*
  logor(): Expr {
    let n = this.logand();
    while (this.is("||")) {
      const at = this.tok;
      this.pos++;
      const r = this.logand();
      this.checkScalar(n, "'||'");
      this.checkScalar(r, "'||'");
      n = foldLogical(logicalNode("logor", at, n, r));
    }
    return n;
  }

  // logand = bitor ("&&" bitor)*
  logand(): Expr {
    let n = this.bitLevel(0);
    while (this.is("&&")) {
      const at = this.tok;
      this.pos++;
      const r = this.bitLevel(0);
      this.checkScalar(n, "'&&'");
      this.checkScalar(r, "'&&'");
      n = foldLogical(logicalNode("logand", at, n, r));
    }
    return n;
  }

  // bitor = bitxor ("|" bitxor)*; bitxor = bitand ("^" bitand)*; bitand = equality ("&" equality)*
  // equality = relational (("==" | "!=") relational)*
  // relational = shift (("<" | "<=" | ">" | ">=") shift)*
  // shift = add (("<<" | ">>") add)*; add = mul (("+" | "-") mul)*; mul = cast (("*" | "/" | "%") cast)*
  // Each rule is left-associative, so the levels are climbed in one loop (precedence climbing):
  // an operator binds its right operand at the next level up. Levels, lowest first.
  static readonly LEVELS: readonly (readonly BinOp[])[] = [
    ["|"],
    ["^"],
    ["&"],
    ["==", "!="],
    ["<", "<=", ">", ">="],
    ["<<", ">>"],
    ["+", "-"],
    ["*", "/", "%"],
  ];
  static readonly LEVEL_OF: ReadonlyMap<string, number> = new Map(
    Parser.LEVELS.flatMap((ops, level) => ops.map((op) => [op, level] as const)),
  );
  bitLevel(minLevel: number): Expr {
    let n = this.castExpr();
    for (;;) {
      const t = this.tok;
      const level = t.kind === "punct" ? Parser.LEVEL_OF.get(t.text) : undefined;
      if (level === undefined || level < minLevel) return n;
      this.pos++;
      const r = this.bitLevel(level + 1);
      n = this.newBinary(t.text as BinOp, n, r, t);
    }
  }
  castExpr(): Expr {
    if (this.is("(") && this.isTypeStart(this.peek())) {
      const at = this.tok;
      this.pos++;
      const ty = this.typeName();
      this.expect(")");
      if (this.is("{")) return this.postfixOf(this.compoundLiteral(ty, at));
      const e = this.castExpr();
      if (ty.kind === "void") return unaryNode("cast", at, e, ty);
      if (!isScalar(ty)) throw typeError(`cannot cast to '${typeName(ty)}'`, at);
      const et = e.ty;
      if (isAggregate(et) || et.kind === "void")
        throw typeError(`cannot cast '${typeName(et)}' to '${typeName(ty)}'`, at);
      if ((ty.kind === "ptr" && isFloat(et)) || (isFloat(ty) && isPointerLike(et)))
        throw typeError(`cannot cast '${typeName(et)}' to '${typeName(ty)}'`, at);
      const c = this.cast(e, ty);
      return c === e ? unaryNode("cast", at, e, ty) : { ...c, line: at.line, col: at.col };
    }
    return this.unary();
  }

  // unary = ("+" | "-" | "*" | "&" | "!" | "~") cast | ("++" | "--") unary | "sizeof" ... | postfix
  unary(): Expr {
    const t = this.tok;
    if (t.kind === "punct") {
      switch (t.text) {
        case "+": {
          this.pos++;
          const e = this.castExpr();
          if (!isNumeric(e.ty)) throw typeError(`unary '+' needs a number`, t);
          return this.cast(e, promote(e.ty));
        }
        case "-": {
          this.pos++;
          const e = this.castExpr();
          if (!isNumeric(e.ty))
            throw typeError(`unary '-' needs a number, not '${typeName(e.ty)}'`, t);
          const ty = promote(e.ty);
          const c = this.cast(e, ty);
          const checked = isInteger(ty) && !ty.unsigned;
          if (c.kind === "num") {
            if (c.fval !== undefined) return this.num(-c.fval, ty, t);
            const v = wrapInt(-c.ival, ty);
            if (!checked || v === -wrapInt(c.ival, ty)) return this.num(v, ty, t);
          }
          return negNode(t, c, ty, checked);
        }
        case "!": {
          this.pos++;
          const e = this.castExpr();
          this.checkScalar(e, "'!'");
          return foldLogical(unaryNode("not", t, e, T.int));
        }
        case "~": {
          this.pos++;
          const e = this.castExpr();
          if (!isInteger(e.ty)) throw typeError(`'~' needs an integer`, t);
          const ty = promote(e.ty);
          const c = this.cast(e, ty);
          if (c.kind === "num") return this.num(wrapInt(~intValue(c), ty), ty, t);
          return unaryNode("bitnot", t, c, ty);
        }
        case "&": {
          this.pos++;
          const e = this.castExpr();
          if (e.kind === "funcref") return { ...e, line: t.line, col: t.col };
          if (e.kind === "var") {
            e.v.inMemory = true;
            return unaryNode("addr", t, e, pointerTo(e.ty));
          }
          if (e.ty.bitField)
            throw typeError(
              e.kind === "member"
                ? `cannot take the address of bit-field '${e.member.name}'`
                : "cannot take the address of a bit-field",
              t,
            );
          if (e.kind === "deref" || e.kind === "member" || e.kind === "str")
            return unaryNode("addr", t, e, pointerTo(e.ty));
          throw typeError("cannot take the address of this expression", t);
        }
        case "*": {
          this.pos++;
          const e = this.castExpr();
          return this.deref(e, t);
        }
        case "++":
        case "--": {
          this.pos++;
          const e = this.unary();
          return this.incdec(e, t.text === "++" ? 1 : -1, true, t);
        }
      }
    }
    if (this.is("sizeof")) {
      this.pos++;
      if (this.is("(") && this.isTypeStart(this.peek())) {
        this.pos++;
        const ty = this.typeName();
        this.expect(")");
        return this.num(ty.size, T.ulong, t);
      }
      const e = this.unary();
      if (e.ty.bitField) throw typeError("'sizeof' applied to a bit-field", t);
      const count = e.ty.vlaCount;
      if (count) {
        const n = this.cast(varNode(t, count, count.ty), T.ulong);
        const elem = this.num(e.ty.base!.size, T.ulong, t);
        return binaryNode(t, "*", n, elem, T.ulong, T.ulong);
      }
      const size = e.ty.kind === "func" ? 1 : e.ty.size;
      return this.num(size, T.ulong, t);
    }
    return this.postfix();
  }

  deref(e: Expr, at: Pos): Expr {
    const et = e.ty;
    if (et.kind === "func" || (et.kind === "ptr" && et.base!.kind === "func")) return e;
    if (!isPointerLike(et))
      throw typeError(`cannot dereference '${typeName(et)}', which is not a pointer`, at);
    if (et.base!.kind === "void") throw typeError("cannot dereference a 'void *'", at);
    return unaryNode("deref", at, e, et.base!);
  }

  incdec(e: Expr, delta: number, prefix: boolean, at: Pos): Expr {
    this.checkLvalue(e, at);
    const ty = e.ty;
    if (!isScalar(ty)) throw typeError(`cannot increment '${typeName(ty)}'`, at);
    const step = ty.kind === "ptr" ? (ty.base!.kind === "void" ? 1 : ty.base!.size) * delta : delta;
    const checked = (ty.kind === "int" || ty.kind === "long") && !ty.unsigned;
    return incDecNode(at, e, step, prefix, ty, checked);
  }

  // compound-literal = "(" type-name ")" "{" initializer-list "}"
  /** An unnamed object: a local of the enclosing function (initialized each time the
   * expression runs, as C says), or a global at file scope. */
  compoundLiteral(declared: Type, at: Pos): Expr {
    const init = initializer(this, declared);
    const ty = declared.kind === "array" && declared.len! < 0 ? init.ty : declared;
    const name = `__compound${this.localId++}`;
    if (!this.fn) {
      const v = this.newGlobal(name, ty, at);
      this.g.vars.set(name, v);
      staticInit(this, v, init, at);
      return varNode(at, v, ty);
    }
    const v = this.newLocal(name, ty, at);
    v.inMemory = true;
    const ref = varNode(at, v, ty);
    const decl = declNode(at, v, ref, init);
    return stmtExprNode(at, [decl, exprStmtNode(at, varNode(at, v, ty))], ty);
  }

  // postfix = primary ("[" expr "]" | "(" args ")" | "." ident | "->" ident | "++" | "--")*
  postfix(): Expr {
    return this.postfixOf(this.primary());
  }
  postfixOf(first: Expr): Expr {
    let n = first;
    for (;;) {
      const t = this.tok;
      if (this.consume("[")) {
        const idx = this.expr();
        this.expect("]");
        const l = n.ty;
        if (!isPointerLike(l) && !isPointerLike(idx.ty))
          throw typeError(
            `subscripted value is not an array or pointer (it is '${typeName(l)}')`,
            t,
          );
        if (!isInteger(isPointerLike(l) ? idx.ty : l))
          throw typeError(
            `array subscript is not an integer (it is '${typeName(isPointerLike(l) ? idx.ty : l)}')`,
            idx,
          );
        n = this.deref(this.ptrArith("+", n, idx, t), t);
        continue;
      }
      if (this.is("(")) {
        n = this.call(n);
        continue;
      }
      if (this.consume(".")) {
        n = this.member(n, this.ident());
        continue;
      }
      if (this.consume("->")) {
        const name = this.ident();
        n = this.member(this.deref(n, t), name);
        continue;
      }
      if (this.consume("++")) {
        n = this.incdec(n, 1, false, t);
        continue;
      }
      if (this.consume("--")) {
        n = this.incdec(n, -1, false, t);
        continue;
      }
      return n;
    }
  }

  member(n: Expr, name: Token): Expr {
    const st = n.ty;
    if (!isAggregate(st))
      throw typeError(
        `request for member '${name.text}' in something that is not a struct (it is '${typeName(st)}')`,
        name,
      );
    if (!st.complete) throw typeError(`'${typeName(st)}' is an incomplete type`, name);
    const m = st.members!.find((x) => x.name === name.text);
    if (!m) throw typeError(`'${typeName(st)}' has no member named '${name.text}'`, name);
    return memberNode(name, n, m);
  }

  noteRef(name: string, at: Pos): void {
    // Outside any function (a global's initializer), the reference belongs to the entry,
    // which is where a non-constant initializer runs.
    const refs = this.fn ? this.fn.refs : this.topRefs;
    if (!refs.has(name)) refs.set(name, { line: at.line, col: at.col });
  }
  readonly topRefs = new Map<string, { line: number; col: number }>();

  /** A narrow string literal that is a whole argument of a named callee in the entry's code,
   * placed where the host keeps such literals for one run (see ParseHost.argumentLiteral);
   * undefined for any other argument, which the caller parses as usual. */
  argumentLiteral(fnExpr: Expr): Expr | undefined {
    if (!this.host.argumentLiteral || fnExpr.kind !== "funcref" || this.tok.kind !== "str")
      return undefined;
    if (this.fn && this.fn !== this.entry.func) return undefined;
    let end = this.pos;
    while (this.toks[end]?.kind === "str") end++;
    const after = this.toks[end];
    if (after?.kind !== "punct" || (after.text !== "," && after.text !== ")")) return undefined;
    const t = this.tok;
    const start = this.pos;
    const { bytes, elem } = this.stringLiteral();
    const addr =
      elem.size === 1
        ? this.host.argumentLiteral(new Uint8Array(bytes), 1, fnExpr.callee)
        : undefined;
    if (addr === undefined) {
      this.pos = start;
      return undefined;
    }
    return strNode(t, bytes, addr, arrayOf(elem, bytes.length));
  }

  // call = ident "(" (assign ("," assign)*)? ")"
  call(fnExpr: Expr): Expr {
    const at = this.expect("(");
    const args: Expr[] = [];
    while (!this.consume(")")) {
      if (args.length > 0) this.expect(",");
      args.push(this.argumentLiteral(fnExpr) ?? this.assign());
    }
    let fty: Type | undefined;
    let callee: string | undefined;
    if (fnExpr.kind === "funcref") {
      callee = fnExpr.callee;
      fty = fnExpr.fnTy;
    } else if (fnExpr.kind === "unresolved") {
      // A name with no declaration: maybe defined further down this block.
      // Its type is settled by resolvePending.
      const n = callNode(fnExpr, fnExpr.callee, undefined, funcType(T.int, [], true), args, T.int);
      this.pending.push({ node: n, name: fnExpr.callee, fn: this.fn! });
      this.noteRef(fnExpr.callee, fnExpr);
      return n;
    } else {
      const t = fnExpr.ty;
      if (t.kind === "ptr" && t.base!.kind === "func") fty = t.base!;
      else if (t.kind === "func") fty = t;
      else throw typeError(`called object is not a function (it is '${typeName(t)}')`, fnExpr);
    }
    const node = callNode(fnExpr, callee, undefined, fty!, [], fty!.ret!);
    if (callee === undefined) {
      node.lhs = fnExpr;
      if (this.fn) this.fn.indirect = true;
    }
    this.convertArgs(node, fty!, args, callee ?? "function pointer");
    return node;
  }

  convertArgs(node: CallNode, fty: Type, args: Expr[], name: string): void {
    const params = fty.params!;
    if (
      args.length < params.length ||
      (args.length > params.length && !fty.variadic && !fty.oldStyle)
    )
      throw typeError(
        `'${name}' takes ${params.length} argument(s) but ${args.length} were given`,
        node,
      );
    node.args = [];
    for (let i = 0; i < args.length; i++)
      node.args.push(this.convertArg(args[i]!, params[i], name));
    if (fty.variadic && this.fn) {
      let slots = 0;
      for (let i = params.length; i < node.args.length; i++) slots += varargSlots(node.args[i]!.ty);
      this.fn.varargSlots = Math.max(this.fn.varargSlots ?? 0, slots);
    }
  }

  /** One argument converted to its parameter's type `pt`, or promoted when it is variadic. */
  private convertArg(a: Expr, pt: Type | undefined, name: string): Expr {
    if (pt) return this.assignConvert(a, pt, a);
    // Default argument promotions for the variadic part.
    let t = this.toRvalueType(a.ty);
    if (t.kind === "void") throw typeError("void value passed as an argument", a);
    if (isAggregate(t) && this.host.libraryType(name))
      throw typeError(`passing '${typeName(t)}' to library function '${name}' is not supported`, a);
    if (t.kind === "float") t = T.double;
    else if (isInteger(t)) t = promote(t);
    return this.cast(a, t);
  }

  resolvePending(): void {
    for (const { node, name, fn } of this.pending) {
      const f = this.g.funcs.get(name);
      if (!f) {
        if (this.host.isKnownIntrinsic(name))
          throw typeError(`intrinsic '${name}' is not available here (no model attached)`, node);
        throw typeError(`unknown function '${name}'`, node);
      }
      const ret = f.ty.ret!;
      if (!(ret.kind === "int" && !ret.unsigned) && ret.kind !== "void" && ret.kind !== "enum")
        throw typeError(
          `function '${name}' is used before its declaration; declare it first (it returns '${typeName(ret)}')`,
          node,
        );
      node.fnTy = f.ty;
      node.ty = ret.kind === "void" ? T.int : ret;
      const saved = this.fn;
      this.fn = fn;
      this.convertArgs(node, f.ty, node.args, name);
      this.fn = saved;
      if (ret.kind === "void") node.ty = T.int;
    }
  }

  // generic-selection = "_Generic" "(" assign ("," (type-name | "default") ":" assign)+ ")"
  generic(t: Token): Expr {
    this.pos++;
    this.expect("(");
    const control = this.assign();
    const cty = this.toRvalueType(control.ty);
    let chosen: Expr | null = null;
    let fallback: Expr | null = null;
    while (this.consume(",")) {
      if (this.consume("default")) {
        this.expect(":");
        fallback = this.assign();
        continue;
      }
      const ty = this.typeName();
      this.expect(":");
      const e = this.assign();
      if (!chosen && genericMatch(cty, ty)) chosen = e;
    }
    this.expect(")");
    const picked = chosen ?? fallback;
    if (!picked) throw typeError(`_Generic has no association for type '${typeName(cty)}'`, t);
    return picked;
  }

  // stdarg = "va_start" "(" unary "," ident ")" | "va_arg" "(" unary "," type-name ")"
  //        | "va_end" "(" unary ")" | "va_copy" "(" unary "," unary ")"
  // Variadic arguments sit in 8-byte slots (integers widened, floats as double) behind a
  // pointer the caller passes as a hidden last parameter; va_list walks that area.
  stdarg(t: Token): Expr {
    this.pos++;
    this.expect("(");
    const ap = this.assign();
    let r: Expr;
    if (t.text === "va_start") {
      this.expect(",");
      this.assign();
      const area = this.fn?.varargs;
      if (!area) throw typeError("va_start used in a function without '...'", t);
      this.checkLvalue(ap, t);
      r = assignNode(t, ap, this.cast(varNode(t, area, area.ty), ap.ty), ap.ty);
    } else if (t.text === "va_arg") {
      this.expect(",");
      const ty = this.typeName();
      this.checkLvalue(ap, t);
      if (ap.ty.kind !== "ptr") throw typeError("va_arg needs a va_list", t);
      // *(ty *)((ap += n) - n), n = 8 per slot (a struct takes its size rounded up to 8)
      const step = 8 * varargSlots(ty);
      const bump = opAssignNode(t, "+", ap, this.num(step, T.int, t), ap.ty, T.int);
      const back = binaryNode(t, "-", bump, this.num(step, T.int, t), ap.ty, T.int);
      r = this.deref(this.cast(back, pointerTo(ty)), t);
    } else if (t.text === "va_copy") {
      this.expect(",");
      const src = this.assign();
      this.checkLvalue(ap, t);
      r = assignNode(t, ap, this.cast(src, ap.ty), ap.ty);
    } else r = unaryNode("cast", t, ap, T.void);
    this.expect(")");
    return r;
  }

  // primary = "(" expr ")" | ident | str | num
  primary(): Expr {
    const t = this.tok;
    if (this.is("(") && this.peek().text === "{" && this.fn) {
      // statement-expr = "(" compound-stmt ")"
      this.pos++;
      const block = this.compoundStmt();
      this.expect(")");
      const body = block.body;
      const last = body[body.length - 1];
      const ty = last && last.kind === "exprstmt" ? this.toRvalueType(last.lhs.ty) : T.void;
      return stmtExprNode(t, body, ty);
    }
    if (this.consume("(")) {
      const e = this.expr();
      this.expect(")");
      return e;
    }
    if (t.kind === "num") {
      this.pos++;
      const ty = LITERAL_TYPES[t.numType!];
      return t.fval !== undefined ? this.num(t.fval, ty, t) : this.num(t.ival!, ty, t);
    }
    if (t.kind === "str") {
      const { bytes, elem } = this.stringLiteral();
      const addr = this.literalAddress(bytes, elem.size);
      return strNode(t, bytes, addr, arrayOf(elem, bytes.length / elem.size));
    }
    if (t.kind === "ident") {
      if (t.text === "_Generic") return this.generic(t);
      const s = this.lookup(t.text);
      if (s) {
        this.pos++;
        if ("enumConst" in s) return this.num(s.enumConst, T.int, t);
        if ("typedef" in s) throw syntaxError(`unexpected type name '${t.text}'`, t);
        return varNode(t, s, s.ty);
      }
      // Names that mean something when nothing declares them.
      if (t.text === "__func__" || t.text === "__FUNCTION__") {
        // The enclosing function's name, as a string literal (top-level statements: "main").
        const name = !this.fn || this.fn === this.entry.func ? "main" : this.fn.name;
        const bytes = [...Buffer.from(name, "utf8"), 0];
        this.pos++;
        const addr = this.literalAddress(bytes, 1);
        return strNode(t, bytes, addr, arrayOf(T.char, bytes.length));
      }
      if (STDARG_MACROS.has(t.text)) return this.stdarg(t);
      this.pos++;
      const f = this.g.funcs.get(t.text);
      if (f) {
        this.noteRef(t.text, t);
        return funcRefNode(t, t.text, f.ty);
      }
      const lib = this.host.libraryType(t.text) ?? this.host.intrinsicType(t.text);
      if (lib) {
        this.noteRef(t.text, t);
        return funcRefNode(t, t.text, lib);
      }
      if (this.is("(")) {
        if (this.host.isKnownIntrinsic(t.text))
          throw typeError(`intrinsic '${t.text}' is not available here (no model attached)`, t);
        return unresolvedNode(t, t.text);
      }
      throw typeError(`undeclared identifier '${t.text}'`, t);
    }
    if (t.kind === "eof") throw syntaxError("unexpected end of input, expected an expression", t);
    throw syntaxError(`expected an expression but found '${t.text}'`, t);
  }
}

keepShape(
  new Parser([], new GlobalScope(), {
    alloc: () => 0,
    write: () => undefined,
    libraryType: () => undefined,
    intrinsicType: () => undefined,
    isKnownIntrinsic: () => false,
  }),
);

/** _Generic's type match: top-level qualifiers are dropped, but what a pointer points to must
 * agree in const-ness and signedness (so `const char *` and `char *` are different). */
function genericMatch(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case "ptr":
      if (a.base!.kind === "func" || b.base!.kind === "func") return a.base!.kind === b.base!.kind;
      return !!a.base!.isConst === !!b.base!.isConst && genericMatch(a.base!, b.base!);
    case "struct":
    case "union":
      return a.members === b.members;
    case "array":
      return a.len === b.len && genericMatch(a.base!, b.base!);
    default:
      return !!a.unsigned === !!b.unsigned && a.size === b.size;
  }
}

/** A struct or union type before its members are read. */
function aggregateType(kind: "struct" | "union", tag: string | undefined): Type {
  const ty = newType(kind, 0, 1);
  ty.tag = tag;
  ty.members = [];
  ty.complete = false;
  return ty;
}

function withParamNames(ty: Type, names: Token[]): Type {
  ty.paramNames = names;
  return ty;
}

export { CompileError };
