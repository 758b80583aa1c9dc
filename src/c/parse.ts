// Stage 3: a recursive-descent parser that builds the typed tree (type checking happens as
// nodes are built, chibicc-style). Top-level statements form the block's entry function.
import type { Func, Initializer, Node, NodeKind, SwitchCase, Var, BinOp } from "./ast.js";
import { GlobalScope, LARGE_LOCAL_BYTES } from "./ast.js";
import { CompileError, syntaxError, typeError, type Pos } from "./errors.js";
import { layoutMembers, type MemberDecl } from "./layout.js";
import type { Token } from "./tokenize.js";
import {
  T,
  alignTo,
  arrayOf,
  enumType,
  funcType,
  isAggregate,
  isFloat,
  isInteger,
  isNumeric,
  isPointerLike,
  isScalar,
  pointerTo,
  promote,
  sameType,
  typeName,
  usualArith,
  varargSlots,
  type Member,
  type Type,
} from "./types.js";

/** What the parser needs from its surroundings: memory for literals and globals, known callees. */
export interface ParseHost {
  /** Reserves permanent VM memory (globals, string literals) and returns its address. */
  alloc(size: number, align: number): number;
  /** Writes bytes into VM memory at once (string literals). */
  write(addr: number, bytes: Uint8Array): void;
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

interface Scope {
  vars: Map<string, Var | { typedef: Type } | { enumConst: bigint }>;
  tags: Map<string, Type>;
}

interface DeclSpec {
  ty: Type;
  isTypedef: boolean;
  isStatic: boolean;
  isExtern: boolean;
}

const ASSIGN_OPS: Record<string, BinOp> = {
  "+=": "+",
  "-=": "-",
  "*=": "*",
  "/=": "/",
  "%=": "%",
  "<<=": "<<",
  ">>=": ">>",
  "&=": "&",
  "|=": "|",
  "^=": "^",
};

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

export const ENTRY_NAME = "__entry";

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

class Parser {
  private pos = 0;
  private scopes: Scope[] = [];
  private fn: Func | null = null;
  private entry: Func | null = null;
  private entryStmts: Node[] = [];
  /** Entry's return type, inferred from its first `return`. */
  private entryRet: Type | null = null;
  private localId = 0;
  private breakDepth = 0;
  private continueDepth = 0;
  private switches: SwitchCase[][] = [];
  private readonly defined: Func[] = [];
  private readonly inits: { addr: number; bytes: Uint8Array }[] = [];
  /** Calls to names not yet declared; resolved when the block has been read. */
  private pending: { node: Node; fn: Func }[] = [];

  constructor(
    private readonly toks: Token[],
    private readonly g: GlobalScope,
    private readonly host: ParseHost,
  ) {
    for (const [name, ty] of BUILTIN_TYPEDEFS)
      if (!g.typedefs.has(name)) g.typedefs.set(name, { ...ty, name });
  }

