// Compiles read forms into evaluator nodes: resolves special forms (desugaring the derived ones
// into core ones), gives every variable a lexical address or a global cell, and reports malformed
// special forms as positioned syntax errors before anything runs.
import { LispError } from "./errors.js";
import {
  AndNode,
  AppNode,
  ConstNode,
  DefineGlobalNode,
  GlobalCell,
  GlobalNode,
  IfNode,
  LambdaNode,
  LetNode,
  LetrecNode,
  LocalNode,
  OrNode,
  SeqNode,
  SetGlobalNode,
  SetLocalNode,
  type Node,
} from "./nodes.js";
import type { Syn, SynAtom, SynList } from "./syntax.js";
import { Pair, NIL, Sym, sym, UNSPECIFIED, type Value, type Builtin } from "./values.js";

/** Procedures the desugared forms call directly, immune to user redefinition of the names. */
export interface CorePrimitives {
  cons: Builtin;
  append: Builtin;
  memv: Builtin;
}

const SPECIAL_FORMS = new Set([
  "quote",
  "quasiquote",
  "unquote",
  "unquote-splicing",
  "if",
  "define",
  "set!",
  "lambda",
  "let",
  "let*",
  "letrec",
  "letrec*",
  "cond",
  "case",
  "and",
  "or",
  "when",
  "unless",
  "begin",
  "do",
]);

/** One runtime frame's worth of names: parameters or let variables plus internal defines. */
class Scope {
  constructor(
    readonly names: Sym[],
    readonly parent: Scope | null,
  ) {}
}

type Pos = { line: number; column: number };

function syntaxError(message: string, at: Pos): LispError {
  return new LispError("syntax", message, at.line, at.column);
}

function atom(value: Value, at: Pos): SynAtom {
  return { kind: "atom", value, line: at.line, column: at.column };
}

function list(items: Syn[], at: Pos): SynList {
  return { kind: "list", items, dotted: null, line: at.line, column: at.column };
}

function symbolOf(s: Syn | undefined): Sym | null {
  return s !== undefined && s.kind === "atom" && s.value instanceof Sym ? s.value : null;
}

/** Turns quoted source into the runtime data it denotes. */
export function synToValue(s: Syn): Value {
  if (s.kind === "atom") return s.value;
  let tail: Value = s.dotted === null ? NIL : synToValue(s.dotted);
  for (let i = s.items.length - 1; i >= 0; i--) tail = new Pair(synToValue(s.items[i]), tail);
  return tail;
}

export class Compiler {
  constructor(
    private readonly globals: Map<Sym, GlobalCell>,
    private readonly core: CorePrimitives,
  ) {}

  /** Compiles one top-level form; defines at this level create or update globals. */
  compileTop(form: Syn): Node {
    return this.compile(form, null);
  }

  private cell(name: Sym): GlobalCell {
    let found = this.globals.get(name);
    if (found === undefined) {
      found = new GlobalCell(name);
      this.globals.set(name, found);
    }
    return found;
  }

  private lookup(name: Sym, scope: Scope | null): { depth: number; index: number } | null {
    let depth = 0;
    for (let s = scope; s !== null; s = s.parent, depth++) {
      const index = s.names.indexOf(name);
      if (index >= 0) return { depth, index };
    }
    return null;
  }

  private specialName(form: SynList, scope: Scope | null): string | null {
    const head = symbolOf(form.items[0]);
    if (head === null || !SPECIAL_FORMS.has(head.name)) return null;
    return this.lookup(head, scope) === null ? head.name : null;
  }

