// Hidden classes that must outlive a block. V8 checks an object's hidden class in optimized code
// but holds that class only weakly, and a class instance's hidden class is reachable only from
// its live instances. Every compiler object (Parser, Preprocessor, FunctionGenerator,
// FuncBuilder, TypeTable) lives for one block, so each full collection (they come every few
// dozen blocks while wasm modules and memories die) found none alive, dropped the classes,
// and threw away the optimized code of every method that checked them: the next blocks ran the
// compiler unoptimized while V8 optimized it again, and compiled 2–4× slower. One instance of
// each, made when its module loads and kept for the life of the process, keeps the classes.

const kept: object[] = [];

/** Keeps `instance` (and so its hidden class) alive for the rest of the process. */
export function keepShape<T extends object>(instance: T): T {
  kept.push(instance);
  return instance;
}
