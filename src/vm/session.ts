// VM sessions: each block of C is compiled together with the session's earlier definitions into
// a fresh wasm module over one shared memory, so functions, globals and memory[] persist
// (REPL semantics). Every failure — compile error, trap, limit, host exception — becomes a
// VmFailure; nothing a program does escapes as an exception.
import v8 from "node:v8";
import { GlobalScope } from "../c/ast.js";
import {
  ENTRY_VALUE_ADDR,
  HOST_FRAME_ADDR,
  OVERFLOW_OPS,
  TrapCode,
  fuelWithinDepth,
  generateModule,
  type CompiledModule,
} from "../c/codegen.js";
import { CompileError } from "../c/errors.js";
import { keepShape } from "../c/shapes.js";
import {
  BRIDGE_MODULE_NAME,
  BRIDGE_TABLE,
  bridgeLayout,
  encodeHostBridge,
  type BridgeEntry,
} from "../c/host-bridge.js";
import { C_LIBRARY, HOST_DECLARATIONS } from "../c/library.js";
import { ENTRY_NAME, mainArgs, parse, type ParseHost } from "../c/parse.js";
import { preprocess } from "../c/preprocess.js";
import { tokenize } from "../c/tokenize.js";
import { T, arrayOf, typeName, type Type } from "../c/types.js";
import { OutputBuffer, hostLibrary, type HostState } from "./host.js";
import { IntrinsicRegistry, KNOWN_INTRINSICS, makeIntrinsicContext } from "./intrinsics.js";
import { resolveLimits, type VmLimits, type VmProfileName } from "./limits.js";
import { BytesMap, hashBytes } from "./bytes-map.js";
import { NULL_GUARD, VmMemory } from "./memory.js";
import { noteModuleCompiled } from "./reclaim.js";
import { READ_ONLY_CALLEES, RunLiterals } from "./run-literals.js";
import { onBigStack } from "./stack.js";
import type { VmError, VmErrorKind, VmOutcome, VmStats, VmValue } from "./result.js";
import { Wasm, type WasmGlobal, type WasmInstance } from "./wasm-api.js";

export interface VmOptions {
  profile?: VmProfileName;
  limits?: Partial<VmLimits>;
  intrinsics?: IntrinsicRegistry;
  /** argv[0] of a whole program's main (default "main.c"). */
  programName?: string;
  /** Signed integer overflow wraps, as with gcc -fwrapv, instead of trapping (default false). */
  wrapv?: boolean;
}

/** Ints visible to C code as the global `memory[]`; they survive from block to block. */
export const MEMORY_INTS = 256;

/** The tables of a session's scope that blocks add to. */
const SCOPE_KINDS = ["funcs", "vars", "typedefs", "tags", "enumConsts"] as const;
type ScopeKind = (typeof SCOPE_KINDS)[number];

/** Names whose use reads or changes what one run leaves for the next (besides globals). */
const RUN_STATE_NAMES: ReadonlySet<string> = new Set(["memory", "rand", "srand"]);

/** String literals a session remembers for sharing; past this it starts over, so that a
 * session of never-repeated literals holds a bounded map. */
const SHARED_LITERALS = 1024;

/** Fuel handed out per refill: small enough that the wall clock is checked every few ms. */
const FUEL_CHUNK = 1_000_000;

