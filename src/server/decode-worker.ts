// The decode worker (`--decode-thread worker`): a worker thread that owns the engine, the decode
// loop and the scheduler (a LocalHost), so that the HTTP thread's work (Fastify, chunks, SSE,
// socket writes) no longer shares a core's time with llama_decode. Requests and cancels come in
// as messages; at every step boundary the worker takes the ones waiting (without returning to
// its event loop), and it sends the acceptances and events of the steps since its last message
// in one message: at once when one is urgent, otherwise once a fifth of the stream interval has
// passed.
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { serverVmWorkers } from "./context.js";
import { toWire, type JobEnd, type JobSink, type StartedRequest } from "./decode-host.js";
import { openLocalHost, type LocalHost } from "./local-host.js";
import { MetricRelay } from "./metric-relay.js";
import type { FromWorker, StartReply, StepEntry, ToWorker } from "./worker-protocol.js";

const { options, port } = workerData as {
  options: import("./local-host.js").HostOptions;
  port: MessagePort;
};

const relay = new MetricRelay();
const regionRunner = serverVmWorkers();
const started = new Map<number, { request: StartedRequest; open: number }>();
let host: LocalHost | undefined;
let out: StepEntry[] = [];
/** Accepted start messages: their replies travel with the next step message, before its events
 * (usually the request's first token's: one wake-up of the HTTP thread, not two). */
let accepted: StartReply[] = [];
let shown = { busy: -1, waiting: -1 };
/**
 * How long events may wait in `out` for the steps after them. A message costs this thread a
 * structured clone and a wake-up of the HTTP thread: one per step was 0.35× the time of
 * llama_decode at one client (docs/benchmarks.md#server). A stream writes at most once per
 * stream interval anyway, so a fifth of it delays no write by more than that fifth.
 */
const gatherMs = options.streamIntervalMs / 5;
/** Counts the step messages sent: a text run may grow only while its message is unsent. */
let batch = 0;
/** When the oldest event in `out` was made. */
let firstWaiting = 0;
/** Something in `out` the HTTP side should see at once: a choice's first event (time to first
 * token) or its end (its slot is free, its usage known, or a queued request refused). */
let urgent = false;

const send = (msg: FromWorker) => port.postMessage(msg);

/**
 * Sends the start replies, events, metric changes and slot counts gathered since the last
 * message, as one message: when `now` (the loop is about to wait), when something is urgent, or
 * once the oldest event has waited `gatherMs`. Replies, metrics and counts alone wait for one of
 * those: only events need them first.
 */
function flush(now: boolean): void {
  if (!host) return;
  if (!now && !urgent && (out.length === 0 || performance.now() - firstWaiting < gatherMs)) return;
  const { busy, waiting } = host;
  const counts = busy !== shown.busy || waiting !== shown.waiting;
  const metrics = relay.take();
  if (accepted.length === 0 && out.length === 0 && !metrics && !counts) return;
  send({ t: "step", busy, waiting, metrics, accepted, out });
  accepted = [];
  out = [];
  batch++;
  shown = { busy, waiting };
  urgent = false;
}

function queue(entry: StepEntry): void {
  if (out.length === 0) firstWaiting = performance.now();
  out.push(entry);
}

function sinkFor(id: number): JobSink {
  /** Choices that have sampled a token. */
  const begun = new Set<number>();
  /** Whether the request's tokens travel as text runs: it asked for nothing else per token. */
  let runs = false;
  /** Each choice's text run in `out` that its next tokens may join (the choice's last entry
   * there), with the message it is in. */
  const open: Array<{ entry: [number, number, string, number]; batch: number } | undefined> = [];
  return {
    // The request's facts travel in the reply to its start message.
    begin: (request) => {
      runs = request.logprobs < 0 && !request.tokenEvents;
    },
    event: (choice, ev) => {
      if (!begun.has(choice)) {
        // A hook's setup output, say, or the first token: what comes before the first token,
        // and the first token itself, leave at once.
        urgent = true;
        if (ev.type === "token") begun.add(choice);
      }
      if (runs && ev.type === "token") {
        const run = open[choice];
        if (run && run.batch === batch) {
          run.entry[2] += ev.text;
          run.entry[3]++;
        } else {
          const entry: [number, number, string, number] = [id, choice, ev.text, 1];
          open[choice] = { entry, batch };
          queue(entry);
        }
        return;
      }
      // What comes after this event must follow it.
      open[choice] = undefined;
      queue([id, choice, ev]);
    },
    end: (choice, outcome: JobEnd) => {
      urgent = true;
      open[choice] = undefined;
      queue([id, choice, null, "error" in outcome ? { error: toWire(outcome.error) } : outcome]);
      const entry = started.get(id);
      if (entry && --entry.open === 0) started.delete(id);
    },
  };
}

function reply(id: number, run: () => unknown): void {
  try {
    send({ t: "reply", id, ok: true, value: run() });
  } catch (err) {
    send({ t: "reply", id, ok: false, error: toWire(err) });
  }
}

function handle(msg: ToWorker): void {
  const h = host!;
  switch (msg.t) {
    case "start": {
      let request: StartedRequest;
      try {
        request = h.startNow(msg.request, sinkFor(msg.id));
      } catch (err) {
        // A refusal (400, 503 …) is answered at once: no step will carry it.
        send({ t: "reply", id: msg.id, ok: false, error: toWire(err) });
        return;
      }
      started.set(msg.id, { request, open: request.n });
      const { cancel: _, ...facts } = request;
      accepted.push([msg.id, facts]);
      return;
    }
    case "cancel":
      started.get(msg.id)?.request.cancel(msg.reason, msg.choice);
      return;
    case "tokenize":
      return reply(msg.id, () => h.tokenizeNow(msg.content, msg.addSpecial, msg.withPieces));
    case "detokenize":
      return reply(msg.id, () => h.detokenizeNow(msg.tokens));
    case "close":
      void h
        .close()
        .then(() => regionRunner.close())
        .finally(() => {
          flush(true);
          send({ t: "closed" });
          port.close();
          // Ends this thread only; its exit handlers give llama.cpp's log callback back.
          process.exit(0);
        });
      return;
  }
}

/** Takes the messages waiting, then sends what the steps produced when it is time to (always
 * before the loop waits). */
function atStep(idle: boolean): void {
  if (!host) return;
  const before = accepted.length;
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
    handle(m.message as ToWorker);
  // A request accepted just now with a slot free joins at once (the loop does not wait): its
  // reply leaves with its first token.
  const joins = accepted.length > before && host.busy < host.model.slots;
  flush(idle && !joins);
}

try {
  host = await openLocalHost(options, {
    metrics: relay.metrics,
    regionRunner,
    onStep: atStep,
    // A first token (or an end, or events past their gathering window) leaves before the
    // decode of the step that sampled it.
    onSampled: () => flush(false),
  });
  port.on("message", (msg: ToWorker) => {
    const before = accepted.length;
    handle(msg);
    // Handled between steps (the loop idle, or letting I/O in): an accepted request wakes the
    // loop, whose next step boundary sends its reply with its first token; anything else (a
    // cancel, a refusal and the metrics it counted) is sent now, as the loop may be asleep.
    flush(accepted.length === before);
  });
  send({ t: "ready", model: host.model });
} catch (err) {
  send({ t: "failed", error: toWire(err) });
  await regionRunner.close();
  port.close();
  process.exit(0);
}