  private compile(form: Syn, scope: Scope | null): Node {
    if (form.kind === "atom") {
      const name = form.value;
      if (!(name instanceof Sym)) return new ConstNode(form.value, form.line, form.column);
      const local = this.lookup(name, scope);
      if (local !== null) {
        return new LocalNode(local.depth, local.index, name.name, form.line, form.column);
      }
      if (SPECIAL_FORMS.has(name.name)) {
        throw syntaxError(`'${name.name}' is a special form, not a variable`, form);
      }
      return new GlobalNode(this.cell(name), form.line, form.column);
    }
    if (form.items.length === 0) throw syntaxError("missing procedure in '()'", form);
    if (form.dotted !== null) throw syntaxError("a procedure call cannot be a dotted list", form);
    const special = this.specialName(form, scope);
    if (special !== null) return this.compileSpecial(special, form, scope);
    const fn = this.compile(form.items[0], scope);
    const args = form.items.slice(1).map((a) => this.compile(a, scope));
    return new AppNode(fn, args, form.line, form.column);
  }

  private compileSpecial(name: string, form: SynList, scope: Scope | null): Node {
    const items = form.items;
    switch (name) {
      case "quote":
        if (items.length !== 2) throw syntaxError("bad quote syntax, expected (quote datum)", form);
        return new ConstNode(synToValue(items[1]), form.line, form.column);
      case "quasiquote":
        if (items.length !== 2) {
          throw syntaxError("bad quasiquote syntax, expected (quasiquote template)", form);
        }
        return this.compile(this.quasi(items[1]), scope);
      case "unquote":
      case "unquote-splicing":
        throw syntaxError(`'${name}' outside of a quasiquote`, form);
      case "if": {
        if (items.length !== 3 && items.length !== 4) {
          throw syntaxError("bad if syntax, expected (if test then [else])", form);
        }
        const otherwise =
          items.length === 4
            ? this.compile(items[3], scope)
            : new ConstNode(UNSPECIFIED, form.line, form.column);
        return new IfNode(
          this.compile(items[1], scope),
          this.compile(items[2], scope),
          otherwise,
          form.line,
          form.column,
        );
      }
      case "define":
        return this.compileDefine(form, scope);
      case "set!": {
        const target = symbolOf(items[1]);
        if (items.length !== 3 || target === null) {
          throw syntaxError("bad set! syntax, expected (set! name value)", form);
        }
        const value = this.compile(items[2], scope);
        const local = this.lookup(target, scope);
        if (local !== null) {
          return new SetLocalNode(
            local.depth,
            local.index,
            value,
            false,
            target,
            form.line,
            form.column,
          );
        }
        return new SetGlobalNode(this.cell(target), value, form.line, form.column);
      }
      case "lambda":
        if (items.length < 3) {
          throw syntaxError("bad lambda syntax, expected (lambda (params...) body...)", form);
        }
        return this.compileLambda(items[1], items.slice(2), scope, "lambda", form);
      case "let":
        return this.compileLet(form, scope);
      case "let*":
        return this.compileLetStar(form, scope);
      case "letrec":
      case "letrec*":
        return this.compileLetrec(name, form, scope);
      case "cond":
        return this.compile(this.desugarCond(form), scope);
      case "case":
        return this.compile(this.desugarCase(form), scope);
      case "and":
      case "or": {
        const parts = items.slice(1).map((p) => this.compile(p, scope));
        if (parts.length === 0) return new ConstNode(name === "and", form.line, form.column);
        if (parts.length === 1) return parts[0];
        return name === "and"
          ? new AndNode(parts, form.line, form.column)
          : new OrNode(parts, form.line, form.column);
      }
      case "when":
      case "unless": {
        if (items.length < 3) {
          throw syntaxError(`bad ${name} syntax, expected (${name} test body...)`, form);
        }
        const body = list([atom(sym("begin"), form), ...items.slice(2)], form);
        const skip = atom(UNSPECIFIED, form);
        const branches = name === "when" ? [body, skip] : [skip, body];
        return this.compile(list([atom(sym("if"), form), items[1], ...branches], form), scope);
      }
      case "begin": {
        if (items.length === 1) return new ConstNode(UNSPECIFIED, form.line, form.column);
        const parts = items.slice(1).map((p) => this.compile(p, scope));
        return parts.length === 1 ? parts[0] : new SeqNode(parts, form.line, form.column);
      }
      case "do":
        return this.compile(this.desugarDo(form), scope);
    }
    throw syntaxError(`unknown special form '${name}'`, form);
  }