class VmTrap extends Error {
  constructor(
    readonly kind: VmErrorKind,
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

class ExitSignal extends Error {
  constructor(readonly code: number) {
    super("exit");
  }
}

let libraryScope: GlobalScope | null = null;
let hostTypes: Map<string, Type> | null = null;

/** The C library's declarations and functions, parsed once per process. */
function baseScope(): GlobalScope {
  if (!libraryScope) {
    const noAlloc: ParseHost = {
      alloc: () => {
        throw new Error("library code must not allocate");
      },
      write: () => undefined,
      libraryType: () => undefined,
      intrinsicType: () => undefined,
      isKnownIntrinsic: () => false,
    };
    const decl = parse(preprocess(tokenize(HOST_DECLARATIONS)), new GlobalScope(), noAlloc);
    hostTypes = new Map();
    for (const [name, f] of decl.scope.funcs) hostTypes.set(name, f.ty);
    const lib = parse(preprocess(tokenize(C_LIBRARY)), decl.scope, noAlloc);
    for (const f of lib.defined) f.library = true;
    libraryScope = lib.scope.flattened();
  }
  return libraryScope;
}

function libraryNames(): Set<string> {
  baseScope();
  return new Set([...libraryScope!.funcs.keys()]);
}
let libraryNameCache: Set<string> | null = null;

const now = (): number => performance.now();

export class VmSession {
  readonly limits: VmLimits;
  private readonly mem: VmMemory;
  private scope: GlobalScope;
  private readonly intrinsics: IntrinsicRegistry;
  private readonly slots = new Map<string, number>();
  /** Addresses of the string literals blocks placed, by alignment and content (see literal). */
  private readonly literals = new BytesMap<number>();
  /** Literals that a block's top-level code only passes to printf and the like (see run-literals.ts). */
  private readonly runLiterals: RunLiterals;
  /** Blocks and calls running now: a block parsed inside a run (an intrinsic's) must not
   * overwrite the running block's run literals. */
  private executing = 0;
  private readonly memoryAddr: number;
  private readonly programName: string;
  private readonly wrapv: boolean;
  private argvAddr = 0;
  private readonly host: HostState;
  /** Every intrinsic a module of this session imported: all that its code can reach. */
  private readonly imported = new Set<string>();
  /** Bumped whenever definitions change, so cached call() modules are rebuilt. */
  private version = 0;
  private readonly callCache = new Map<
    string,
    {
      version: number;
      entry: EntryPoint;
      ty: Type;
      compiled: CompiledModule;
      /** No parameter is 64-bit: number arguments need no conversion. */
      numeric: boolean;
    }
  >();
  // per-run metering state
  private granted = 0;
  private charged = 0;
  private deadline = 0;
  private fuel: WasmGlobal | null = null;
  /** The running block's call-depth global: where a recursion stands when it asks for fuel. */
  private depth: WasmGlobal | null = null;
  /** What the host bridge calls while this session runs (built at the first instantiation). */
  private bridgeTarget: BridgeTarget | null = null;

  constructor(options: VmOptions = {}) {
    this.limits = resolveLimits(options.profile, options.limits);
    this.intrinsics = options.intrinsics ?? new IntrinsicRegistry();
    this.programName = options.programName ?? "main.c";
    this.wrapv = options.wrapv ?? false;
    this.mem = new VmMemory(this.limits.memoryBytes, this.limits.stackBytes);
    this.runLiterals = new RunLiterals(this.mem);
    this.scope = baseScope().clone();
    this.memoryAddr = this.mem.allocStatic(MEMORY_INTS * 4);
    this.mem.u8.fill(0, this.memoryAddr, this.memoryAddr + MEMORY_INTS * 4);
    this.scope.vars.set("memory", {
      name: "memory",
      ty: arrayOf(T.int, MEMORY_INTS),
      global: true,
      addr: this.memoryAddr,
      inMemory: true,
      isParam: false,
      id: -1,
    });
    this.host = {
      mem: this.mem,
      out: new OutputBuffer(this.limits.maxOutputBytes),
      rngState: 1,
      charge: (units) => this.charge(units),
    };
  }

  /** Ends the session: its memory goes to the next session of its profile (see
   * VmMemory.release). Nothing may run in it afterwards. */
  dispose(): void {
    this.disposed = true;
    this.mem.release();
  }
  private disposed = false;

  /** Refuses to run in a memory that now belongs to another session. */
  private live(): void {
    if (this.disposed) throw new Error("this VM session was disposed");
  }

  /** The persistent `memory[]` ints (a fresh view each time: growth can move the buffer). */
  get memory(): Int32Array {
    this.live();
    return new Int32Array(this.mem.wasm.buffer, this.memoryAddr, MEMORY_INTS);
  }

  hasFunction(name: string): boolean {
    const f = this.scope.funcs.get(name);
    if (!f || !f.body) return false;
    libraryNameCache ??= libraryNames();
    return !(libraryNameCache.has(name) && baseScope().funcs.get(name) === f);
  }

  /** Compiles and runs one block; definitions in it persist for later blocks. */
  run(source: string): VmOutcome {
    this.live();
    const t0 = now();
    const stats: VmStats = { compileMs: 0, runMs: 0, instructions: 0, memoryBytes: 0 };
    let parsed;
    let instance: WasmInstance;
    let compiled: CompiledModule;
    let root: string | null = null;
    try {
      const tokens = preprocess(tokenize(source));
      parsed = this.parseBlock(tokens);
      if (parsed.entry) {
        parsed.scope.funcs.set(ENTRY_NAME, parsed.entry);
        root = ENTRY_NAME;
      } else if (definesMain(parsed.defined)) root = "main";
      compiled = this.compile(parsed.scope, root ? [root] : []);
      instance = this.instantiate(compiled);
    } catch (e) {
      stats.compileMs = now() - t0;
      if (e instanceof RangeError && /call stack/i.test(e.message))
        return this.failure(
          { kind: "syntax", message: "program is nested too deeply", line: 0, column: 0 },
          "",
          stats,
        );
      return this.failure(toVmError(e, "syntax"), "", stats);
    }
    // Commit: the block compiled, so its definitions and globals become part of the session.
    parsed.scope.funcs.delete(ENTRY_NAME);
    for (const init of parsed.inits) this.mem.writeBytes(init.addr, init.bytes);
    this.scope = parsed.scope.commit();
    if (parsed.defined.length > 0 || parsed.inits.length > 0) this.version++;
    stats.compileMs = now() - t0;
    if (!root) {
      return this.finish(stats, { ok: true, value: { ctype: "void", value: null } });
    }
    const fty = compiled.exports.get(root)!;
    const args =
      root === "main"
        ? mainArgs(fty.params!.length, { argv: () => this.argv() }).map((v, i) =>
            fty.params![i]!.kind === "long" ? BigInt(v) : v,
          )
        : [];
    const outcome = this.execute(
      compiled,
      entryPoint(instance, root),
      root,
      fty,
      args,
      stats,
      true,
    );
    if (outcome.ok && parsed.runsMain && outcome.exitCode === undefined) {
      const v = outcome.value.value;
      const code =
        typeof v === "number" || typeof v === "bigint" ? Number(BigInt.asUintN(8, BigInt(v))) : 0;
      return { ...outcome, exitCode: code };
    }
    return outcome;
  }

  /** Parses a block to run now. Its top-level literals passed straight to printf and the like
   * go to the run literals, unless the block defines a function of such a name itself (then
   * it is parsed again with lasting literals: its calls may reach that function). */
  private parseBlock(tokens: ReturnType<typeof preprocess>): ReturnType<typeof parse> {
    if (this.executing === 0) this.runLiterals.startBlock();
    try {
      const parsed = parse(tokens, this.scope, this.committingContext());
      if (!this.runLiterals.active || !parsed.defined.some((f) => READ_ONLY_CALLEES.has(f.name)))
        return parsed;
      this.runLiterals.active = false;
      return parse(tokens, this.scope, this.committingContext());
    } finally {
      this.runLiterals.active = false;
    }
  }

  /** { argv[0], NULL } for main, written once per session. */
  private argv(): number {
    if (this.argvAddr === 0) {
      const name = Buffer.from(this.programName + "\0", "utf8");
      const str = this.mem.allocStatic(name.length, 1);
      const arr = this.mem.allocStatic(16, 8);
      if (str === 0 || arr === 0) throw new CompileError("limit", "out of memory for argv", 0, 0);
      this.mem.writeBytes(str, name);
      this.mem.dv.setBigUint64(arr, BigInt(str), true);
      this.mem.dv.setBigUint64(arr + 8, 0n, true);
      this.argvAddr = arr;
    }
    return this.argvAddr;
  }

  /**
   * Whether a block would compile against this session's definitions, without running it or
   * keeping anything from it (its globals go to scratch addresses): the first error, or undefined.
   * Lets a caller report a broken program before starting work that depends on it.
   */
  check(source: string): VmError | undefined {
    try {
      this.dryParse(preprocess(tokenize(source)));
      return undefined;
    } catch (e) {
      if (e instanceof RangeError && /call stack/i.test(e.message))
        return { kind: "syntax", message: "program is nested too deeply", line: 0, column: 0 };
      return toVmError(e, "syntax");
    }
  }

  /**
   * Commits a block's definitions without running it, so that it can run in a fresh sandbox
   * elsewhere (a VM worker) and leave this session just as running it here would. That holds
   * when the block names no intrinsic (they read the model), none of the state a run changes
   * (memory[], rand's seed), nothing defined by code that ran here, and declares no global
   * variable; then the worker needs only the earlier adopted blocks' definitions. Returns those
   * blocks (the prelude to adopt there first), or null, keeping nothing, for any other block,
   * one that does not compile, and every block once code run here redefined an adopted name.
   */
  adoptDefinitions(source: string): readonly string[] | null {
    try {
      if (!this.adoptionIntact()) return null;
      for (const t of preprocess(tokenize(source)))
        if (t.kind === "ident" && !this.sameElsewhere(t.text)) return null;
      if (this.dryParse(preprocess(tokenize(source))).inits.length > 0) return null;
      const before = this.scope;
      const parsed = parse(preprocess(tokenize(source)), this.scope, this.committingContext());
      parsed.scope.funcs.delete(ENTRY_NAME);
      const prelude = [...this.adoptedBlocks];
      let changed = false;
      for (const kind of SCOPE_KINDS)
        for (const [name, def] of parsed.scope[kind])
          if (before[kind].get(name) !== def) {
            this.adopted.set(`${kind} ${name}`, def);
            changed = true;
          }
      if (changed) this.adoptedBlocks.push(source);
      this.scope = parsed.scope.commit();
      if (parsed.defined.length > 0) this.version++;
      return prelude;
    } catch {
      return null;
    }
  }

  /** Definitions adopted from blocks run elsewhere ("kind name" → the definition). */
  private readonly adopted = new Map<string, unknown>();
  /** The adopted blocks that defined something, in order. */
  private readonly adoptedBlocks: string[] = [];

  /** False once code run here replaced an adopted definition (a worker would see the old one). */
  private adoptionIntact(): boolean {
    for (const [key, def] of this.adopted) {
      const [kind, name] = key.split(" ") as [ScopeKind, string];
      if (this.scope[kind].get(name) !== def) return false;
    }
    return true;
  }

  /** Whether `name` means the same in a fresh session that adopted the same blocks. */
  private sameElsewhere(name: string): boolean {
    if (KNOWN_INTRINSICS.has(name) || RUN_STATE_NAMES.has(name)) return false;
    const base = baseScope();
    for (const kind of SCOPE_KINDS) {
      const here = this.scope[kind].get(name);
      if (here === undefined || here === base[kind].get(name)) continue;
      if (this.adopted.get(`${kind} ${name}`) !== here) return false;
    }
    return true;
  }

  /** Parses against this session's definitions with globals at scratch addresses; keeps nothing. */
  private dryParse(tokens: ReturnType<typeof preprocess>): ReturnType<typeof parse> {
    return parse(tokens, this.scope, new SessionParseHost(this.hostParts(), false));
  }

  /** Parsing for a block whose globals and string literals stay in this session's memory. */
  private committingContext(): ParseHost {
    return (this.committing ??= new SessionParseHost(this.hostParts(), true));
  }
  private committing: ParseHost | null = null;

  /** What the parse hosts reach of this session: made once, shared by every parse. */
  private hostParts(): SessionParts {
    return (this.parts ??= {
      mem: this.mem,
      literals: this.literals,
      runLiterals: this.runLiterals,
      libraryFunction: (name) => this.scope.funcs.get(name) === baseScope().funcs.get(name),
      intrinsics: this.intrinsics,
      argv: () => this.argv(),
    });
  }
  private parts: SessionParts | null = null;

  /** The intrinsics imported by every module this session instantiated so far. */
  get importedIntrinsics(): ReadonlySet<string> {
    return this.imported;
  }

  /** Whether call(name) would reuse a module built for the current definitions (so whatever
   * the function can reach is in importedIntrinsics already). */
  hasCompiledCall(name: string): boolean {
    return this.callCache.get(name)?.version === this.version;
  }

  /** Calls a function defined by an earlier block (hooks call fn(step) before every token). */
  call(name: string, args: Array<number | bigint>): VmOutcome {
    this.live();
    const t0 = now();
    const stats: VmStats = { compileMs: 0, runMs: 0, instructions: 0, memoryBytes: 0 };
    // A cached module of the current version means the function is still defined: a hook's
    // call per token then skips the lookup (definitions change only with `version`).
    let cached = this.callCache.get(name);
    if (!cached || cached.version !== this.version) {
      if (!this.hasFunction(name))
        return this.failure(
          { kind: "type", message: `unknown function '${name}'`, line: 0, column: 0 },
          "",
          stats,
        );
      try {
        const compiled = this.compile(this.scope, [name]);
        const instance = this.instantiate(compiled);
        const ty = compiled.exports.get(name)!;
        const numeric = ty.params!.every((p) => p.kind !== "long");
        const entry = entryPoint(instance, name);
        cached = { version: this.version, entry, ty, compiled, numeric };
        this.callCache.set(name, cached);
      } catch (e) {
        stats.compileMs = now() - t0;
        return this.failure(toVmError(e, "type"), "", stats);
      }
    }
    stats.compileMs = now() - t0;
    const params = cached.ty.params!;
    if (args.length !== params.length)
      return this.failure(
        {
          kind: "type",
          message: `'${name}' takes ${params.length} argument(s) but ${args.length} were given`,
          line: 0,
          column: 0,
        },
        "",
        stats,
      );
    // Plain numbers for int/double parameters go in as they are (no converted copy per call).
    const converted =
      cached.numeric && args.every((a) => typeof a === "number")
        ? args
        : args.map((a, i) => toWasmArg(a, params[i]!));
    return this.execute(cached.compiled, cached.entry, name, cached.ty, converted, stats);
  }

  private compile(scope: GlobalScope, roots: string[]): CompiledModule {
    const intrinsicTypes = new Map<string, Type>();
    for (const n of this.intrinsics.names()) intrinsicTypes.set(n, this.intrinsics.get(n)!.ty);
    return generateModule({
      funcs: scope.funcs,
      roots,
      hostFunctions: hostTypes!,
      intrinsics: intrinsicTypes,
      slotOf: (name) => {
        let s = this.slots.get(name);
        if (s === undefined) {
          s = this.slots.size + 1; // slot 0 stays empty: a NULL function pointer traps
          this.slots.set(name, s);
        }
        return s;
      },
      slotted: () => this.slots,
      memoryPages: this.mem.pages,
      stackLow: this.mem.stackLow,
      maxCallDepth: this.limits.maxCallDepth,
      wrapv: this.wrapv,
      nullGuard: NULL_GUARD,
      lazyHints: (lazyHints ??= setUpCompileFlags()),
    });
  }

  private instantiate(compiled: CompiledModule): WasmInstance {
    const { module, fresh } = compileModule(compiled.bytes, compiled.longRunning);
    this.bridgeTarget ??= {
      mem: this.mem,
      core: {
        trap: (code: number, line: number, col: number) => {
          throw trapFor(code, line, col, this.limits);
        },
        refuel: () => this.refuel(),
      },
      host: hostLibrary(this.host),
    };
    for (const name of compiled.hostCalls)
      if (!this.bridgeTarget.host[name])
        throw new CompileError("type", `library function '${name}' is not available`, 0, 0);
    const intrinsicNs: Record<string, unknown> = {};
    const ctx =
      compiled.imports.length === 0
        ? null
        : makeIntrinsicContext(this.mem, {
            hasFunction: (n) => this.hasFunction(n),
            print: (text) => this.host.out.write(Buffer.from(text, "utf8")),
          });
    for (const imp of compiled.imports) {
      this.imported.add(imp.name);
      const def = this.intrinsics.get(imp.name)!;
      const isVoid = def.ty.ret!.kind === "void";
      intrinsicNs[imp.name] = (...args: number[]) => {
        const r = def.impl(ctx!, ...args);
        if (isVoid || r === undefined) return isVoid ? undefined : 0;
        return typeof r === "bigint" ? Number(r) : r;
      };
    }
    const imports = {
      env: { memory: this.mem.wasm, [BRIDGE_TABLE.name]: hostBridge() },
      intrinsic: intrinsicNs,
    };
    return fresh ? instantiateFirst(module, imports) : new Wasm.Instance(module, imports);
  }

  /** Bills host-side work (bytes a printf formats) against the budget and the clock. */
  private charge(units: number): void {
    this.charged += units;
    const used = this.granted - this.fuel!.value + this.charged;
    if (used >= this.limits.maxInstructions)
      throw new VmTrap("limit", limitMessage("instructions", this.limits), 0, 0);
    if (units > 1000 && now() > this.deadline)
      throw new VmTrap("limit", limitMessage("time", this.limits), 0, 0);
  }

  private refuel(): void {
    const fuel = this.fuel!;
    const used = this.granted - fuel.value + this.charged;
    if (used >= this.limits.maxInstructions)
      throw new VmTrap("limit", limitMessage("instructions", this.limits), 0, 0);
    if (now() > this.deadline) throw new VmTrap("limit", limitMessage("time", this.limits), 0, 0);
    // A recursion tests its depth only when its fuel runs out (see fuelWithinDepth).
    const chunk = fuelWithinDepth(
      Math.min(FUEL_CHUNK, this.limits.maxInstructions - used),
      this.depth!.value,
      this.limits.maxCallDepth,
    );
    fuel.value = chunk;
    this.granted = used - this.charged + chunk;
  }

  private execute(
    compiled: CompiledModule,
    entry: EntryPoint,
    name: string,
    fty: Type,
    args: Array<number | bigint>,
    stats: VmStats,
    /** Whether to read the process's CPU time around the run (a block's, not a hook call's:
     * the two getrusage calls cost ~1.8 µs, more than a hook call itself). */
    measureCpu = false,
  ): VmOutcome {
    const sp = entry.sp;
    this.depth = entry.depth;
    this.fuel = entry.fuel;
    sp.value = this.mem.stackTop;
    this.depth.value = 0;
    const chunk = fuelWithinDepth(
      Math.min(FUEL_CHUNK, this.limits.maxInstructions),
      0,
      this.limits.maxCallDepth,
    );
    this.fuel.value = chunk;
    this.granted = chunk;
    this.charged = 0;
    this.host.out = new OutputBuffer(this.limits.maxOutputBytes);
    const t0 = now();
    const cpu0 = measureCpu ? process.cpuUsage() : undefined;
    this.deadline = t0 + this.limits.wallClockMs;
    const fn = entry.fn;
    let result: number | bigint | undefined;
    let error: VmError | null = null;
    let exitCode: number | null = null;
    const outer = activeTarget;
    activeTarget = this.bridgeTarget;
    this.executing++;
    try {
      result = fn(...args);
      if (name === ENTRY_NAME) result = this.entryValue(fty.ret!);
    } catch (e) {
      if (e instanceof ExitSignal) exitCode = e.code;
      else {
        const coded = codedTrap(e, compiled, this.limits);
        error = coded ?? toVmError(e, "runtime");
        if (error.message.startsWith(HOST_STACK_MESSAGE))
          error = { ...error, message: hostStackMessage(this.limits) };
        if (error.line === 0 && (error.kind === "runtime" || error.kind === "limit")) {
          const at = trapPosition(e, compiled);
          if (at) error = { ...error, ...at };
        }
      }
    } finally {
      activeTarget = outer;
      this.executing--;
    }
    stats.runMs = now() - t0;
    if (cpu0) {
      const cpu = process.cpuUsage(cpu0);
      stats.runCpuMs = (cpu.user + cpu.system) / 1000;
    }
    stats.instructions = Math.max(0, this.granted - this.fuel.value + this.charged);
    if (error) return this.failure(error, this.host.out.text(), stats);
    if (exitCode !== null) {
      const done = this.finish(stats, { ok: true, value: { ctype: "int", value: exitCode } });
      return { ...done, exitCode: exitCode & 0xff } as VmOutcome;
    }
    return this.finish(stats, { ok: true, value: this.toValue(result, fty.ret!) });
  }

  /** The value a block's entry left in memory (its wasm function returns nothing: see
   * ENTRY_VALUE_ADDR), read as the wasm function would have returned it. */
  private entryValue(ty: Type): number | bigint | undefined {
    const dv = this.mem.dv;
    switch (ty.kind) {
      case "void":
        return undefined;
      case "long":
        return dv.getBigInt64(ENTRY_VALUE_ADDR, true);
      case "double":
        return dv.getFloat64(ENTRY_VALUE_ADDR, true);
      case "float":
        return dv.getFloat32(ENTRY_VALUE_ADDR, true);
      case "bool":
        return dv.getUint8(ENTRY_VALUE_ADDR);
      default:
        return dv.getInt32(ENTRY_VALUE_ADDR, true);
    }
  }

  private toValue(raw: number | bigint | undefined, ty: Type): VmValue {
    if (ty.kind === "void" || raw === undefined) return { ctype: "void", value: null };
    const ctype = typeName(ty);
    if (typeof raw === "bigint")
      return { ctype, value: ty.unsigned ? BigInt.asUintN(64, raw) : raw };
    if (ty.kind === "ptr" && ty.base!.kind === "char") {
      if (raw === 0) return { ctype, value: null };
      try {
        return { ctype, value: this.mem.readCString(raw >>> 0, 1 << 16) };
      } catch {
        return { ctype, value: raw >>> 0 };
      }
    }
    if (ty.kind === "bool") return { ctype, value: raw !== 0 };
    if (ty.unsigned) return { ctype, value: raw >>> 0 };
    return { ctype, value: raw };
  }

  private finish(stats: VmStats, r: { ok: true; value: VmValue }): VmOutcome {
    stats.memoryBytes = this.mem.bytesInUse;
    const stdout = this.host.out.text();
    const text = stdout.length > 0 ? stdout : valueText(r.value);
    return {
      ok: true,
      text,
      stdout,
      value: r.value,
      outputTruncated: this.host.out.truncated,
      stats,
    };
  }

  private failure(error: VmError, stdout: string, stats: VmStats): VmOutcome {
    stats.memoryBytes = this.mem.bytesInUse;
    return { ok: false, error, stdout, stats };
  }
}

/** What a block's parse reaches of its session. */
interface SessionParts {
  mem: VmMemory;
  /** Addresses of the string literals blocks placed, by alignment and content. */
  literals: BytesMap<number>;
  runLiterals: RunLiterals;
  /** Whether `name` is still the C library's function in the session (no block redefined it). */
  libraryFunction(name: string): boolean;
  intrinsics: IntrinsicRegistry;
  argv(): number;
}

/** How the parser reaches a session: committing (globals and string literals go to the
 * session's memory for good) or dry (scratch addresses, nothing written). One class for every
 * session and both modes, so the parser's calls through its host see one hidden class (object
 * literals spread per session had made those calls megamorphic). */
class SessionParseHost implements ParseHost {
  private scratch = 16;

  constructor(
    private readonly parts: SessionParts,
    private readonly committing: boolean,
  ) {}

  alloc(size: number, align: number): number {
    if (!this.committing) {
      this.scratch = Math.ceil(this.scratch / align) * align;
      const p = this.scratch;
      this.scratch += Math.max(size, 1);
      return p;
    }
    const p = this.parts.mem.allocStatic(size, align);
    if (p === 0) throw new CompileError("limit", "out of memory for globals", 0, 0);
    return p;
  }

  write(addr: number, bytes: Uint8Array): void {
    if (this.committing) this.parts.mem.writeBytes(addr, bytes);
  }

  literal(bytes: Uint8Array, align: number): number {
    if (!this.committing) return this.alloc(bytes.length, align);
    // An identical literal of an earlier block is reused: in a long session most literals are
    // the same few format strings, and each copy would stay for good.
    const { literals } = this.parts;
    const known = literals.get(bytes, align);
    if (known !== undefined) return known;
    const addr = this.alloc(bytes.length, align);
    this.write(addr, bytes);
    if (literals.size >= SHARED_LITERALS) literals.clear();
    literals.set(bytes, addr, align);
    return addr;
  }

  argumentLiteral(bytes: Uint8Array, _align: number, callee: string): number | undefined {
    const { runLiterals } = this.parts;
    if (!this.committing || !runLiterals.active || !READ_ONLY_CALLEES.has(callee)) return undefined;
    if (!this.parts.libraryFunction(callee)) return undefined;
    const addr = runLiterals.place(bytes);
    return addr === 0 ? undefined : addr;
  }

  libraryType(name: string): Type | undefined {
    return hostTypes!.get(name);
  }

  intrinsicType(name: string): Type | undefined {
    return this.parts.intrinsics.get(name)?.ty;
  }

  isKnownIntrinsic(name: string): boolean {
    return KNOWN_INTRINSICS.has(name);
  }

  argv(): number {
    return this.parts.argv();
  }
}

keepShape(new SessionParseHost({ argv: () => 0 } as unknown as SessionParts, false));

/** The host functions the bridge forwards to: those of the session that is running. */
interface BridgeTarget {
  mem: VmMemory;
  core: Record<"trap" | "refuel", (...a: number[]) => void>;
  host: Record<string, (...a: number[]) => number | void>;
}

/** The running session's target (sessions run one at a time; a nested run restores it). */
let activeTarget: BridgeTarget | null = null;
let bridgeTable: unknown = null;
let bridgeModule: object | null = null;
let bridgeImports: Record<string, Record<string, unknown>> | null = null;
let bridgeUses = 0;
/** Blocks instantiated against one bridge table before a fresh table replaces it. V8 keeps
 * every instance that imports a table reachable from that table (so a table.set can reach their
 * dispatch tables), and with each instance its memory: one table for the whole process kept
 * every block ever run alive, about 2.5 KB each, and with 128 blocks per table up to 128 dead
 * runC sandboxes (1.2 MB of wasm memory each) waited for the table to be replaced. A fresh
 * table costs one small instantiation, a few µs per block at this rate. */
const BRIDGE_TABLE_USES = 16;

/** Lets the blocks instantiated so far be collected: the next block gets a fresh bridge table.
 * For measuring retained memory without the last few blocks the current table still holds. */
export function releaseHostBridge(): void {
  bridgeTable = null;
}

/** The host bridge's table: each slot forwards to the running session's function of that name
 * (see src/c/host-bridge.ts for why blocks call through it). The module is compiled once per
 * process; its instance (and so its table) is renewed every BRIDGE_TABLE_USES blocks. */
function hostBridge(): unknown {
  if (bridgeTable && bridgeUses < BRIDGE_TABLE_USES) {
    bridgeUses++;
    return bridgeTable;
  }
  if (!bridgeModule || !bridgeImports) {
    baseScope();
    const layout = bridgeLayout(hostTypes!);
    const imports: Record<string, Record<string, unknown>> = { core: {}, host: {} };
    for (const { kind, name, frame } of layout.entries) {
      imports[kind]![name] = frame
        ? framedImport(name, frame)
        : kind === "core"
          ? (...a: number[]) => activeTarget!.core[name as keyof BridgeTarget["core"]](...a)
          : (...a: number[]) => activeTarget!.host[name]!(...a);
    }
    bridgeModule = new Wasm.Module(encodeHostBridge(layout));
    bridgeImports = imports;
  }
  const instance = new Wasm.Instance(bridgeModule, bridgeImports);
  bridgeTable = instance.exports["host"];
  bridgeUses = 1;
  return bridgeTable;
}

/** The import behind a host function's bridge slot: it takes the arguments from the running
 * session's frame at HOST_FRAME_ADDR and leaves the result there, converted as a wasm import's
 * would be (see host-bridge.ts, BridgeEntry.frame). */
function framedImport(name: string, frame: NonNullable<BridgeEntry["frame"]>): () => void {
  const slot = (k: number): number => HOST_FRAME_ADDR + 8 * k;
  const arg = (dv: DataView, k: number): number =>
    frame.params[k] === "f64" ? dv.getFloat64(slot(k), true) : dv.getInt32(slot(k), true);
  const arity = frame.params.length;
  const result = frame.results[0];
  return () => {
    const target = activeTarget!;
    const dv = target.mem.dv;
    const f = target.host[name]!;
    // Fixed arities: an arguments array per call would be garbage on every printf.
    const r =
      arity === 0
        ? f()
        : arity === 1
          ? f(arg(dv, 0))
          : arity === 2
            ? f(arg(dv, 0), arg(dv, 1))
            : arity === 3
              ? f(arg(dv, 0), arg(dv, 1), arg(dv, 2))
              : f(arg(dv, 0), arg(dv, 1), arg(dv, 2), arg(dv, 3));
    if (result === "f64") target.mem.dv.setFloat64(slot(0), Number(r), true);
    else if (result) target.mem.dv.setInt32(slot(0), Number(r) | 0, true);
  };
}

/** What a run of one exported function needs from its instance, looked up once (`exports`
 * is an API getter, and a hook's function runs at every token). */
interface EntryPoint {
  fn: (...args: Array<number | bigint>) => number | bigint | undefined;
  sp: WasmGlobal;
  depth: WasmGlobal;
  fuel: WasmGlobal;
}

function entryPoint(instance: WasmInstance, name: string): EntryPoint {
  const ex = instance.exports;
  return {
    fn: ex[name] as EntryPoint["fn"],
    sp: ex["sp"] as WasmGlobal,
    depth: ex["depth"] as WasmGlobal,
    fuel: ex["fuel"] as WasmGlobal,
  };
}

/** Compiles a module. A block predicted to run long (a big loop nest, see LoopNest in
 * src/c/metering.ts) gets V8's optimizing tier straight away, because V8 never moves a running
 * baseline frame to optimized code and a program's hot loop usually runs inside one call of
 * main. Everything else gets the baseline tier (Liftoff), about ten times faster to compile;
 * V8 still tiers up its functions that are called often (fib(30) runs optimized). */
function compileModule(bytes: Uint8Array, optimize: boolean): { module: object; fresh: boolean } {
  // Identical bytes reuse the compiled module; instances are still fresh, and memory is bound
  // at instantiation.
  const hash = hashBytes(bytes);
  const hit = moduleCache.get(bytes, 0, hash);
  if (hit) return { module: hit, fresh: false };
  const module = optimize ? compileOptimized(bytes) : new Wasm.Module(bytes);
  noteModuleCompiled();
  moduleCache.set(bytes, module, 0, hash);
  if (moduleCache.size > MODULE_CACHE_SIZE) moduleCache.deleteOldest();
  return { module, fresh: true };
}

/** Instantiates a module for the first time. When a lazily compiled module is first
 * instantiated, V8 (Node 20's, 11.3) posts four delayed worker tasks that report lazy compilation
 * statistics 5, 20, 60 and 120 s later, together about 1 KB of native memory held until the
 * last one runs: at a never-seen block every millisecond or two, tens of MB, and malloc's
 * fragmentation kept much of it resident afterwards. V8 posts them only when
 * --wasm-lazy-compilation is set at that moment. With compilation hints (setUpCompileFlags)
 * it is never set; otherwise it is cleared around this call only (functions still compile
 * lazily: that was decided when the module was compiled), about 20 µs per never-seen block,
 * where compiling every function up front instead cost about 2 ms. */
function instantiateFirst(
  module: object,
  imports: Record<string, Record<string, unknown>>,
): WasmInstance {
  if (lazyHints) return new Wasm.Instance(module, imports);
  let toggled = false;
  try {
    v8.setFlagsFromString("--no-wasm-lazy-compilation");
    toggled = true;
  } catch {
    /* flags frozen: the reports are posted, and each waits out its delay */
  }
  try {
    return new Wasm.Instance(module, imports);
  } finally {
    if (toggled) v8.setFlagsFromString("--wasm-lazy-compilation");
  }
}

/** Whether blocks ask for lazy compilation with a compilation-hints section; set up once, at
 * the first compile (see setUpCompileFlags). */
let lazyHints: boolean | null = null;

/** Sets V8's process-wide wasm flags once (toggling a flag costs 5-15 µs each time).
 * - --wasm-lazy-validation: V8 validates a function's body when it first compiles it (at its
 *   first call, as Liftoff compiles lazily) instead of every body up front: about 40% of
 *   WebAssembly.Module's time for a short block, and functions a block never calls are never
 *   validated. Bodies are still validated before they run, so an invalid module still fails,
 *   at its first call.
 * - Lazy compilation per module instead of per process: --experimental-wasm-compilation-hints
 *   lets a block's compilation-hints section mark its functions lazy (codegen's lazyHints)
 *   while --wasm-lazy-compilation stays off, so instantiating needs no flag change (see
 *   instantiateFirst): a never-seen 30-line block's Instance took 20 instead of 37 µs (hand-made
 *   loop of 4,000 modules), WebAssembly.Module the same 55 µs (it stays lazy: eager took 253).
 *   Modules without hints (a block predicted to run long, the host bridge) compile eagerly.
 * - --no-wasm-native-module-cache-enabled: V8's own cache of compiled modules hashes every
 *   module's bytes and keeps an entry per live module, to share the code of identical modules;
 *   compileModule's cache already serves identical blocks, so for a never-seen block that was
 *   pure cost: WebAssembly.Module of the 30-line block took 40-42 instead of 43-47 µs
 *   (alternating processes, 10,000 distinct modules each, load 8).
 * Returns whether the hints are in use; where flags cannot be set, V8's defaults hold (lazy
 * compilation, eager validation) and instantiateFirst toggles. */
function setUpCompileFlags(): boolean {
  try {
    v8.setFlagsFromString("--wasm-lazy-validation");
    v8.setFlagsFromString("--experimental-wasm-compilation-hints");
    v8.setFlagsFromString("--no-wasm-lazy-compilation");
    v8.setFlagsFromString("--no-wasm-native-module-cache-enabled");
    return true;
  } catch {
    /* flags frozen: V8 validates eagerly, which is only slower */
    return false;
  }
}

const MODULE_CACHE_SIZE = 64;
const moduleCache = new BytesMap<object>();

function compileOptimized(bytes: Uint8Array): object {
  let toggled = false;
  try {
    // Lazy compilation would compile each function at its first call, after the flags are
    // restored, i.e. with Liftoff: a deep recursion would then run in Liftoff's larger frames.
    v8.setFlagsFromString("--no-liftoff");
    if (!lazyHints) v8.setFlagsFromString("--no-wasm-lazy-compilation");
    // TurboFan then inlines small direct calls (a recursive function into itself, once): about
    // half of fib(30)'s time was call overhead.
    v8.setFlagsFromString("--wasm-inlining");
    toggled = true;
  } catch {
    /* flags frozen: fall back to V8's default tiering */
  }
  try {
    return new Wasm.Module(bytes);
  } finally {
    if (toggled) {
      v8.setFlagsFromString("--liftoff");
      // --no-liftoff also turned dynamic tiering off (a V8 flag implication) and --liftoff does
      // not turn it back on: every later block's functions would then be tiered up to TurboFan
      // on V8's worker threads as soon as they compiled.
      v8.setFlagsFromString("--wasm-dynamic-tiering");
      if (!lazyHints) v8.setFlagsFromString("--wasm-lazy-compilation");
      v8.setFlagsFromString("--no-wasm-inlining");
    }
  }
}

function toWasmArg(a: number | bigint, t: Type): number | bigint {
  if (t.kind === "long") return typeof a === "bigint" ? a : BigInt(Math.trunc(a));
  return typeof a === "bigint" ? Number(a) : a;
}

/** The text a value contributes when nothing was printed: C-like spellings of numbers. */
export function valueText(v: VmValue): string {
  const x = v.value;
  if (x === null) return "";
  if (typeof x === "boolean") return x ? "1" : "0";
  if (typeof x === "string") return x;
  if (typeof x === "bigint") return x.toString();
  if (v.ctype === "float" || v.ctype === "double") {
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (v.ctype === "float") {
      for (let p = 1; p <= 9; p++) {
        const s = Number(x.toPrecision(p));
        if (Math.fround(s) === x) return String(s);
      }
    }
    return String(x);
  }
  return String(x);
}

/** UBSan's wording, with the hint a model or a user needs to fix the program. */
function overflowMessage(k: number): string {
  const op = OVERFLOW_OPS[k >> 1]!;
  const is64 = (k & 1) === 1;
  const what = op === "unary -" ? "negation" : `'${op}'`;
  return is64
    ? `signed integer overflow: the result of ${what} does not fit in long (64 bits; use unsigned long to wrap, or [CALC: …] for exact integers)`
    : `signed integer overflow: the result of ${what} does not fit in int (int is 32 bits: use long)`;
}

/** How the error for a native stack overflow (as opposed to maxCallDepth) begins. */
export const HOST_STACK_MESSAGE = "stack overflow (the host's native stack ran out";

/** The depth reached is not known here: a recursion keeps it in registers (see meteredSig). */
function hostStackMessage(limits: VmLimits): string {
  const advice = onBigStack()
    ? "frames this large need a loop or an explicit stack"
    : "runC and ruffian exec rerun such a program on a big stack; in a session, use a loop or an explicit stack";
  return `${HOST_STACK_MESSAGE} before the call depth reached maxCallDepth ${limits.maxCallDepth}; ${advice})`;
}

/** A limit error names the limit, its value and how to raise it. */
export function limitMessage(
  which: "instructions" | "time" | "depth" | "stack",
  limits: VmLimits,
): string {
  switch (which) {
    case "instructions":
      return `instruction limit exceeded (${limits.maxInstructions} instructions; raise maxInstructions or use a larger profile, e.g. --profile large)`;
    case "time":
      return `time limit exceeded (${limits.wallClockMs} ms; raise wallClockMs or use a larger profile, e.g. --profile large)`;
    case "depth":
      return `stack overflow (call depth limit ${limits.maxCallDepth}; raise maxCallDepth or use a larger profile)`;
    case "stack":
      return `stack overflow (shadow stack of ${limits.stackBytes} bytes exhausted; raise stackBytes or use a larger profile)`;
  }
}

function trapFor(code: number, line: number, col: number, limits: VmLimits): Error {
  switch (code) {
    case TrapCode.divisionByZero:
      return new VmTrap("runtime", "division by zero", line, col);
    case TrapCode.stackOverflow:
      return new VmTrap("limit", limitMessage("stack", limits), line, col);
    case TrapCode.callDepth:
      return new VmTrap("limit", limitMessage("depth", limits), line, col);
    case TrapCode.assertion:
      return new VmTrap("runtime", "assertion failed", line, col);
    case TrapCode.exit:
      return new ExitSignal(line);
    case TrapCode.nullPointer:
      return new VmTrap(
        "runtime",
        `null pointer dereference (address below ${NULL_GUARD})`,
        line,
        col,
      );
    default:
      if (code >= TrapCode.overflow && code < TrapCode.overflow + OVERFLOW_OPS.length * 2)
        return new VmTrap("runtime", overflowMessage(code - TrapCode.overflow), line, col);
      return new VmTrap("runtime", `trap ${code}`, line, col);
  }
}

/** The wasm functions and code offsets on a trap's or host exception's stack, innermost first. */
function* trapSites(
  e: unknown,
  compiled: CompiledModule,
): Generator<{ fn: CompiledModule["positions"][number]; offset: number }> {
  const stack = e instanceof Error ? (e.stack ?? "") : "";
  for (const line of stack.split("\n")) {
    // Frames of the host bridge module lie between the block's frames: skip them.
    if (line.includes(BRIDGE_MODULE_NAME)) continue;
    const m = /wasm-function\[(\d+)\]:0x([0-9a-f]+)/.exec(line);
    if (!m) continue;
    const fn = compiled.positions[Number(m[1]) - compiled.imports.length];
    if (!fn) return;
    yield { fn, offset: parseInt(m[2]!, 16) - fn.codeStart };
  }
}

/** The innermost wasm frame a trap or host exception came from. */
function trapSite(
  e: unknown,
  compiled: CompiledModule,
): { fn: CompiledModule["positions"][number]; offset: number } | null {
  for (const site of trapSites(e, compiled)) return site;
  return null;
}

/** An `unreachable` the code generator placed for a C error (see FuncBuilder.trapHere). */
function codedTrap(e: unknown, compiled: CompiledModule, limits: VmLimits): VmError | null {
  if (!(e instanceof Error) || !/unreachable/.test(e.message)) return null;
  const site = trapSite(e, compiled);
  if (!site) return null;
  const traps = site.fn.traps;
  for (let k = 0; k < traps.length; k += 2) {
    if (traps[k] !== site.offset) continue;
    const at = trapPosition(e, compiled) ?? { line: 0, column: 0 };
    const trap = trapFor(traps[k + 1]!, at.line, at.column, limits);
    return trap instanceof VmTrap ? toVmError(trap, "runtime") : null;
  }
  return null;
}

/** Finds the source position of the wasm instruction a trap or host exception came from. A
 * native stack overflow strikes in a function's prologue, before its first statement: then the
 * call that entered it (the next frame out) is the position. */
function trapPosition(
  e: unknown,
  compiled: CompiledModule,
): { line: number; column: number } | null {
  for (const { fn, offset } of trapSites(e, compiled)) {
    let best: { line: number; column: number } | null = null;
    for (let k = 0; k < fn.entries.length; k += 3) {
      if (fn.entries[k]! > offset) break;
      best = { line: fn.entries[k + 1]!, column: fn.entries[k + 2]! };
    }
    if (best) return best;
  }
  return null;
}

function definesMain(defined: readonly { name: string }[]): boolean {
  for (const f of defined) if (f.name === "main") return true;
  return false;
}

/** Maps anything thrown while compiling or running to a VmError. */
function toVmError(e: unknown, fallback: VmErrorKind): VmError {
  if (e instanceof CompileError)
    return { kind: e.kind, message: e.message, line: e.line, column: e.column };
  if (e instanceof VmTrap)
    return { kind: e.kind, message: e.message, line: e.line, column: e.column };
  if (e instanceof RangeError && /call stack/i.test(e.message))
    return { kind: "limit", message: `${HOST_STACK_MESSAGE})`, line: 0, column: 0 };
  const msg = e instanceof Error ? e.message : String(e);
  if (/out of bounds/.test(msg) && !/table/.test(msg))
    return { kind: "runtime", message: "memory access out of bounds", line: 0, column: 0 };
  if (/unrepresentable|integer overflow/.test(msg))
    return { kind: "runtime", message: "integer overflow in division", line: 0, column: 0 };
  if (/function signature mismatch|null function|table index/.test(msg))
    return {
      kind: "runtime",
      message: "call through an invalid function pointer",
      line: 0,
      column: 0,
    };
  if (e instanceof RangeError && /Array buffer allocation|Out of memory/i.test(msg))
    return { kind: "limit", message: "out of memory", line: 0, column: 0 };
  // Anything else was thrown by host code the program called (an intrinsic refusing its
  // arguments, say): its message names the problem, and execute() adds the call's position.
  return {
    kind: fallback === "syntax" ? "runtime" : fallback,
    message: msg,
    line: 0,
    column: 0,
  };
}

/** Runs one block in a fresh session on the calling thread (runC in run-c.ts adds the retry on a
 * big stack). */
export function runCOnThisThread(
  source: string,
  options?: VmOptions,
  prelude: readonly string[] = [],
): VmOutcome {
  let session: VmSession;
  try {
    session = new VmSession(options);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      error: { kind: "limit", message, line: 0, column: 0 },
      stdout: "",
      stats: { compileMs: 0, runMs: 0, instructions: 0, memoryBytes: 0 },
    };
  }
  // Blocks another session adopted before handing this one over (see adoptDefinitions).
  for (const block of prelude) session.adoptDefinitions(block);
  return session.run(source);
}
