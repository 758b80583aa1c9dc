// The decode worker (`--decode-thread worker`): a worker thread that owns the engine, the decode
// loop and the scheduler (a LocalHost), so that the HTTP thread's work (Fastify, chunks, SSE,
// socket writes) no longer shares a core's time with llama_decode. Requests and cancels come in
// as messages; at every step boundary the worker takes the ones waiting (without returning to
// its event loop) and sends one message with every choice's events of that step.
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { serverVmWorkers } from "./context.js";
import { toWire, type JobEnd, type JobSink, type StartedRequest } from "./decode-host.js";
import { openLocalHost, type LocalHost } from "./local-host.js";
import { MetricRelay } from "./metric-relay.js";
import type { FromWorker, StepEntry, ToWorker } from "./worker-protocol.js";

const { options, port } = workerData as {
  options: import("./local-host.js").HostOptions;
  port: MessagePort;
};

const relay = new MetricRelay();
const regionRunner = serverVmWorkers();
const started = new Map<number, { request: StartedRequest; open: number }>();
let host: LocalHost | undefined;
let out: StepEntry[] = [];
let shown = { busy: -1, waiting: -1 };

const send = (msg: FromWorker) => port.postMessage(msg);

/** Sends the step's events, metric changes and slot counts as one message. */
function flush(): void {
  if (!host) return;
  const metrics = relay.take();
  const { busy, waiting } = host;
  if (out.length === 0 && !metrics && busy === shown.busy && waiting === shown.waiting) return;
  send({ t: "step", busy, waiting, metrics, out });
  out = [];
  shown = { busy, waiting };
}

function sinkFor(id: number): JobSink {
  return {
    // The request's facts travel in the reply to its start message.
    begin: () => {},
    event: (choice, ev) => out.push([id, choice, ev]),
    end: (choice, outcome: JobEnd) => {
      out.push([id, choice, null, "error" in outcome ? { error: toWire(outcome.error) } : outcome]);
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
    case "start":
      return reply(msg.id, () => {
        const request = h.startNow(msg.request, sinkFor(msg.id));
        started.set(msg.id, { request, open: request.n });
        const { cancel: _, ...facts } = request;
        return facts;
      });
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
          flush();
          send({ t: "closed" });
          port.close();
          // Ends this thread only; its exit handlers give llama.cpp's log callback back.
          process.exit(0);
        });
      return;
  }
}

/** Takes the messages waiting, then sends what the last step produced. */
function atStep(): void {
  if (host)
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
      handle(m.message as ToWorker);
  flush();
}

try {
  host = await openLocalHost(options, { metrics: relay.metrics, regionRunner, onStep: atStep });
  port.on("message", (msg: ToWorker) => {
    handle(msg);
    // A request handled between steps (the loop idle, or letting I/O in) is answered now.
    flush();
  });
  send({ t: "ready", model: host.model });
} catch (err) {
  send({ t: "failed", error: toWire(err) });
  await regionRunner.close();
  port.close();
  process.exit(0);
}