  private compileDefine(form: SynList, scope: Scope | null): Node {
    const items = form.items;
    const usage =
      "bad define syntax, expected (define name value) or (define (name params...) body...)";
    let name: Sym | null;
    let value: Node;
    const target = items[1];
    if (target?.kind === "list") {
      name = symbolOf(target.items[0]);
      if (name === null || items.length < 3) throw syntaxError(usage, form);
      const params: SynList = {
        kind: "list",
        items: target.items.slice(1),
        dotted: target.dotted,
        line: target.line,
        column: target.column,
      };
      const paramSyn = params.items.length === 0 && params.dotted !== null ? params.dotted : params;
      value = this.compileLambda(paramSyn, items.slice(2), scope, name.name, form);
    } else {
      name = symbolOf(target);
      if (name === null || items.length !== 3) throw syntaxError(usage, form);
      value = this.compile(items[2], scope);
      if (value instanceof LambdaNode && value.name === "lambda") value.name = name.name;
    }
    if (SPECIAL_FORMS.has(name.name)) {
      throw syntaxError(`cannot define '${name.name}': it is a special form`, target);
    }
    if (scope === null) return new DefineGlobalNode(this.cell(name), value, form.line, form.column);
    const index = scope.names.indexOf(name);
    if (index < 0) {
      throw syntaxError("define is only allowed at the top level or directly in a body", form);
    }
    return new SetLocalNode(0, index, value, true, name, form.line, form.column);
  }

  /** Parameter list: (a b), (a . rest) or a bare symbol collecting every argument. */
  private compileLambda(
    params: Syn,
    body: Syn[],
    scope: Scope | null,
    name: string,
    at: Pos,
  ): LambdaNode {
    const names: Sym[] = [];
    const addParam = (p: Syn): void => {
      const s = symbolOf(p);
      if (s === null) throw syntaxError("a parameter must be a symbol", p);
      if (names.includes(s)) throw syntaxError(`duplicate parameter '${s.name}'`, p);
      names.push(s);
    };
    let rest = false;
    if (params.kind === "atom") {
      addParam(params);
      rest = true;
    } else {
      for (const p of params.items) addParam(p);
      if (params.dotted !== null) {
        addParam(params.dotted);
        rest = true;
      }
    }
    const nparams = rest ? names.length - 1 : names.length;
    const inner = new Scope(names, scope);
    const bodyNode = this.compileBody(body, inner, at);
    return new LambdaNode(nparams, rest, inner.names.length, bodyNode, name, at.line, at.column);
  }

  /** A body: internal defines become extra slots of the frame, then the forms run in order. */
  private compileBody(forms: Syn[], scope: Scope, at: Pos): Node {
    if (forms.length === 0) throw syntaxError("empty body", at);
    this.collectDefines(forms, scope);
    const parts = forms.map((f) => this.compile(f, scope));
    return parts.length === 1 ? parts[0] : new SeqNode(parts, at.line, at.column);
  }

  private collectDefines(forms: Syn[], scope: Scope): void {
    for (const f of forms) {
      if (f.kind !== "list") continue;
      const special = this.specialName(f, scope);
      if (special === "begin") this.collectDefines(f.items.slice(1), scope);
      if (special !== "define") continue;
      const target = f.items[1];
      const name = target?.kind === "list" ? symbolOf(target.items[0]) : symbolOf(target);
      if (name !== null && !scope.names.includes(name)) scope.names.push(name);
    }
  }

  private bindings(form: SynList, what: string): { names: Sym[]; inits: Syn[] } {
    const spec = form.items[1];
    const usage = `bad ${what} syntax, expected (${what} ((name value) ...) body...)`;
    if (spec === undefined || spec.kind !== "list" || spec.dotted !== null) {
      throw syntaxError(usage, form);
    }
    const names: Sym[] = [];
    const inits: Syn[] = [];
    for (const b of spec.items) {
      const name = b.kind === "list" ? symbolOf(b.items[0]) : null;
      if (b.kind !== "list" || name === null || b.items.length !== 2 || b.dotted !== null) {
        throw syntaxError(`bad ${what} binding, expected (name value)`, b);
      }
      if (names.includes(name) && what !== "let*") {
        throw syntaxError(`duplicate variable '${name.name}' in ${what}`, b);
      }
      names.push(name);
      inits.push(b.items[1]);
    }
    if (form.items.length < 3) throw syntaxError(usage, form);
    return { names, inits };
  }

