// Live plots of every sampled token: the entropy of the distribution it came from, and the
// probability of the most likely token (the first alternative from `logprobs`). Drawn with uPlot
// while the text streams; `data-points` on each chart says how many points it holds.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Generation } from "./generation.js";
import type { TokenInfo } from "./protocol.js";
import { useGeneration } from "./use-generation.js";

interface Series {
  id: string;
  title: string;
  unit: string;
  value: (token: TokenInfo) => number;
  range: (max: number) => [number, number];
  color: string;
}

const SERIES: Series[] = [
  {
    id: "entropy",
    title: "Entropy",
    unit: "nats",
    value: (t) => t.entropy,
    range: (max) => [0, Math.max(1, Math.ceil(max))],
    color: "#c2410c",
  },
  {
    id: "top1",
    title: "Top-1 probability",
    unit: "",
    value: (t) => t.alternatives[0]?.probability ?? t.probability,
    range: () => [0, 1],
    color: "#2563eb",
  },
];

function Chart({ series, tokens }: { series: Series; tokens: TokenInfo[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = host.current!;
    const width = () => Math.max(200, el.clientWidth);
    plot.current = new uPlot(
      {
        width: width(),
        height: 140,
        legend: { show: false },
        cursor: { y: false },
        scales: { x: { time: false }, y: { range: (_u, _min, max) => series.range(max) } },
        axes: [
          { stroke: "currentColor", grid: { stroke: "rgba(128,128,128,0.2)" }, size: 30 },
          { stroke: "currentColor", grid: { stroke: "rgba(128,128,128,0.2)" }, size: 40 },
        ],
        series: [
          { label: "token" },
          {
            label: series.title,
            stroke: series.color,
            width: 1.5,
            points: { show: true, size: 4, fill: series.color },
          },
        ],
      },
      [[], []],
      el,
    );
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: width(), height: 140 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [series]);

  useEffect(() => {
    plot.current?.setData([tokens.map((_, i) => i), tokens.map(series.value)]);
  });

  const last = tokens.at(-1);
  return (
    <figure class="chart" data-series={series.id} data-points={tokens.length}>
      <figcaption>
        {series.title}
        {series.unit && ` (${series.unit})`} per token
        <span class="count">
          {tokens.length} points
          {last && ` · last ${series.value(last).toFixed(3)}`}
        </span>
      </figcaption>
      <div
        ref={host}
        class="chart-canvas"
        role="img"
        aria-label={`${series.title} of each of the ${tokens.length} generated tokens`}
      />
    </figure>
  );
}

export function Plots({ generation }: { generation: Generation | null }) {
  useGeneration(generation);
  const tokens = generation?.tokens ?? [];
  const estimated = tokens.some((t) => t.entropyEstimated);
  return (
    <section class="panel plots" aria-labelledby="plots-title">
      <h2 id="plots-title">Live plots</h2>
      {SERIES.map((series) => (
        <Chart key={series.id} series={series} tokens={tokens} />
      ))}
      {estimated && (
        <p class="note">
          Entropy estimated from the top alternatives (the server sent no exact value).
        </p>
      )}
    </section>
  );
}
