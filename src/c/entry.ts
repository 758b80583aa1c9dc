// Entry synthesis: a block's top-level statements (and the initializers of globals that are not
// constant) become one synthetic function, the entry, whose return value is the block's value
// (a trailing expression's, or the first `return`'s type); a block that defines main gets an
// entry that calls main with the arguments a C runner passes.
import type { Expr, Func, Stmt } from "./ast.js";
import { Scope, blockNode, callNode, exprStmtNode, returnNode } from "./ast.js";
import { syntaxError, typeError, type Pos } from "./errors.js";
import type { ParseHost, Parser } from "./parse.js";
import { T, funcType, isAggregate, typeName, type Type } from "./types.js";

export const ENTRY_NAME = "__entry";

/** What the parser collects for the entry while it reads a block. */
export class EntryState {
  func: Func | null = null;
  stmts: Stmt[] = [];
  /** The entry's return type, inferred from its first `return`. */
  ret: Type | null = null;
  /** The block has top-level statements (then a main it defines does not run by itself). */
  hasStatements = false;
  /** Locals of the entry that live across top-level statements (variable-length arrays). */
  readonly scope = new Scope();
}

/** `return e;` at top level: the first one decides the block's value type. */
export function entryReturn(p: Parser, e: Expr | null, at: Pos): Stmt {
  if (!e) {
    if (p.entry.ret && p.entry.ret.kind !== "void") throw typeError("return without a value", at);
    p.entry.ret = T.void;
    return returnNode(at);
  }
  if (!p.entry.ret) {
    let t = p.toRvalueType(e.ty);
    if (isAggregate(t)) throw typeError(`cannot return '${typeName(t)}' as the block's value`, e);
    if (t.kind !== "void") t = promoteForValue(t);
    p.entry.ret = t;
  }
  if (p.entry.ret.kind === "void") return returnNode(at, p.cast(e, T.void));
  return returnNode(at, p.assignConvert(e, p.entry.ret, e));
}

/** The entry function, created on first need. */
export function ensureEntry(p: Parser, at: Pos): Func {
  if (!p.entry.func) {
    p.entry.func = {
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
  return p.entry.func;
}

// top-level-stmt = expr (the last thing in the block: its value) | stmt
export function topLevelStatement(p: Parser): void {
  p.entry.hasStatements = true;
  const entry = ensureEntry(p, p.tok);
  const saved = p.fn;
  p.fn = entry;
  p.scopes.push(p.entry.scope);
  p.enter();
  // A bare expression at the very end is the block's value: `847*293`.
  const start = p.pos;
  const isLabel = p.tok.kind === "ident" && p.peek().text === ":";
  if (!isStatementKeyword(p) && !p.is("{") && !isLabel) {
    const e = p.expr();
    if (p.tok.kind === "eof") {
      p.entry.stmts.push(p.makeReturn(e, e));
      p.leave();
      p.scopes.pop();
      p.fn = saved;
      return;
    }
    p.pos = start;
  }
  const s = p.stmt();
  p.leave();
  p.scopes.pop();
  p.fn = saved;
  // Locals declared in nested scopes of the entry are plain locals of the entry function.
  p.entry.stmts.push(s);
}

/** A keyword that starts a statement (so the statement is not read as an expression). */
function isStatementKeyword(p: Parser): boolean {
  return (
    p.tok.kind === "keyword" &&
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
    ].includes(p.tok.text)
  );
}

/** Completes the entry once the whole block is read: a whole program's entry calls main;
 * otherwise a trailing expression statement becomes the block's value. */
export function finishEntry(p: Parser): void {
  const entry = p.entry.func!;
  const stmts = p.entry.stmts;
  p.fn = entry;
  // Only initializers of globals ran here: a program with main() still runs main after them.
  const main = p.g.funcs.get("main");
  if (!p.entry.hasStatements && main?.body && p.defined.includes(main)) {
    const call = callNode(main, "main", undefined, main.ty, [], main.ty.ret!);
    call.args = mainArgs(main.ty.params!.length, p.host).map((v, i) =>
      p.cast(p.num(v, T.int, main), main.ty.params![i]!),
    );
    p.noteRef("main", main);
    stmts.push(main.ty.ret!.kind === "void" ? exprStmtNode(main, call) : p.makeReturn(call, main));
  }
  // With no `return`, the value of a trailing expression statement is the block's value.
  if (!p.entry.ret) {
    const last = stmts[stmts.length - 1];
    if (
      last &&
      last.kind === "exprstmt" &&
      last.lhs.ty.kind !== "void" &&
      !isAggregate(last.lhs.ty)
    ) {
      stmts[stmts.length - 1] = p.makeReturn(last.lhs, last);
    }
  }
  for (const g of entry.gotos ?? [])
    if (!entry.labels?.has(g.text)) throw syntaxError(`label '${g.text}' used but not defined`, g);
  entry.ty = funcType(p.entry.ret ?? T.void, []);
  entry.body = blockNode(entry, stmts);
  p.fn = null;
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