  private compileLet(form: SynList, scope: Scope | null): Node {
    const loopName = symbolOf(form.items[1]);
    if (loopName !== null) return this.compileNamedLet(loopName, form, scope);
    const { names, inits } = this.bindings(form, "let");
    const initNodes = inits.map((i) => this.compile(i, scope));
    const inner = new Scope(names, scope);
    const body = this.compileBody(form.items.slice(2), inner, form);
    return new LetNode(initNodes, inner.names.length, body, form.line, form.column);
  }

  /** (let loop ((v init) ...) body...) is ((letrec ((loop (lambda (v ...) body...))) loop) init ...). */
  private compileNamedLet(loopName: Sym, form: SynList, scope: Scope | null): Node {
    const shifted: SynList = { ...form, items: [form.items[0], ...form.items.slice(2)] };
    const { names, inits } = this.bindings(shifted, "let");
    const initNodes = inits.map((i) => this.compile(i, scope));
    const loopScope = new Scope([loopName], scope);
    const params = list(
      names.map((n) => atom(n, form)),
      form,
    );
    const lambda = this.compileLambda(params, form.items.slice(3), loopScope, loopName.name, form);
    const loopRef = new LocalNode(0, 0, loopName.name, form.line, form.column);
    const letrec = new LetrecNode([lambda], 1, loopRef, form.line, form.column);
    return new AppNode(letrec, initNodes, form.line, form.column);
  }

  private compileLetStar(form: SynList, scope: Scope | null): Node {
    const { names } = this.bindings(form, "let*");
    if (names.length <= 1) return this.compileLet(form, scope);
    const [first, ...rest] = (form.items[1] as SynList).items;
    const innerLet = list(
      [atom(sym("let*"), form), list(rest, form.items[1]), ...form.items.slice(2)],
      form,
    );
    return this.compile(
      list([atom(sym("let"), form), list([first], form.items[1]), innerLet], form),
      scope,
    );
  }

  private compileLetrec(what: string, form: SynList, scope: Scope | null): Node {
    const { names, inits } = this.bindings(form, what);
    const inner = new Scope(names, scope);
    const initNodes = inits.map((i, k) => {
      const node = this.compile(i, inner);
      if (node instanceof LambdaNode && node.name === "lambda") node.name = names[k].name;
      return node;
    });
    const body = this.compileBody(form.items.slice(2), inner, form);
    return new LetrecNode(initNodes, inner.names.length, body, form.line, form.column);
  }

  /** cond → nested if; (test) → or; (test => f) → a let binding the test's value. */
  private desugarCond(form: SynList): Syn {
    const clauses = form.items.slice(1);
    let result: Syn = atom(UNSPECIFIED, form);
    for (let k = clauses.length - 1; k >= 0; k--) {
      const clause = clauses[k];
      if (clause.kind !== "list" || clause.items.length === 0 || clause.dotted !== null) {
        throw syntaxError("bad cond clause, expected (test body...)", clause);
      }
      const [test, ...body] = clause.items;
      if (symbolOf(test)?.name === "else") {
        if (k !== clauses.length - 1)
          throw syntaxError("'else' must be the last cond clause", clause);
        if (body.length === 0) throw syntaxError("empty else clause", clause);
        result = list([atom(sym("begin"), clause), ...body], clause);
      } else if (body.length === 0) {
        result = list([atom(sym("or"), clause), test, result], clause);
      } else if (symbolOf(body[0])?.name === "=>") {
        if (body.length !== 2)
          throw syntaxError("bad cond clause, expected (test => procedure)", clause);
        const temp = atom(new Sym("cond-value"), clause);
        result = list(
          [
            atom(sym("let"), clause),
            list([list([temp, test], clause)], clause),
            list([atom(sym("if"), clause), temp, list([body[1], temp], clause), result], clause),
          ],
          clause,
        );
      } else {
        result = list(
          [
            atom(sym("if"), clause),
            test,
            list([atom(sym("begin"), clause), ...body], clause),
            result,
          ],
          clause,
        );
      }
    }
    return result;
  }

