// The compiled form of Lisp code that the evaluator runs: special forms are resolved, variables
// are lexical addresses (depth, slot) or global cells, so evaluation does no name lookups.
import type { Sym, Value } from "./values.js";

/** Node kinds; the evaluator dispatches on these numbers. */
export const Op = {
  Const: 0,
  Local: 1,
  Global: 2,
  SetLocal: 3,
  SetGlobal: 4,
  DefineGlobal: 5,
  If: 6,
  Lambda: 7,
  Seq: 8,
  App: 9,
  And: 10,
  Or: 11,
  Let: 12,
  Letrec: 13,
} as const;

/** Marks a global that has never been defined. */
export const UNBOUND = Symbol("unbound") as unknown as Value;

/** A session-wide global variable; compiled code refers to the cell, not the name. */
export class GlobalCell {
  value: Value = UNBOUND;
  constructor(readonly name: Sym) {}
}

abstract class BaseNode {
  constructor(
    readonly line: number,
    readonly column: number,
  ) {}
}

export class ConstNode extends BaseNode {
  readonly op = Op.Const;
  constructor(
    readonly value: Value,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class LocalNode extends BaseNode {
  readonly op = Op.Local;
  constructor(
    readonly depth: number,
    readonly index: number,
    readonly name: string,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class GlobalNode extends BaseNode {
  readonly op = Op.Global;
  constructor(
    readonly cell: GlobalCell,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

/** set! of a local, or an internal define (which also yields the name). */
export class SetLocalNode extends BaseNode {
  readonly op = Op.SetLocal;
  constructor(
    readonly depth: number,
    readonly index: number,
    readonly value: Node,
    readonly isDefine: boolean,
    readonly name: Sym,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class SetGlobalNode extends BaseNode {
  readonly op = Op.SetGlobal;
  constructor(
    readonly cell: GlobalCell,
    readonly value: Node,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class DefineGlobalNode extends BaseNode {
  readonly op = Op.DefineGlobal;
  constructor(
    readonly cell: GlobalCell,
    readonly value: Node,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class IfNode extends BaseNode {
  readonly op = Op.If;
  constructor(
    readonly test: Node,
    readonly then: Node,
    readonly otherwise: Node,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class LambdaNode extends BaseNode {
  readonly op = Op.Lambda;
  constructor(
    /** Required parameters. */
    readonly nparams: number,
    /** True when a rest parameter collects the remaining arguments into slot `nparams`. */
    readonly rest: boolean,
    /** Parameters + rest + internal defines. */
    readonly frameSize: number,
    readonly body: Node,
    public name: string,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class SeqNode extends BaseNode {
  readonly op = Op.Seq;
  constructor(
    readonly nodes: Node[],
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class AppNode extends BaseNode {
  readonly op = Op.App;
  constructor(
    readonly fn: Node,
    readonly args: Node[],
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class AndNode extends BaseNode {
  readonly op = Op.And;
  constructor(
    readonly nodes: Node[],
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export class OrNode extends BaseNode {
  readonly op = Op.Or;
  constructor(
    readonly nodes: Node[],
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

/** let: inits run in the outer environment, then the body runs in a fresh frame. */
export class LetNode extends BaseNode {
  readonly op = Op.Let;
  constructor(
    readonly inits: Node[],
    readonly frameSize: number,
    readonly body: Node,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

/** letrec: the frame exists first, inits run inside it and fill slots 0..n-1 in order. */
export class LetrecNode extends BaseNode {
  readonly op = Op.Letrec;
  constructor(
    readonly inits: Node[],
    readonly frameSize: number,
    readonly body: Node,
    line: number,
    column: number,
  ) {
    super(line, column);
  }
}

export type Node =
  | ConstNode
  | LocalNode
  | GlobalNode
  | SetLocalNode
  | SetGlobalNode
  | DefineGlobalNode
  | IfNode
  | LambdaNode
  | SeqNode
  | AppNode
  | AndNode
  | OrNode
  | LetNode
  | LetrecNode;
