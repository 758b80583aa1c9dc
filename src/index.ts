// Ruffian's public API: `import { loadModel, runC } from "ruffian"`. Load a model and generate
// with the VM in the decode loop; run C, Lisp and CALC in the sandbox; read the live model
// through the glass-box engine. Everything else in the package is internal. See docs/api.md.

export { loadModel, Model } from "./api/model.js";
export type { LoadModelOptions, GenerateOptions, VmSessionHandle } from "./api/model.js";
export { HookError } from "./api/hook-error.js";

import { nanoModelPath, storiesModelPath } from "./paths.js";
/** Paths of the models shipped in the package: `stories` (stories260K, a plain story model) and
 * `nano` (ruffian-nano, answers arithmetic by writing [C: …] regions). */
export const shippedModels: { readonly stories: string; readonly nano: string } = {
  stories: storiesModelPath,
  nano: nanoModelPath,
};

export type {
  DecodeEvent,
  TokenEvent,
  RegionStartEvent,
  RegionEndEvent,
  VmEvent,
  InjectionEvent,
  HookLogEvent,
  HookErrorEvent,
  RewindEvent,
  DoneEvent,
  DoneReason,
  GenerationStats,
} from "./decode/events.js";
export type { SamplerOptions } from "./decode/sampler.js";
export type { Region, RegionLanguage } from "./decode/scanner.js";
export type { PromptStyle } from "./decode/prompt.js";

export { runC, VmSession, PROFILES, VmWorkerRunner, sharedRunner } from "./vm/index.js";
export type {
  VmJob,
  WorkerRunnerOptions,
  VmOptions,
  VmOutcome,
  VmSuccess,
  VmFailure,
  VmError,
  VmErrorKind,
  VmStats,
  VmValue,
  VmLimits,
  VmProfileName,
} from "./vm/index.js";
export { runLisp, LispSession } from "./lisp/index.js";
export type { LispOptions } from "./lisp/index.js";
export { runCalc } from "./calc/calc.js";

export type {
  Engine,
  Capabilities,
  ModelInfo,
  ObserveOptions,
  SpecialTokens,
  Token,
} from "./engine/types.js";
export type { LlamaEngine } from "./engine/open.js";
export { EngineError } from "./engine/errors.js";
export { ModelSourceError } from "./engine/model-source.js";