  /** case → a let binding the key, then cond with memv tests against the quoted data. */
  private desugarCase(form: SynList): Syn {
    if (form.items.length < 2)
      throw syntaxError("bad case syntax, expected (case key clause...)", form);
    const key = atom(new Sym("case-key"), form);
    const condClauses: Syn[] = [];
    for (const clause of form.items.slice(2)) {
      if (clause.kind !== "list" || clause.items.length < 2 || clause.dotted !== null) {
        throw syntaxError("bad case clause, expected ((datum...) body...)", clause);
      }
      const [data, ...body] = clause.items;
      if (symbolOf(data)?.name === "else") {
        condClauses.push(clause);
        continue;
      }
      if (data.kind !== "list")
        throw syntaxError("bad case clause, expected ((datum...) body...)", clause);
      const quoted = list([atom(sym("quote"), data), data], data);
      const test = list([atom(this.core.memv, data), key, quoted], data);
      condClauses.push(list([test, ...body], clause));
    }
    return list(
      [
        atom(sym("let"), form),
        list([list([key, form.items[1]], form)], form),
        list([atom(sym("cond"), form), ...condClauses], form),
      ],
      form,
    );
  }

  /** (do ((var init step)...) (test result...) body...) → a named-let loop. */
  private desugarDo(form: SynList): Syn {
    const usage = "bad do syntax, expected (do ((var init [step])...) (test result...) body...)";
    const specs = form.items[1];
    const exit = form.items[2];
    if (specs?.kind !== "list" || exit?.kind !== "list" || exit.items.length === 0) {
      throw syntaxError(usage, form);
    }
    const loop = atom(new Sym("do-loop"), form);
    const bindings: Syn[] = [];
    const steps: Syn[] = [];
    for (const spec of specs.items) {
      if (spec.kind !== "list" || spec.items.length < 2 || spec.items.length > 3) {
        throw syntaxError("bad do variable, expected (var init [step])", spec);
      }
      bindings.push(list([spec.items[0], spec.items[1]], spec));
      steps.push(spec.items[2] ?? spec.items[0]);
    }
    const [test, ...results] = exit.items;
    const done = list([atom(sym("begin"), exit), atom(UNSPECIFIED, exit), ...results], exit);
    const again = list(
      [atom(sym("begin"), form), ...form.items.slice(3), list([loop, ...steps], form)],
      form,
    );
    const body = list([atom(sym("if"), form), test, done, again], form);
    return list([atom(sym("let"), form), loop, list(bindings, specs), body], form);
  }

  /** `template: lists are rebuilt with cons/append, unquoted parts are evaluated. */
  private quasi(t: Syn): Syn {
    const quote = (s: Syn): Syn => list([atom(sym("quote"), s), s], s);
    if (t.kind === "atom") return quote(t);
    const head = symbolOf(t.items[0])?.name;
    if (head === "unquote") {
      if (t.items.length !== 2) throw syntaxError("bad unquote syntax, expected ,expr", t);
      return t.items[1];
    }
    let result: Syn = t.dotted === null ? quote(list([], t)) : this.quasi(t.dotted);
    for (let k = t.items.length - 1; k >= 0; k--) {
      const item = t.items[k];
      if (item.kind === "list" && symbolOf(item.items[0])?.name === "unquote-splicing") {
        if (item.items.length !== 2) throw syntaxError("bad unquote-splicing syntax", item);
        result = list([atom(this.core.append, item), item.items[1], result], item);
      } else {
        result = list([atom(this.core.cons, item), this.quasi(item), result], item);
      }
    }
    return result;
  }
}
