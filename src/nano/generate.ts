// Command-line front of the nano data generator: writes dialogues as JSON lines, plus the
// vocabulary table the training script tokenizes with.
//   node dist/src/nano/generate.js --split train --styles vm,direct --count 40000 --seed 1 --dir DIR
// writes DIR/<split>-<style>.jsonl for each style, and DIR/vocab.json; --questions FILE also writes
// the bare question set that `ruffian eval` reads.
import { parseArgs } from "node:util";
import { createWriteStream, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ANSWER_STYLES, generateExamples, type AnswerStyle, type Split } from "./dataset.js";
import { NANO_VOCAB, SPACE_PIECE, BOS_ID, EOS_ID } from "./vocab.js";

export function vocabTable(): object {
  return {
    tokens: NANO_VOCAB.map((e) => e.text),
    types: NANO_VOCAB.map((e) => e.type),
    bos: BOS_ID,
    eos: EOS_ID,
    space: SPACE_PIECE,
    byte_base: 3,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      split: { type: "string", default: "train" },
      styles: { type: "string", default: "vm" },
      count: { type: "string", default: "1000" },
      seed: { type: "string", default: "1" },
      dir: { type: "string" },
      phrasings: { type: "string", default: "held-out" },
      questions: { type: "string" },
      answers: { type: "string", default: "varied" },
    },
  });
  const split = values.split as Split;
  const styles = values.styles.split(",") as AnswerStyle[];
  if (split !== "train" && split !== "eval") throw new Error(`--split must be train or eval`);
  if (styles.some((s) => !ANSWER_STYLES.includes(s)))
    throw new Error(`--styles: any of ${ANSWER_STYLES.join(", ")}`);
  if (!values.dir) throw new Error("--dir DIR is required");
  if (values.answers !== "varied" && values.answers !== "plain")
    throw new Error("--answers: varied or plain");
  const answers = values.answers;
  mkdirSync(values.dir, { recursive: true });
  writeFileSync(join(values.dir, "vocab.json"), JSON.stringify(vocabTable()));
  const tag = (values.phrasings === "seen" ? "-seen" : "") + (answers === "plain" ? "-plain" : "");
  const outs = styles.map((s) => createWriteStream(join(values.dir!, `${split}${tag}-${s}.jsonl`)));
  // The evaluation's question set: what `ruffian eval` reads (eval/*.jsonl in the repo).
  const questions = values.questions ? createWriteStream(values.questions) : undefined;
  let n = 0;
  const phrasings = values.phrasings === "seen" ? "seen" : "held-out";
  const count = Number(values.count);
  for (const examples of generateExamples(
    count,
    Number(values.seed),
    split,
    styles,
    phrasings,
    answers,
  )) {
    for (let i = 0; i < outs.length; i++) {
      const out = outs[i]!;
      if (!out.write(JSON.stringify(examples[i]) + "\n")) {
        await new Promise<void>((r) => out.once("drain", () => r()));
      }
    }
    const first = examples[0]!;
    questions?.write(
      JSON.stringify({
        task: first.task,
        question: first.question,
        result: first.result,
        code: first.code,
      }) + "\n",
    );
    n++;
  }
  await Promise.all(
    [...outs, ...(questions ? [questions] : [])].map(
      (o) => new Promise<void>((r) => o.end(() => r())),
    ),
  );
  console.error(`wrote ${n} ${split} examples (${styles.join(", ")}) to ${values.dir}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: Error) => {
    console.error(`generate: ${err.message}`);
    process.exit(1);
  });
}
