// The experiments gallery's table: the seeds' live-inference experiments, each a C hook program
// (bundled from experiments/*.c) sent as the request's `ruffian.hook`, with its category and a
// one-line description. The prompt and the code are editable in the page before a run.
import attention from "./experiments/attention.c";
import contrarian from "./experiments/contrarian.c";
import embeddings from "./experiments/embeddings.c";
import entropyDiary from "./experiments/entropy-diary.c";
import forceSecond from "./experiments/force-second.c";
import hypothesis from "./experiments/hypothesis.c";
import nucleus from "./experiments/nucleus.c";
import pruning from "./experiments/probability-pruning.c";
import rewindMemo from "./experiments/rewind-memo.c";
import selfEvaluation from "./experiments/self-evaluation.c";
import snapshotCompare from "./experiments/snapshot-compare.c";
import snapshotRestore from "./experiments/snapshot-restore.c";
import statusReport from "./experiments/status-report.c";
import temperature from "./experiments/temperature.c";
import suppression from "./experiments/token-suppression.c";
import compression from "./experiments/vocabulary-compression.c";

export interface Experiment {
  id: string;
  title: string;
  category: string;
  summary: string;
  code: string;
}

/** The question every experiment asks unless edited: ruffian-nano answers it with a region. */
export const EXPERIMENT_PROMPT = "What is 4821 times 377?";
export const EXPERIMENT_MAX_TOKENS = 48;

export const EXPERIMENTS: readonly Experiment[] = [
  {
    id: "self-evaluation",
    title: "Self-evaluation",
    category: "Reading its own state",
    summary: "Branches on its own entropy and top-1 probability before each token.",
    code: selfEvaluation,
  },
  {
    id: "status-report",
    title: "Status report",
    category: "Reading its own state",
    summary: "Context length, vocabulary, top prediction, entropy, layers and heads.",
    code: statusReport,
  },
  {
    id: "token-suppression",
    title: "Token suppression",
    category: "Reshaping the distribution",
    summary: "Removes the most likely token, so the second choice is sampled.",
    code: suppression,
  },
  {
    id: "force-second",
    title: "Force the second choice",
    category: "Reshaping the distribution",
    summary: "A hook lifts the runner-up above the favourite for 20 tokens.",
    code: forceSecond,
  },
  {
    id: "contrarian",
    title: "Contrarian (rank 31)",
    category: "Reshaping the distribution",
    summary: "Forces the 31st-ranked token; the model writes around it.",
    code: contrarian,
  },
  {
    id: "vocabulary-compression",
    title: "Vocabulary compression",
    category: "Reshaping the distribution",
    summary: "Suppresses long tokens among the top 20: short words only.",
    code: compression,
  },
  {
    id: "temperature",
    title: "Temperature before and after",
    category: "Reshaping the distribution",
    summary: "The top 3 before and after logit_temperature(2000).",
    code: temperature,
  },
  {
    id: "probability-pruning",
    title: "Probability pruning",
    category: "Intrinsics",
    summary: "logit_mask_below: masks every logit 5.0 below the top one.",
    code: pruning,
  },
  {
    id: "nucleus",
    title: "Nucleus",
    category: "Intrinsics",
    summary: "logit_top_p(9000): keeps 90% of the probability mass.",
    code: nucleus,
  },
  {
    id: "snapshot-compare",
    title: "Snapshot and compare",
    category: "Snapshots",
    summary: "logit_diff measures how far temperature 2.0 moves the distribution.",
    code: snapshotCompare,
  },
  {
    id: "snapshot-restore",
    title: "Snapshot and restore",
    category: "Snapshots",
    summary: "A logit halved by temperature comes back exactly.",
    code: snapshotRestore,
  },
  {
    id: "hypothesis",
    title: "Hypothesis testing",
    category: "Snapshots",
    summary: "Suppress the top token, measure the change, restore.",
    code: hypothesis,
  },
  {
    id: "rewind-memo",
    title: "Rewind with a memo",
    category: "Rewind",
    summary: "Explores 6 tokens, leaves a memo and rewinds; the next timeline reads it.",
    code: rewindMemo,
  },
  {
    id: "attention",
    title: "Attention analysis",
    category: "Internals",
    summary: "attn_score: where the last position looks, for every head of layer 0.",
    code: attention,
  },
  {
    id: "embeddings",
    title: "Cosine similarity and variance",
    category: "Internals",
    summary: "cosine_sim and emb_variance over neighbouring hidden states.",
    code: embeddings,
  },
  {
    id: "entropy-diary",
    title: "Entropy diary",
    category: "Observing",
    summary: "A hook that only watches: entropy and top-1 of every step.",
    code: entropyDiary,
  },
];
