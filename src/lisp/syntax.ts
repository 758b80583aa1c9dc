// The reader's output: source forms with the line:column of every element, so compile-time
// and run-time errors can point at the exact form. Quote turns them into runtime values.
import type { Value } from "./values.js";

export interface SynAtom {
  kind: "atom";
  /** bigint, number, string, boolean or Sym. */
  value: Value;
  line: number;
  column: number;
}

export interface SynList {
  kind: "list";
  items: Syn[];
  /** The part after " . " in a dotted list, else null. */
  dotted: Syn | null;
  line: number;
  column: number;
}

export type Syn = SynAtom | SynList;