  // ---- token helpers ----
  /** The token being read (for errors raised outside the parser's own checks). */
  get current(): Token {
    return this.toks[Math.min(this.pos, this.toks.length - 1)]!;
  }
  private get tok(): Token {
    return this.toks[this.pos]!;
  }
  private peek(n = 1): Token {
    return this.toks[Math.min(this.pos + n, this.toks.length - 1)]!;
  }
  private is(text: string): boolean {
    const t = this.tok;
    return (t.kind === "punct" || t.kind === "keyword") && t.text === text;
  }
  private consume(text: string): boolean {
    if (this.is(text)) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expect(text: string): Token {
    if (!this.is(text)) {
      const t = this.tok;
      const found = t.kind === "eof" ? "end of input" : `'${t.text}'`;
      throw syntaxError(`expected '${text}' but found ${found}`, t);
    }
    return this.toks[this.pos++]!;
  }
  private ident(): Token {
    const t = this.tok;
    if (t.kind !== "ident")
      throw syntaxError(`expected an identifier but found '${t.text || "end of input"}'`, t);
    this.pos++;
    return t;
  }

  // ---- scopes ----
  private enter(): void {
    this.scopes.push({ vars: new Map(), tags: new Map() });
  }
  private leave(): void {
    this.scopes.pop();
  }
  private lookup(name: string): Var | { typedef: Type } | { enumConst: bigint } | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]!.vars.get(name);
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
  private lookupTag(name: string): Type | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const s = this.scopes[i]!.tags.get(name);
      if (s) return s;
    }
    return this.g.tags.get(name);
  }
  private declareTag(name: string, ty: Type): void {
    if (this.scopes.length > 0) this.scopes[this.scopes.length - 1]!.tags.set(name, ty);
    else this.g.tags.set(name, ty);
  }
  private isTypedefName(t: Token): boolean {
    if (t.kind !== "ident") return false;
    const s = this.lookup(t.text);
    return !!s && "typedef" in s;
  }
  private isTypeStart(t: Token = this.tok): boolean {
    if (t.kind === "keyword")
      return ![
        "break",
        "case",
        "continue",
        "default",
        "do",
        "else",
        "for",
        "goto",
        "if",
        "return",
        "sizeof",
        "switch",
        "while",
      ].includes(t.text);
    return this.isTypedefName(t);
  }

  // ---- node constructors ----
  private node(kind: NodeKind, at: Pos, extra: Partial<Node> = {}): Node {
    return { kind, line: at.line, col: at.col, ...extra };
  }
  private num(v: bigint | number, ty: Type, at: Pos): Node {
    if (isFloat(ty)) return this.node("num", at, { ty, fval: Number(v) });
    return this.node("num", at, { ty, ival: BigInt(v) });
  }
  /** Converts an expression to `ty` (a no-op when it already has that type). */
  private cast(n: Node, ty: Type): Node {
    const from = n.ty!;
    if (sameType(from, ty) && from.kind !== "array" && from.kind !== "func") return n;
    if (ty.kind === "void") return this.node("cast", n, { lhs: n, ty });
    if (from.kind === "void") throw typeError("void value used where a value is needed", n);
    if (isAggregate(ty) || isAggregate(from)) {
      if (isAggregate(ty) && isAggregate(from) && sameType(ty, from)) return n;
      throw typeError(`cannot convert '${typeName(from)}' to '${typeName(ty)}'`, n);
    }
    if (n.kind === "num" && isNumeric(ty) && isNumeric(from)) return this.foldNum(n, ty);
    return this.node("cast", n, { lhs: n, ty });
  }
  private foldNum(n: Node, ty: Type): Node {
    if (isFloat(ty)) {
      const v = n.fval !== undefined ? n.fval : Number(BigInt.asIntN(64, n.ival!));
      const fromUnsigned = n.ty!.unsigned && n.fval === undefined;
      const val = fromUnsigned ? Number(BigInt.asUintN(64, n.ival!)) : v;
      return this.num(ty.kind === "float" ? Math.fround(val) : val, ty, n);
    }
    let iv: bigint;
    if (n.fval !== undefined) {
      if (!Number.isFinite(n.fval)) iv = 0n;
      else iv = BigInt(Math.trunc(n.fval));
    } else iv = n.ival!;
    return this.num(wrapInt(iv, ty), ty, n);
  }
  private toRvalueType(t: Type): Type {
    if (t.kind === "array") return pointerTo(t.base!);
    if (t.kind === "func") return pointerTo(t);
    return t;
  }
  private checkScalar(n: Node, what: string): void {
    const t = n.ty!;
    if (!isScalar(t) && t.kind !== "array" && t.kind !== "func")
      throw typeError(`${what} needs a scalar value, not '${typeName(t)}'`, n);
  }
  private newBinary(op: BinOp, l: Node, r: Node, at: Pos): Node {
    const lt = l.ty!;
    const rt = r.ty!;
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
        return this.node("binary", at, {
          op,
          lhs: this.cast(l, { ...T.uint }),
          rhs: this.cast(r, { ...T.uint }),
          ty: T.int,
          opTy: pt,
        });
      }
      const ct = usualArith(lt, rt);
      return this.node("binary", at, {
        op,
        lhs: this.cast(l, ct),
        rhs: this.cast(r, ct),
        ty: T.int,
        opTy: ct,
      });
    }
    if (op === "<<" || op === ">>") {
      if (!isInteger(lt) || !isInteger(rt))
        throw typeError(`operator '${op}' needs integer operands`, at);
      const ty = promote(lt);
      return this.fold(
        this.node("binary", at, { op, lhs: this.cast(l, ty), rhs: this.cast(r, ty), ty, opTy: ty }),
      );
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
    return this.fold(
      this.node("binary", at, {
        op,
        lhs: this.cast(l, ty),
        rhs: this.cast(r, ty),
        ty,
        opTy: ty,
        checked,
      }),
    );
  }
  /** Folds arithmetic on two literal operands so constant expressions stay literals. */
  private fold(n: Node): Node {
    const l = n.lhs!;
    const r = n.rhs!;
    if (l.kind !== "num" || r.kind !== "num") return n;
    const ty = n.ty!;
    if (isFloat(ty)) {
      const a = l.fval!;
      const b = r.fval!;
      let v: number;
      switch (n.op) {
        case "+":
          v = a + b;
          break;
        case "-":
          v = a - b;
          break;
        case "*":
          v = a * b;
          break;
        case "/":
          v = a / b;
          break;
        default:
          return n;
      }
      return this.num(ty.kind === "float" ? Math.fround(v) : v, ty, n);
    }
    const signed = !ty.unsigned;
    const bits = ty.kind === "bool" ? 1 : ty.size * 8;
    const a = signed ? BigInt.asIntN(bits, l.ival!) : BigInt.asUintN(bits, l.ival!);
    const b = signed ? BigInt.asIntN(bits, r.ival!) : BigInt.asUintN(bits, r.ival!);
    let v: bigint;
    switch (n.op) {
      case "+":
        v = a + b;
        break;
      case "-":
        v = a - b;
        break;
      case "*":
        v = a * b;
        break;
      case "/":
        if (b === 0n) return n;
        v = a / b;
        break;
      case "%":
        if (b === 0n) return n;
        v = a % b;
        break;
      case "&":
        v = a & b;
        break;
      case "|":
        v = a | b;
        break;
      case "^":
        v = a ^ b;
        break;
      case "<<":
        v = a << (b & BigInt(bits - 1));
        break;
      case ">>":
        v = a >> (b & BigInt(bits - 1));
        break;
      default:
        return n;
    }
    // Signed overflow is left to run time, where it traps with this operator's position.
    if (n.checked && wrapInt(v, ty) !== v) return n;
    return this.num(wrapInt(v, ty), ty, n);
  }
  private ptrArith(op: "+" | "-", l: Node, r: Node, at: Pos): Node {
    let lt = this.toRvalueType(l.ty!);
    let rt = this.toRvalueType(r.ty!);
    if (op === "+" && !isPointerLike(lt) && isPointerLike(rt)) {
      [l, r] = [r, l];
      [lt, rt] = [rt, lt];
    }
    if (op === "-" && lt.kind === "ptr" && rt.kind === "ptr") {
      const size = Math.max(lt.base!.size, 1);
      const diff = this.node("binary", at, {
        op: "-",
        lhs: this.cast(l, T.int),
        rhs: this.cast(r, T.int),
        ty: T.int,
        opTy: T.int,
      });
      const q =
        size === 1
          ? diff
          : this.node("binary", at, {
              op: "/",
              lhs: diff,
              rhs: this.num(size, T.int, at),
              ty: T.int,
              opTy: T.int,
            });
      return this.cast(q, T.long);
    }
    if (lt.kind !== "ptr" || !isInteger(rt))
      throw typeError(
        `invalid operands to '${op}': '${typeName(l.ty!)}' and '${typeName(r.ty!)}'`,
        at,
      );
    if (lt.base!.kind === "void" && false) throw typeError("arithmetic on void pointer", at);
    const size = lt.base!.kind === "void" || lt.base!.kind === "func" ? 1 : lt.base!.size;
    let idx = this.cast(r, T.int);
    if (size !== 1)
      idx = this.fold(
        this.node("binary", at, {
          op: "*",
          lhs: idx,
          rhs: this.num(size, T.int, at),
          ty: T.int,
          opTy: T.int,
        }),
      );
    return this.node("binary", at, { op, lhs: this.cast(l, lt), rhs: idx, ty: lt, opTy: T.int });
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
      this.topLevelStatement();
    }
    this.resolvePending();
    if (this.entry) {
      for (const [k, v] of this.topRefs) if (!this.entry.refs.has(k)) this.entry.refs.set(k, v);
      this.finishEntry();
    }
    const definesMain = this.defined.some((f) => f.name === "main");
    return {
      scope: this.g,
      defined: this.defined,
      inits: this.inits,
      entry: this.entry,
      runsMain: definesMain && !this.hasStatements,
    };
  }

  private ensureEntry(at: Pos): Func {
    if (!this.entry) {
      this.entry = {
        name: ENTRY_NAME,
        ty: funcType(T.void, []),
        params: [],
        locals: [],
        body: null,
        line: at.line,
        col: at.col,
        refs: new Map(),
        isStatic: false,
      };
    }
    return this.entry;
  }

  private topLevelStatement(): void {
    this.hasStatements = true;
    const entry = this.ensureEntry(this.tok);
    const saved = this.fn;
    this.fn = entry;
    this.scopes.push(this.entryScope);
    this.enter();
    // A bare expression at the very end is the block's value: `847*293`.
    const start = this.pos;
    const isLabel = this.tok.kind === "ident" && this.peek().text === ":";
    if (!this.isStatementKeyword() && !this.is("{") && !isLabel) {
      const e = this.expr();
      if (this.tok.kind === "eof") {
        this.entryStmts.push(this.makeReturn(e, e));
        this.leave();
        this.scopes.pop();
        this.fn = saved;
        return;
      }
      this.pos = start;
    }
    const s = this.stmt();
    this.leave();
    this.scopes.pop();
    this.fn = saved;
    // Locals declared in nested scopes of the entry are plain locals of the entry function.
    this.entryStmts.push(s);
  }

  private isStatementKeyword(): boolean {
    return (
      this.tok.kind === "keyword" &&
      [
        "if",
        "for",
        "while",
        "do",
        "switch",
        "return",
        "break",
        "continue",
        "goto",
        "case",
        "default",
      ].includes(this.tok.text)
    );
  }

  private hasStatements = false;
  /** Locals of the entry that live across top-level statements (variable-length arrays). */
  private readonly entryScope: Scope = { vars: new Map(), tags: new Map() };

  private finishEntry(): void {
    const entry = this.entry!;
    const stmts = this.entryStmts;
    this.fn = entry;
    // Only initializers of globals ran here: a program with main() still runs main after them.
    const main = this.g.funcs.get("main");
    if (!this.hasStatements && main?.body && this.defined.includes(main)) {
      const call = this.node("call", main, {
        callee: "main",
        args: [],
        fnTy: main.ty,
        ty: main.ty.ret,
      });
      call.args = mainArgs(main.ty.params!.length, this.host).map((v, i) =>
        this.cast(this.num(v, T.int, main), main.ty.params![i]!),
      );
      this.noteRef("main", main);
      stmts.push(
        main.ty.ret!.kind === "void"
          ? this.node("exprstmt", main, { lhs: call })
          : this.makeReturn(call, main),
      );
    }
    // With no `return`, the value of a trailing expression statement is the block's value.
    if (!this.entryRet) {
      const last = stmts[stmts.length - 1];
      if (
        last &&
        last.kind === "exprstmt" &&
        last.lhs!.ty!.kind !== "void" &&
        !isAggregate(last.lhs!.ty!)
      ) {
        stmts[stmts.length - 1] = this.makeReturn(last.lhs!, last);
      }
    }
    for (const g of entry.gotos ?? [])
      if (!entry.labels?.has(g.text))
        throw syntaxError(`label '${g.text}' used but not defined`, g);
    entry.ty = funcType(this.entryRet ?? T.void, []);
    entry.body = this.node("block", entry, { body: stmts });
    this.fn = null;
  }

  // external-declaration = declspec (function-definition | declarator ("=" initializer)? ("," ...)* ";")
  private externalDeclaration(): void {
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

  private declareFunction(ty: Type, name: Token, spec: DeclSpec, defining: boolean): Func {
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
  private functionDefinition(ty: Type, name: Token, spec: DeclSpec): void {
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
    f.params = (ty.paramNames ?? []).map((pn, i) => {
      const pty = ty.params![i]!;
      if (isAggregate(pty) && !pty.complete)
        throw typeError(`parameter has incomplete type '${typeName(pty)}'`, pn);
      const v = this.newLocal(pn.text, pty, pn);
      v.isParam = true;
      return v;
    });
    f.varargs = ty.variadic ? this.newLocal("__va_area", pointerTo(T.char), name) : undefined;
    f.body = this.compoundStmt();
    for (const g of f.gotos ?? [])
      if (!f.labels?.has(g.text)) throw syntaxError(`label '${g.text}' used but not defined`, g);
    this.leave();
    this.fn = savedFn;
    if (!this.defined.includes(f)) this.defined.push(f);
  }

  private newLocal(name: string, ty: Type, at: Pos): Var {
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
    const prior = scope.vars.get(name);
    if (prior && "id" in prior && !prior.isParam && !this.fn?.params.includes(prior))
      throw typeError(`redefinition of '${name}'`, at);
    scope.vars.set(name, v);
    this.fn!.locals.push(v);
    return v;
  }

  private newGlobal(name: string, ty: Type, at: Pos): Var {
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

  private globalVariable(ty: Type, name: Token, spec: DeclSpec): void {
    if (ty.vlaLen) {
      // `int a[n];` among top-level statements: a local array of the entry.
      const entry = this.ensureEntry(name);
      const saved = this.fn;
      this.fn = entry;
      this.scopes.push(this.entryScope);
      const v = this.newLocal(name.text, ty, name);
      const count = this.newLocal(`__count_${name.text}`, T.int, name);
      v.ty = { ...ty, vlaCount: count };
      entry.hasVla = true;
      this.entryStmts.push(
        this.node("decl", name, {
          v,
          lhs: this.node("var", name, { v, ty: v.ty }),
          rhs: ty.vlaLen,
        }),
      );
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
      init = this.initializer(ty);
      if (ty.kind === "array" && ty.len! < 0) ty = init.ty;
    }
    const v = this.newGlobal(name.text, ty, name);
    this.g.vars.set(name.text, v);
    this.staticInit(v, init, name);
  }

  /** Writes a global's initial value; a non-constant one becomes a statement of the entry. */
  private staticInit(v: Var, init: Initializer | undefined, at: Pos): void {
    const bytes = new Uint8Array(v.ty.size);
    if (!init) {
      this.inits.push({ addr: v.addr, bytes });
      return;
    }
    try {
      this.serialize(init, bytes, 0);
      this.inits.push({ addr: v.addr, bytes });
    } catch (e) {
      if (e instanceof RangeError)
        throw typeError(
          `initializer of '${v.name}' is not supported (it does not fit the object's layout)`,
          at,
        );
      if (!(e instanceof NotConstant)) throw e;
      if (this.scopes.length > 0 || this.fn)
        throw typeError(`initializer of static '${v.name}' is not a constant`, at);
      // At top level with statements around it, run the initializer when the block runs.
      this.inits.push({ addr: v.addr, bytes: new Uint8Array(v.ty.size) });
      const entry = this.ensureEntry(at);
      const saved = this.fn;
      this.fn = entry;
      const ref = this.node("var", at, { v, ty: v.ty });
      this.entryStmts.push(this.node("decl", at, { v, initializer: init, lhs: ref }));
      this.fn = saved;
    }
  }

  private serialize(init: Initializer, out: Uint8Array, offset: number): void {
    if (init.bytes) {
      out.set(init.bytes.slice(0, init.ty.size), offset);
      return;
    }
    if (init.items) {
      for (const it of init.items) this.serialize(it.init, out, offset + it.offset);
      return;
    }
    const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const ty = init.ty;
    const value = this.constValue(init.expr!);
    if (isFloat(ty)) {
      const f = typeof value === "number" ? value : Number(BigInt.asIntN(64, value));
      if (ty.kind === "float") dv.setFloat32(offset, f, true);
      else dv.setFloat64(offset, f, true);
      return;
    }
    const iv = typeof value === "number" ? truncToBigInt(value) : value;
    if (ty.bitField) {
      // Merge the field's bits into its storage unit, which other fields may share.
      const { offset: lo, width } = ty.bitField;
      const mask = ((1n << BigInt(width)) - 1n) << BigInt(lo);
      let unit = 0n;
      for (let i = ty.size - 1; i >= 0; i--) unit = (unit << 8n) | BigInt(out[offset + i]!);
      unit = (unit & ~mask) | ((iv << BigInt(lo)) & mask);
      for (let i = 0; i < ty.size; i++) out[offset + i] = Number((unit >> BigInt(8 * i)) & 0xffn);
      return;
    }
    switch (ty.size) {
      case 1:
        dv.setUint8(offset, Number(BigInt.asUintN(8, iv)));
        break;
      case 2:
        dv.setUint16(offset, Number(BigInt.asUintN(16, iv)), true);
        break;
      case 4:
        dv.setUint32(offset, Number(BigInt.asUintN(32, iv)), true);
        break;
      case 8:
        dv.setBigUint64(offset, BigInt.asUintN(64, iv), true);
        break;
      default:
        throw new NotConstant();
    }
  }

  /** Evaluates a constant expression (numbers, casts, addresses of globals and literals). */
  private constValue(n: Node): bigint | number {
    switch (n.kind) {
      case "num":
        return n.fval !== undefined ? n.fval : n.ival!;
      case "str":
        return BigInt(n.addr!);
      case "cast": {
        const v = this.constValue(n.lhs!);
        const ty = n.ty!;
        if (isFloat(ty))
          return typeof v === "number"
            ? v
            : Number(n.lhs!.ty!.unsigned ? BigInt.asUintN(64, v) : BigInt.asIntN(64, v));
        const iv = typeof v === "number" ? truncToBigInt(v) : v;
        return wrapInt(iv, ty.kind === "ptr" ? T.uint : ty);
      }
      case "addr":
        return this.constAddress(n.lhs!);
      case "var":
        if (n.v!.global && (n.ty!.kind === "array" || n.ty!.kind === "func"))
          return BigInt(n.v!.addr);
        throw new NotConstant();
      case "binary": {
        const a = this.constValue(n.lhs!);
        const b = this.constValue(n.rhs!);
        if (typeof a === "bigint" && typeof b === "bigint") {
          switch (n.op) {
            case "+":
              return a + b;
            case "-":
              return a - b;
            case "*":
              return a * b;
          }
        }
        throw new NotConstant();
      }
      case "neg": {
        const v = this.constValue(n.lhs!);
        return typeof v === "number" ? -v : -v;
      }
      default:
        throw new NotConstant();
    }
  }
  private constAddress(n: Node): bigint {
    if (n.kind === "var" && n.v!.global) return BigInt(n.v!.addr);
    if (n.kind === "str") return BigInt(n.addr!);
    if (n.kind === "member") return this.constAddress(n.lhs!) + BigInt(n.member!.offset);
    if (n.kind === "deref") {
      const v = this.constValue(n.lhs!);
      if (typeof v === "bigint") return v;
    }
    throw new NotConstant();
  }

  // ---- declarations ----
  // declspec = ("void" | "char" | "short" | "int" | "long" | "float" | "double" | "_Bool"
  //            | "signed" | "unsigned" | struct-decl | union-decl | enum-specifier | typedef-name
  //            | "typedef" | "static" | "extern" | "const" | "volatile" | "inline" | "register")+
  private declspec(): DeclSpec {
    const spec: DeclSpec = { ty: T.int, isTypedef: false, isStatic: false, isExtern: false };
    const counts: Record<string, number> = {};
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
            if (named || Object.keys(counts).length)
              throw syntaxError("too many types in declaration", t);
            this.pos++;
            named = this.structDecl(t.text as "struct" | "union");
            continue;
          case "enum":
            if (named || Object.keys(counts).length)
              throw syntaxError("too many types in declaration", t);
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
            counts[t.text] = (counts[t.text] ?? 0) + 1;
            this.pos++;
            continue;
        }
        break;
      }
      if (
        t.kind === "ident" &&
        !named &&
        Object.keys(counts).length === 0 &&
        this.isTypedefName(t)
      ) {
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

  private basicType(c: Record<string, number>, at: Pos): Type {
    const unsigned = (c["unsigned"] ?? 0) > 0;
    if (c["void"]) return T.void;
    if (c["_Bool"] || c["bool"]) return T.bool;
    if (c["char"]) return unsigned ? T.uchar : T.char;
    if (c["float"]) return T.float;
    if (c["double"]) return T.double; // long double is double
    if (c["short"]) return unsigned ? T.ushort : T.short;
    if (c["long"]) {
      if (c["long"] > 2) throw syntaxError("'long long long' is too long", at);
      return unsigned ? T.ulong : T.long;
    }
    if (c["int"] || c["signed"] || unsigned) return unsigned ? T.uint : T.int;
    throw syntaxError(`expected a type but found '${this.tok.text}'`, this.tok);
  }

  // struct-decl = ident? ("{" (declspec declarator ("," declarator)* ";")* "}")?
  private structDecl(kind: "struct" | "union"): Type {
    let tag: string | undefined;
    const at = this.tok;
    if (this.tok.kind === "ident") tag = this.ident().text;
    if (tag && !this.is("{")) {
      const found = this.lookupTag(tag);
      if (found) {
        if (found.kind !== kind) throw typeError(`'${tag}' is not a ${kind}`, at);
        return found;
      }
      const fwd: Type = { kind, size: 0, align: 1, tag, members: [], complete: false };
      this.declareTag(tag, fwd);
      return fwd;
    }
    this.expect("{");
    // Fill in a forward declaration in place so pointers to it see the members.
    let ty: Type = { kind, size: 0, align: 1, tag, members: [], complete: false };
    if (tag) {
      const cur = this.scopes.length
        ? this.scopes[this.scopes.length - 1]!.tags.get(tag)
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
  private bitField(ty: Type, name: Token | null, at: Pos): MemberDecl {
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
  private enumSpecifier(): Type {
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
        this.scopes[this.scopes.length - 1]!.vars.set(name.text, { enumConst: value });
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
  private pointers(ty: Type): Type {
    while (this.consume("*")) {
      ty = pointerTo(ty);
      while (this.consume("const") || this.consume("volatile") || this.consume("restrict"));
    }
    return ty;
  }

  // declarator = pointers ("(" declarator ")" | ident)? type-suffix
  private declarator(ty: Type): { ty: Type; name: Token | null } {
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
  private typeSuffix(ty: Type): Type {
    if (this.consume("(")) return this.funcParams(ty);
    if (this.consume("[")) {
      let len = -1;
      let vlaLen: Node | undefined;
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
          if (e.ival === undefined && !Number.isFinite(e.fval!))
            throw typeError(`array size ${e.fval} is not a finite number`, at);
          const n = e.ival !== undefined ? BigInt.asIntN(64, e.ival) : BigInt(Math.trunc(e.fval!));
          if (n < 0n) throw typeError("array size is negative", at);
          len = Number(n);
        } else {
          // A variable-length array: only as a local, sized when its declaration runs.
          if (!isInteger(e.ty!)) throw typeError("array size is not an integer", at);
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
  private funcParams(ret: Type): Type {
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
  private typeName(): Type {
    const spec = this.declspec();
    const { ty, name } = this.declarator(spec.ty);
    if (name) throw syntaxError(`unexpected name '${name.text}' in type`, name);
    return ty;
  }

  private constInt(): bigint {
    const at = this.tok;
    const n = this.conditional();
    if (n.kind !== "num" || n.ival === undefined) {
      if (n.kind === "num") {
        if (!Number.isFinite(n.fval!))
          throw typeError(`expected a constant integer, but ${n.fval} is not finite`, at);
        return BigInt(Math.trunc(n.fval!));
      }
      throw typeError("expected a constant integer expression", at);
    }
    return BigInt.asIntN(64, n.ival);
  }

  // string-literal = str+ (adjacent literals concatenate; any L"…" makes the whole one wide)
  /** Reads adjacent string literals: the bytes with the terminating NUL, and the element type
   * (char, or int for wchar_t strings, stored little-endian). */
  private stringLiteral(): { bytes: number[]; elem: Type } {
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

  // initializer = "{" initializer ("," initializer)* ","? "}" | assign
  private initializer(ty: Type): Initializer {
    const at = this.tok;
    if (ty.kind === "array") {
      const wideOk = ty.base!.size === 4 && isInteger(ty.base!);
      if (this.tok.kind === "str" && (ty.base!.size === 1 || (wideOk && this.tok.units))) {
        const { bytes, elem } = this.stringLiteral();
        if (elem.size !== ty.base!.size)
          throw typeError(`cannot initialize '${typeName(ty)}' with a wide string`, at);
        const count = bytes.length / elem.size;
        const len = ty.len! < 0 ? count : ty.len!;
        const aty = arrayOf(ty.base!, len);
        return { ty: aty, bytes: bytes.slice(0, len * elem.size) };
      }
      if (this.is("{") && this.peek().kind === "str" && ty.base!.size === 1) {
        this.pos++;
        const r = this.initializer(ty);
        this.consume(",");
        this.expect("}");
        return r;
      }
      this.expect("{");
      const items: { offset: number; init: Initializer }[] = [];
      let i = 0;
      let max = 0;
      while (!this.consume("}")) {
        let designated = false;
        if (this.consume("[")) {
          i = this.arrayDesignator(ty);
          designated = true;
        } else if (ty.len! >= 0 && i >= ty.len!)
          throw typeError("too many elements in array initializer", this.tok);
        const init = designated ? this.designation(ty.base!) : this.elementInit(ty.base!);
        items.push({ offset: i * ty.base!.size, init });
        i++;
        max = Math.max(max, i);
        if (!this.consume(",")) {
          this.expect("}");
          break;
        }
      }
      const len = ty.len! < 0 ? max : ty.len!;
      return { ty: arrayOf(ty.base!, len), items };
    }
    if (isAggregate(ty)) {
      if (!this.is("{")) {
        const e = this.assign();
        if (!isAggregate(e.ty!) || !sameType(e.ty!, ty))
          throw typeError(`cannot initialize '${typeName(ty)}' with '${typeName(e.ty!)}'`, at);
        return { ty, expr: e };
      }
      this.expect("{");
      const items: { offset: number; init: Initializer }[] = [];
      let k = 0;
      const members = ty.fields ?? ty.members ?? [];
      while (!this.consume("}")) {
        let m: Member | undefined;
        let init: Initializer;
        if (this.consume(".")) {
          m = this.memberDesignator(ty);
          const named = m;
          k = members.findIndex(
            (x) =>
              x.name === named.name ||
              (x.name === "" && x.ty.members?.some((y) => y.name === named.name)),
          );
          init = this.designation(m.ty);
        } else {
          m = members[k];
          if (!m) throw typeError("too many elements in struct initializer", this.tok);
          init = this.elementInit(m.ty);
        }
        items.push({ offset: m.offset, init });
        k++;
        if (ty.kind === "union") k = members.length;
        if (!this.consume(",")) {
          this.expect("}");
          break;
        }
      }
      return { ty, items };
    }
    if (this.is("{")) {
      this.pos++;
      const r = this.initializer(ty);
      this.consume(",");
      this.expect("}");
      return r;
    }
    const e = this.assign();
    return { ty, expr: this.assignConvert(e, ty, at) };
  }

  // designation = ("[" const-expr "]" | "." ident)* "=" initializer
  /** The rest of a designator chain (`.color.g = 9`, `[2].x = 1`) after its first designator
   * chose a subobject of type `ty`: an initializer for `ty` that fills only the designated part
   * (later entries of the list may fill others; each overrides what it names). */
  private designation(ty: Type): Initializer {
    if (this.consume(".")) {
      const m = this.memberDesignator(ty);
      return { ty, items: [{ offset: m.offset, init: this.designation(m.ty) }] };
    }
    if (this.consume("[")) {
      const i = this.arrayDesignator(ty);
      return { ty, items: [{ offset: i * ty.base!.size, init: this.designation(ty.base!) }] };
    }
    this.expect("=");
    return this.elementInit(ty);
  }
  /** `.name` in an initializer (the "." read): the member of `ty` it names, which may be a
   * member of an anonymous struct/union member. */
  private memberDesignator(ty: Type): Member {
    const name = this.ident();
    if (!isAggregate(ty))
      throw typeError(
        `member designator '.${name.text}' for '${typeName(ty)}', which is not a struct`,
        name,
      );
    const m = (ty.members ?? []).find((x) => x.name === name.text);
    if (!m) throw typeError(`no member named '${name.text}' in '${typeName(ty)}'`, name);
    return m;
  }
  /** `[index]` in an initializer (the "[" read): the index, checked against `ty`. */
  private arrayDesignator(ty: Type): number {
    const at = this.tok;
    if (ty.kind !== "array")
      throw typeError(`array designator for '${typeName(ty)}', which is not an array`, at);
    const i = Number(this.constInt());
    if (i < 0) throw typeError(`array designator [${i}] is negative`, at);
    if (ty.len! >= 0 && i >= ty.len!)
      throw typeError(`array designator [${i}] is past the end of '${typeName(ty)}'`, at);
    this.expect("]");
    return i;
  }

  /** An element of a braced list: an aggregate element may leave out its own braces
   * (`int m[3][3] = {0}`, `struct P ps[2] = {1, 2, 3, 4}`). */
  private elementInit(ty: Type): Initializer {
    const aggregate = ty.kind === "array" || isAggregate(ty);
    const stringForChars = ty.kind === "array" && ty.base!.size === 1 && this.tok.kind === "str";
    if (!aggregate || this.is("{") || stringForChars) return this.initializer(ty);
    // A struct-typed expression (e.g. another variable) initializes the whole member.
    if (isAggregate(ty) && !this.is("{")) {
      const save = this.pos;
      try {
        const e = this.assign();
        if (isAggregate(e.ty!) && sameType(e.ty!, ty)) return { ty, expr: e };
      } catch {
        /* not an expression of that struct type: read it brace-less below */
      }
      this.pos = save;
    }
    const items: { offset: number; init: Initializer }[] = [];
    const slots: { offset: number; ty: Type }[] =
      ty.kind === "array"
        ? Array.from({ length: Math.max(ty.len!, 0) }, (_, i) => ({
            offset: i * ty.base!.size,
            ty: ty.base!,
          }))
        : (ty.fields ?? ty.members ?? [])
            .slice(0, ty.kind === "union" ? 1 : undefined)
            .map((m) => ({ offset: m.offset, ty: m.ty }));
    for (let i = 0; i < slots.length && !this.is("}"); i++) {
      if (i > 0) {
        if (!this.is(",") || this.peek().text === "}") break;
        this.pos++;
      }
      items.push({ offset: slots[i]!.offset, init: this.elementInit(slots[i]!.ty) });
    }
    return { ty, items };
  }

  /** Converts a value for assignment to `ty`, rejecting what C rejects. */
  private assignConvert(e: Node, ty: Type, at: Pos): Node {
    const et = e.ty!;
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
  private compoundStmt(): Node {
    const at = this.expect("{");
    const body: Node[] = [];
    this.enter();
    while (!this.consume("}")) {
      if (this.tok.kind === "eof") throw syntaxError("expected '}' before end of input", at);
      if (this.isTypeStart() && this.peek().text !== ":") body.push(...this.localDeclaration());
      else body.push(this.stmt());
    }
    this.leave();
    return this.node("block", at, { body });
  }

  // declaration = declspec (declarator ("=" initializer)?) ("," ...)* ";"
  private localDeclaration(): Node[] {
    const spec = this.declspec();
    const out: Node[] = [];
    if (this.consume(";")) return out;
    for (;;) {
      const { ty: declTy, name } = this.declarator(spec.ty);
      let ty = declTy;
      if (!name) throw syntaxError("expected a variable name", this.tok);
      if (spec.isTypedef) {
        this.scopes[this.scopes.length - 1]!.vars.set(name.text, {
          typedef: { ...ty, name: name.text },
        });
      } else if (ty.kind === "func") {
        this.declareFunction(ty, name, spec, false);
      } else if (spec.isStatic || spec.isExtern) {
        let init: Initializer | undefined;
        if (this.consume("=")) {
          init = this.initializer(ty);
          if (ty.kind === "array" && ty.len! < 0) ty = init.ty;
        }
        const v = this.newGlobal(`${this.fn!.name}.${name.text}`, ty, name);
        this.scopes[this.scopes.length - 1]!.vars.set(name.text, v);
        this.staticInit(v, init, name);
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
          const ref = this.node("var", name, { v, ty });
          out.push(this.node("decl", name, { v, lhs: ref, rhs: ty.vlaLen }));
          this.fn!.hasVla = true;
          if (this.consume(";")) return out;
          if (!this.is(",")) this.expectSemi();
          this.expect(",");
          continue;
        }
        let init: Initializer | undefined;
        if (this.consume("=")) {
          init = this.initializer(ty);
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
          const ref = this.node("var", name, { v, ty });
          out.push(this.node("decl", name, { v, initializer: init, lhs: ref }));
        }
      }
      if (this.consume(";")) return out;
      if (!this.is(",")) this.expectSemi();
      this.expect(",");
    }
  }

  private makeReturn(e: Node | null, at: Pos): Node {
    const f = this.fn!;
    if (f === this.entry) {
      if (!e) {
        if (this.entryRet && this.entryRet.kind !== "void")
          throw typeError("return without a value", at);
        this.entryRet = T.void;
        return this.node("return", at, {});
      }
      if (!this.entryRet) {
        let t = this.toRvalueType(e.ty!);
        if (isAggregate(t))
          throw typeError(`cannot return '${typeName(t)}' as the block's value`, e);
        if (t.kind !== "void") t = promoteForValue(t);
        this.entryRet = t;
      }
      if (this.entryRet.kind === "void")
        return this.node("return", at, { lhs: this.cast(e, T.void) });
      return this.node("return", at, { lhs: this.assignConvert(e, this.entryRet, e) });
    }
    const ret = f.ty.ret!;
    if (!e) {
      return this.node("return", at, {});
    }
    if (ret.kind === "void") {
      if (e.ty!.kind !== "void") throw typeError(`void function '${f.name}' returns a value`, at);
      return this.node("return", at, { lhs: e });
    }
    return this.node("return", at, { lhs: this.assignConvert(e, ret, e) });
  }

  // stmt = "return" expr? ";" | "if" ... | "switch" ... | "case" ... | "default" ":" stmt
  //      | "for" ... | "while" ... | "do" ... | "break" ";" | "continue" ";" | compound-stmt | expr-stmt
  private stmt(): Node {
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
          return this.node("if", t, { cond, then, els });
        }
        case "switch": {
          this.pos++;
          this.expect("(");
          let cond = this.expr();
          if (!isInteger(cond.ty!))
            throw typeError(`switch needs an integer, not '${typeName(cond.ty!)}'`, cond);
          cond = this.cast(cond, promote(cond.ty!));
          this.expect(")");
          const cases: SwitchCase[] = [];
          this.switches.push(cases);
          this.breakDepth++;
          const body = this.stmt();
          this.breakDepth--;
          this.switches.pop();
          const sw = this.node("switch", t, { cond, then: body, cases });
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
          const n = this.node("case", t, { caseValue: value });
          cases.push({ value, node: n });
          n.then = this.is("}") ? this.node("null", t) : this.stmt();
          return n;
        }
        case "for": {
          this.pos++;
          this.expect("(");
          this.enter();
          let init: Node | undefined;
          if (this.isTypeStart()) init = this.node("block", t, { body: this.localDeclaration() });
          else if (!this.consume(";")) {
            init = this.node("exprstmt", t, { lhs: this.expr() });
            this.expect(";");
          }
          const cond = this.is(";") ? undefined : this.condition();
          this.expect(";");
          const inc = this.is(")") ? undefined : this.expr();
          this.expect(")");
          const then = this.loopBody();
          this.leave();
          return this.node("for", t, { init, cond, inc, then });
        }
        case "while": {
          this.pos++;
          this.expect("(");
          const cond = this.condition();
          this.expect(")");
          return this.node("for", t, { cond, then: this.loopBody() });
        }
        case "do": {
          this.pos++;
          const then = this.loopBody();
          this.expect("while");
          this.expect("(");
          const cond = this.condition();
          this.expect(")");
          this.expectSemi();
          return this.node("do", t, { cond, then });
        }
        case "break":
          this.pos++;
          if (this.breakDepth === 0) throw syntaxError("'break' outside of a loop or switch", t);
          this.expectSemi();
          return this.node("break", t);
        case "continue":
          this.pos++;
          if (this.continueDepth === 0) throw syntaxError("'continue' outside of a loop", t);
          this.expectSemi();
          return this.node("continue", t);
        case "goto": {
          this.pos++;
          const target = this.ident();
          this.expectSemi();
          this.fn?.gotos?.push(target) ?? (this.fn!.gotos = [target]);
          return this.node("goto", t, { label: target.text });
        }
      }
    }
    if (t.kind === "ident" && this.peek().text === ":") {
      this.pos += 2;
      const f = this.fn!;
      f.labels ??= new Set();
      if (f.labels.has(t.text)) throw syntaxError(`duplicate label '${t.text}'`, t);
      f.labels.add(t.text);
      const then = this.is("}") ? this.node("null", t) : this.stmt();
      return this.node("label", t, { label: t.text, then });
    }
    if (this.is("{")) return this.compoundStmt();
    if (this.consume(";")) return this.node("null", t);
    const e = this.expr();
    this.expectSemi();
    return this.node("exprstmt", t, { lhs: e });
  }

  private expectSemi(): void {
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

  private loopBody(): Node {
    this.breakDepth++;
    this.continueDepth++;
    const body = this.stmt();
    this.breakDepth--;
    this.continueDepth--;
    return body;
  }

  /** A controlling expression: any scalar. */
  private condition(): Node {
    const e = this.expr();
    this.checkScalar(e, "a condition");
    return e;
  }

  // ---- expressions ----
  // expr = assign ("," expr)?
  private expr(): Node {
    const l = this.assign();
    if (this.is(",")) {
      const at = this.tok;
      this.pos++;
      const r = this.expr();
      return this.node("comma", at, { lhs: l, rhs: r, ty: r.ty });
    }
    return l;
  }

  private checkLvalue(n: Node, at: Pos): void {
    if (n.kind === "var" && n.ty!.kind !== "array") {
      if (n.ty!.isConst) throw typeError(`cannot assign to const variable '${n.v!.name}'`, at);
      return;
    }
    if (n.kind === "deref" || n.kind === "member") {
      if (n.ty!.kind === "array") throw typeError("cannot assign to an array", at);
      return;
    }
    throw typeError("expression is not assignable", at);
  }

  // assign = conditional (assign-op assign)?
  private assign(): Node {
    const l = this.conditional();
    const t = this.tok;
    if (t.kind !== "punct") return l;
    if (t.text === "=") {
      this.pos++;
      this.checkLvalue(l, t);
      const r = this.assign();
      return this.node("assign", t, { lhs: l, rhs: this.assignConvert(r, l.ty!, r), ty: l.ty });
    }
    const op = ASSIGN_OPS[t.text];
    if (!op) return l;
    this.pos++;
    this.checkLvalue(l, t);
    const r = this.assign();
    const lt = l.ty!;
    if (lt.kind === "ptr" && (op === "+" || op === "-")) {
      if (!isInteger(r.ty!)) throw typeError(`invalid operands to '${t.text}'`, t);
      const size = lt.base!.kind === "void" ? 1 : lt.base!.size;
      let idx = this.cast(r, T.int);
      if (size !== 1)
        idx = this.fold(
          this.node("binary", t, {
            op: "*",
            lhs: idx,
            rhs: this.num(size, T.int, t),
            ty: T.int,
            opTy: T.int,
          }),
        );
      return this.node("opassign", t, { op, lhs: l, rhs: idx, ty: lt, opTy: T.int });
    }
    // Type-check as the binary operator would, then convert the result back.
    const probe = this.newBinary(op, { ...l }, r, t);
    const opTy = probe.kind === "binary" ? probe.opTy! : probe.ty!;
    const rhs = probe.kind === "binary" ? probe.rhs! : this.cast(r, opTy);
    const checked = (op === "+" || op === "-" || op === "*") && isInteger(opTy) && !opTy.unsigned;
    return this.node("opassign", t, { op, lhs: l, rhs, ty: lt, opTy, checked });
  }

  // conditional = logor ("?" expr ":" conditional)?
  private conditional(): Node {
    const cond = this.logor();
    if (!this.is("?")) return cond;
    const at = this.tok;
    this.pos++;
    this.checkScalar(cond, "'?:'");
    let a = this.expr();
    this.expect(":");
    let b = this.conditional();
    const at_ = a.ty!;
    const bt = b.ty!;
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
    return this.node("cond", at, { cond, then: a, els: b, ty });
  }

  // logor = logand ("||" logand)*
  private logor(): Node {
    let n = this.logand();
    while (this.is("||")) {
      const at = this.tok;
      this.pos++;
      const r = this.logand();
      this.checkScalar(n, "'||'");
      this.checkScalar(r, "'||'");
      n = this.node("logor", at, { lhs: n, rhs: r, ty: T.int });
    }
    return n;
  }

  // logand = bitor ("&&" bitor)*
  private logand(): Node {
    let n = this.bitLevel(0);
    while (this.is("&&")) {
      const at = this.tok;
      this.pos++;
      const r = this.bitLevel(0);
      this.checkScalar(n, "'&&'");
      this.checkScalar(r, "'&&'");
      n = this.node("logand", at, { lhs: n, rhs: r, ty: T.int });
    }
    return n;
  }

  // bitor = bitxor ("|" bitxor)*; bitxor = bitand ("^" bitand)*; bitand = equality ("&" equality)*
  // equality = relational (("==" | "!=") relational)*
  // relational = shift (("<" | "<=" | ">" | ">=") shift)*
  // shift = add (("<<" | ">>") add)*; add = mul (("+" | "-") mul)*; mul = cast (("*" | "/" | "%") cast)*
  private static readonly LEVELS: string[][] = [
    ["|"],
    ["^"],
    ["&"],
    ["==", "!="],
    ["<", "<=", ">", ">="],
    ["<<", ">>"],
    ["+", "-"],
    ["*", "/", "%"],
  ];
  private bitLevel(level: number): Node {
    if (level >= Parser.LEVELS.length) return this.castExpr();
    let n = this.bitLevel(level + 1);
    const ops = Parser.LEVELS[level]!;
    for (;;) {
      const t = this.tok;
      if (t.kind !== "punct" || !ops.includes(t.text)) return n;
      this.pos++;
      const r = this.bitLevel(level + 1);
      n = this.newBinary(t.text as BinOp, n, r, t);
    }
  }

  // cast = "(" type-name ")" cast | unary
  private castExpr(): Node {
    if (this.is("(") && this.isTypeStart(this.peek())) {
      const at = this.tok;
      this.pos++;
      const ty = this.typeName();
      this.expect(")");
      if (this.is("{")) return this.postfixOf(this.compoundLiteral(ty, at));
      const e = this.castExpr();
      if (ty.kind === "void") return this.node("cast", at, { lhs: e, ty });
      if (!isScalar(ty)) throw typeError(`cannot cast to '${typeName(ty)}'`, at);
      const et = e.ty!;
      if (isAggregate(et) || et.kind === "void")
        throw typeError(`cannot cast '${typeName(et)}' to '${typeName(ty)}'`, at);
      if ((ty.kind === "ptr" && isFloat(et)) || (isFloat(ty) && isPointerLike(et)))
        throw typeError(`cannot cast '${typeName(et)}' to '${typeName(ty)}'`, at);
      const c = this.cast(e, ty);
      return c === e ? this.node("cast", at, { lhs: e, ty }) : { ...c, line: at.line, col: at.col };
    }
    return this.unary();
  }

  // unary = ("+" | "-" | "*" | "&" | "!" | "~") cast | ("++" | "--") unary | "sizeof" ... | postfix
  private unary(): Node {
    const t = this.tok;
    if (t.kind === "punct") {
      switch (t.text) {
        case "+": {
          this.pos++;
          const e = this.castExpr();
          if (!isNumeric(e.ty!)) throw typeError(`unary '+' needs a number`, t);
          return this.cast(e, promote(e.ty!));
        }
        case "-": {
          this.pos++;
          const e = this.castExpr();
          if (!isNumeric(e.ty!))
            throw typeError(`unary '-' needs a number, not '${typeName(e.ty!)}'`, t);
          const ty = promote(e.ty!);
          const c = this.cast(e, ty);
          const checked = isInteger(ty) && !ty.unsigned;
          if (c.kind === "num") {
            if (c.fval !== undefined) return this.num(-c.fval, ty, t);
            const v = wrapInt(-c.ival!, ty);
            if (!checked || v === -wrapInt(c.ival!, ty)) return this.num(v, ty, t);
          }
          return this.node("neg", t, { lhs: c, ty, checked });
        }
        case "!": {
          this.pos++;
          const e = this.castExpr();
          this.checkScalar(e, "'!'");
          return this.node("not", t, { lhs: e, ty: T.int });
        }
        case "~": {
          this.pos++;
          const e = this.castExpr();
          if (!isInteger(e.ty!)) throw typeError(`'~' needs an integer`, t);
          const ty = promote(e.ty!);
          const c = this.cast(e, ty);
          if (c.kind === "num") return this.num(wrapInt(~c.ival!, ty), ty, t);
          return this.node("bitnot", t, { lhs: c, ty });
        }
        case "&": {
          this.pos++;
          const e = this.castExpr();
          if (e.kind === "funcref") return { ...e, line: t.line, col: t.col };
          if (e.kind === "var") {
            e.v!.inMemory = true;
            return this.node("addr", t, { lhs: e, ty: pointerTo(e.ty!) });
          }
          if (e.ty!.bitField)
            throw typeError(
              e.kind === "member"
                ? `cannot take the address of bit-field '${e.member!.name}'`
                : "cannot take the address of a bit-field",
              t,
            );
          if (e.kind === "deref" || e.kind === "member" || e.kind === "str")
            return this.node("addr", t, { lhs: e, ty: pointerTo(e.ty!) });
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
      if (e.ty!.bitField) throw typeError("'sizeof' applied to a bit-field", t);
      const count = e.ty!.vlaCount;
      if (count) {
        const n = this.cast(this.node("var", t, { v: count, ty: count.ty }), T.ulong);
        const elem = this.num(e.ty!.base!.size, T.ulong, t);
        return this.node("binary", t, { op: "*", lhs: n, rhs: elem, ty: T.ulong, opTy: T.ulong });
      }
      const size = e.ty!.kind === "func" ? 1 : e.ty!.size;
      return this.num(size, T.ulong, t);
    }
    return this.postfix();
  }

  private deref(e: Node, at: Pos): Node {
    const et = e.ty!;
    if (et.kind === "func" || (et.kind === "ptr" && et.base!.kind === "func")) return e;
    if (!isPointerLike(et))
      throw typeError(`cannot dereference '${typeName(et)}', which is not a pointer`, at);
    if (et.base!.kind === "void") throw typeError("cannot dereference a 'void *'", at);
    return this.node("deref", at, { lhs: e, ty: et.base! });
  }

  private incdec(e: Node, delta: number, prefix: boolean, at: Pos): Node {
    this.checkLvalue(e, at);
    const ty = e.ty!;
    if (!isScalar(ty)) throw typeError(`cannot increment '${typeName(ty)}'`, at);
    const step = ty.kind === "ptr" ? (ty.base!.kind === "void" ? 1 : ty.base!.size) * delta : delta;
    const checked = (ty.kind === "int" || ty.kind === "long") && !ty.unsigned;
    return this.node("incdec", at, { lhs: e, delta: step, prefix, ty, checked });
  }

  // compound-literal = "(" type-name ")" "{" initializer-list "}"
  /** An unnamed object: a local of the enclosing function (initialized each time the
   * expression runs, as C says), or a global at file scope. */
  private compoundLiteral(declared: Type, at: Pos): Node {
    const init = this.initializer(declared);
    const ty = declared.kind === "array" && declared.len! < 0 ? init.ty : declared;
    const name = `__compound${this.localId++}`;
    if (!this.fn) {
      const v = this.newGlobal(name, ty, at);
      this.g.vars.set(name, v);
      this.staticInit(v, init, at);
      return this.node("var", at, { v, ty });
    }
    const v = this.newLocal(name, ty, at);
    v.inMemory = true;
    const ref = this.node("var", at, { v, ty });
    const decl = this.node("decl", at, { v, initializer: init, lhs: ref });
    return this.node("stmtexpr", at, {
      body: [decl, this.node("exprstmt", at, { lhs: this.node("var", at, { v, ty }) })],
      ty,
    });
  }

  // postfix = primary ("[" expr "]" | "(" args ")" | "." ident | "->" ident | "++" | "--")*
  private postfix(): Node {
    return this.postfixOf(this.primary());
  }
  private postfixOf(first: Node): Node {
    let n = first;
    for (;;) {
      const t = this.tok;
      if (this.consume("[")) {
        const idx = this.expr();
        this.expect("]");
        const l = n.ty!;
        if (!isPointerLike(l) && !isPointerLike(idx.ty!))
          throw typeError(
            `subscripted value is not an array or pointer (it is '${typeName(l)}')`,
            t,
          );
        if (!isInteger(isPointerLike(l) ? idx.ty! : l))
          throw typeError(
            `array subscript is not an integer (it is '${typeName(isPointerLike(l) ? idx.ty! : l)}')`,
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

  private member(n: Node, name: Token): Node {
    const st = n.ty!;
    if (!isAggregate(st))
      throw typeError(
        `request for member '${name.text}' in something that is not a struct (it is '${typeName(st)}')`,
        name,
      );
    if (!st.complete) throw typeError(`'${typeName(st)}' is an incomplete type`, name);
    const m = st.members!.find((x) => x.name === name.text);
    if (!m) throw typeError(`'${typeName(st)}' has no member named '${name.text}'`, name);
    return this.node("member", name, { lhs: n, member: m, ty: m.ty });
  }

  private noteRef(name: string, at: Pos): void {
    // Outside any function (a global's initializer), the reference belongs to the entry,
    // which is where a non-constant initializer runs.
    const refs = this.fn ? this.fn.refs : this.topRefs;
    if (!refs.has(name)) refs.set(name, { line: at.line, col: at.col });
  }
  private readonly topRefs = new Map<string, { line: number; col: number }>();

  // call = ident "(" (assign ("," assign)*)? ")"
  private call(fnExpr: Node): Node {
    const at = this.expect("(");
    const args: Node[] = [];
    while (!this.consume(")")) {
      if (args.length > 0) this.expect(",");
      args.push(this.assign());
    }
    let fty: Type | undefined;
    let callee: string | undefined;
    if (fnExpr.kind === "funcref") {
      callee = fnExpr.callee!;
      fty = fnExpr.fnTy;
    } else if (fnExpr.kind === "unresolved") {
      // A name with no declaration: maybe defined further down this block.
      const n = this.node("call", fnExpr, { callee: fnExpr.callee, args, ty: T.int });
      this.pending.push({ node: n, fn: this.fn! });
      this.noteRef(fnExpr.callee!, fnExpr);
      return n;
    } else {
      const t = fnExpr.ty!;
      if (t.kind === "ptr" && t.base!.kind === "func") fty = t.base!;
      else if (t.kind === "func") fty = t;
      else throw typeError(`called object is not a function (it is '${typeName(t)}')`, fnExpr);
    }
    const node = this.node("call", fnExpr, { callee, args: [], fnTy: fty, ty: fty!.ret });
    if (callee === undefined) {
      node.lhs = fnExpr;
      if (this.fn) this.fn.indirect = true;
    }
    this.convertArgs(node, fty!, args, callee ?? "function pointer");
    return node;
  }

  private convertArgs(node: Node, fty: Type, args: Node[], name: string): void {
    const params = fty.params!;
    if (
      args.length < params.length ||
      (args.length > params.length && !fty.variadic && !fty.oldStyle)
    )
      throw typeError(
        `'${name}' takes ${params.length} argument(s) but ${args.length} were given`,
        node,
      );
    node.args = args.map((a, i) => {
      const pt = params[i];
      if (pt) return this.assignConvert(a, pt, a);
      // Default argument promotions for the variadic part.
      let t = this.toRvalueType(a.ty!);
      if (t.kind === "void") throw typeError("void value passed as an argument", a);
      if (isAggregate(t) && this.host.libraryType(name))
        throw typeError(
          `passing '${typeName(t)}' to library function '${name}' is not supported`,
          a,
        );
      if (t.kind === "float") t = T.double;
      else if (isInteger(t)) t = promote(t);
      return this.cast(a, t);
    });
  }

  private resolvePending(): void {
    for (const { node, fn } of this.pending) {
      const f = this.g.funcs.get(node.callee!);
      if (!f) {
        if (this.host.isKnownIntrinsic(node.callee!))
          throw typeError(
            `intrinsic '${node.callee}' is not available here (no model attached)`,
            node,
          );
        throw typeError(`unknown function '${node.callee}'`, node);
      }
      const ret = f.ty.ret!;
      if (!(ret.kind === "int" && !ret.unsigned) && ret.kind !== "void" && ret.kind !== "enum")
        throw typeError(
          `function '${node.callee}' is used before its declaration; declare it first (it returns '${typeName(ret)}')`,
          node,
        );
      node.fnTy = f.ty;
      node.ty = ret.kind === "void" ? T.int : ret;
      const saved = this.fn;
      this.fn = fn;
      this.convertArgs(node, f.ty, node.args!, node.callee!);
      this.fn = saved;
      if (ret.kind === "void") node.ty = T.int;
    }
  }

  // generic-selection = "_Generic" "(" assign ("," (type-name | "default") ":" assign)+ ")"
  private generic(t: Token): Node {
    this.pos++;
    this.expect("(");
    const control = this.assign();
    const cty = this.toRvalueType(control.ty!);
    let chosen: Node | null = null;
    let fallback: Node | null = null;
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
  private stdarg(t: Token): Node {
    this.pos++;
    this.expect("(");
    const ap = this.assign();
    let r: Node;
    if (t.text === "va_start") {
      this.expect(",");
      this.assign();
      const area = this.fn?.varargs;
      if (!area) throw typeError("va_start used in a function without '...'", t);
      this.checkLvalue(ap, t);
      r = this.node("assign", t, {
        lhs: ap,
        rhs: this.cast(this.node("var", t, { v: area, ty: area.ty }), ap.ty!),
        ty: ap.ty,
      });
    } else if (t.text === "va_arg") {
      this.expect(",");
      const ty = this.typeName();
      this.checkLvalue(ap, t);
      if (ap.ty!.kind !== "ptr") throw typeError("va_arg needs a va_list", t);
      // *(ty *)((ap += n) - n), n = 8 per slot (a struct takes its size rounded up to 8)
      const step = 8 * varargSlots(ty);
      const bump = this.node("opassign", t, {
        op: "+",
        lhs: ap,
        rhs: this.num(step, T.int, t),
        ty: ap.ty,
        opTy: T.int,
      });
      const back = this.node("binary", t, {
        op: "-",
        lhs: bump,
        rhs: this.num(step, T.int, t),
        ty: ap.ty,
        opTy: T.int,
      });
      r = this.deref(this.cast(back, pointerTo(ty)), t);
    } else if (t.text === "va_copy") {
      this.expect(",");
      const src = this.assign();
      this.checkLvalue(ap, t);
      r = this.node("assign", t, { lhs: ap, rhs: this.cast(src, ap.ty!), ty: ap.ty });
    } else r = this.node("cast", t, { lhs: ap, ty: T.void });
    this.expect(")");
    return r;
  }

  // primary = "(" expr ")" | ident | str | num
  private primary(): Node {
    const t = this.tok;
    if (this.is("(") && this.peek().text === "{" && this.fn) {
      // statement-expr = "(" compound-stmt ")"
      this.pos++;
      const block = this.compoundStmt();
      this.expect(")");
      const body = block.body!;
      const last = body[body.length - 1];
      const ty = last && last.kind === "exprstmt" ? this.toRvalueType(last.lhs!.ty!) : T.void;
      return this.node("stmtexpr", t, { body, ty });
    }
    if (this.consume("(")) {
      const e = this.expr();
      this.expect(")");
      return e;
    }
    if (t.kind === "ident" && t.text === "_Generic") return this.generic(t);
    if (
      t.kind === "ident" &&
      (t.text === "__func__" || t.text === "__FUNCTION__") &&
      !this.lookup(t.text)
    ) {
      // The enclosing function's name, as a string literal (top-level statements: "main").
      const name = !this.fn || this.fn === this.entry ? "main" : this.fn.name;
      const bytes = [...Buffer.from(name, "utf8"), 0];
      this.pos++;
      const addr = this.host.alloc(bytes.length, 1);
      this.host.write(addr, Uint8Array.from(bytes));
      return this.node("str", t, { bytes, addr, ty: arrayOf(T.char, bytes.length) });
    }
    if (t.kind === "num") {
      this.pos++;
      const ty = {
        int: T.int,
        uint: T.uint,
        long: T.long,
        ulong: T.ulong,
        float: T.float,
        double: T.double,
      }[t.numType!];
      return t.fval !== undefined ? this.num(t.fval, ty, t) : this.num(t.ival!, ty, t);
    }
    if (t.kind === "str") {
      const { bytes, elem } = this.stringLiteral();
      const addr = this.host.alloc(bytes.length, elem.size);
      this.host.write(addr, Uint8Array.from(bytes));
      return this.node("str", t, { bytes, addr, ty: arrayOf(elem, bytes.length / elem.size) });
    }
    if (t.kind === "ident" && /^va_(start|arg|end|copy)$/.test(t.text) && !this.lookup(t.text))
      return this.stdarg(t);
    if (t.kind === "ident") {
      this.pos++;
      const s = this.lookup(t.text);
      if (s) {
        if ("enumConst" in s) return this.num(s.enumConst, T.int, t);
        if ("typedef" in s) throw syntaxError(`unexpected type name '${t.text}'`, t);
        return this.node("var", t, { v: s, ty: s.ty });
      }
      const f = this.g.funcs.get(t.text);
      if (f) {
        this.noteRef(t.text, t);
        return this.node("funcref", t, { callee: t.text, fnTy: f.ty, ty: f.ty });
      }
      const lib = this.host.libraryType(t.text) ?? this.host.intrinsicType(t.text);
      if (lib) {
        this.noteRef(t.text, t);
        return this.node("funcref", t, { callee: t.text, fnTy: lib, ty: lib });
      }
      if (this.is("(")) {
        if (this.host.isKnownIntrinsic(t.text))
          throw typeError(`intrinsic '${t.text}' is not available here (no model attached)`, t);
        return this.node("unresolved", t, { callee: t.text });
      }
      throw typeError(`undeclared identifier '${t.text}'`, t);
    }
    if (t.kind === "eof") throw syntaxError("unexpected end of input, expected an expression", t);
    throw syntaxError(`expected an expression but found '${t.text}'`, t);
  }
}

class NotConstant extends Error {}

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

/** A double converted to an integer as a conversion in C does it on x86-64: NaN and out of
 * range values give the "integer indefinite" (INT64_MIN) rather than throwing. */
function truncToBigInt(v: number): bigint {
  return Number.isFinite(v) ? BigInt(Math.trunc(v)) : -(1n << 63n);
}

/** Truncates an integer to the width and signedness of `ty`. */
export function wrapInt(v: bigint, ty: Type): bigint {
  if (ty.kind === "bool") return v !== 0n ? 1n : 0n;
  const bits = Math.min(ty.size, 8) * 8;
  return ty.unsigned ? BigInt.asUintN(bits, v) : BigInt.asIntN(bits, v);
}

/** Values of a block are reported at int width at least (a char result prints as a number). */
function promoteForValue(t: Type): Type {
  if (t.kind === "char" || t.kind === "short" || t.kind === "enum") return T.int;
  return t;
}

/** main's arguments as C runners pass them: argc 1, argv = { program name, NULL }. */
export function mainArgs(count: number, host: Pick<ParseHost, "argv">): number[] {
  const values = [1, count >= 2 ? (host.argv?.() ?? 0) : 0];
  return values.slice(0, count).concat(new Array(Math.max(0, count - 2)).fill(0));
}

function withParamNames(ty: Type, names: Token[]): Type {
  ty.paramNames = names;
  return ty;
}

export { CompileError };
