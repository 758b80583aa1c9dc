// The Lisp's public surface: sessions whose definitions persist across [LISP: …] regions, a
// one-shot runner, and the limits they enforce.
//
// Result conventions (VmOutcome from src/outcome.ts): `text` is what display/write printed if
// anything, else the printed last value (exact integers in full, strings unquoted, lists in
// write form); a region that only defines yields the defined name (value.ctype "symbol");
// set!/display and friends yield "" (ctype "void"). Errors: syntax (reader and malformed
// special forms), type (wrong argument type or count, calling a non-procedure), runtime
// (unbound variable, division by zero, index out of range, (error …)), limit (steps, depth,
// memory, integer size, wall clock; no position).
export { LispSession, runLisp, type LispOptions } from "./session.js";
export { DEFAULT_LISP_LIMITS, resolveLispLimits, type LispLimits } from "./limits.js";
