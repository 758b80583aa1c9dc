// A small SVG writer for the evaluation's plots: a line chart (success rate against the number of
// examples) and a row of bar panels (one metric per panel, one bar per mode). Text only, no DOM.

export interface Series {
  name: string;
  points: ReadonlyArray<readonly [x: number, y: number]>;
}

export interface Panel {
  title: string;
  /** One bar per label; NaN draws an empty slot marked "n/a" (a mode that could not run). */
  bars: ReadonlyArray<{ label: string; value: number }>;
  /** Printed on the bar; default: the value with up to one decimal. */
  format?: (value: number) => string;
}

const COLORS = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280"];
const FONT = 'font-family="sans-serif" font-size="12"';

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function text(x: number, y: number, s: string, extra = ""): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${FONT} ${extra}>${esc(s)}</text>`;
}

/** Lines over a numeric x axis, y from 0 to yMax (percent charts pass 100). */
export function lineChart(opts: {
  title: string;
  xLabel: string;
  yLabel: string;
  yMax: number;
  series: readonly Series[];
}): string {
  const W = 640,
    H = 400,
    left = 60,
    right = 170,
    top = 40,
    bottom = 50;
  const xs = opts.series.flatMap((s) => s.points.map((p) => p[0]));
  const xMin = Math.min(...xs, 0),
    xMax = Math.max(...xs, 1);
  const px = (x: number) => left + ((x - xMin) / (xMax - xMin || 1)) * (W - left - right);
  const py = (y: number) => H - bottom - (y / (opts.yMax || 1)) * (H - top - bottom);
  const out: string[] = [];
  out.push(text(W / 2 - right / 2, 22, opts.title, 'text-anchor="middle" font-weight="bold"'));
  for (let i = 0; i <= 4; i++) {
    const v = (opts.yMax * i) / 4;
    out.push(
      `<line x1="${left}" x2="${W - right}" y1="${py(v)}" y2="${py(v)}" stroke="#ddd"/>`,
      text(left - 6, py(v) + 4, String(Math.round(v)), 'text-anchor="end"'),
    );
  }
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) {
    out.push(text(px(x), H - bottom + 16, String(x), 'text-anchor="middle"'));
  }
  out.push(text(W / 2 - right / 2, H - 12, opts.xLabel, 'text-anchor="middle"'));
  out.push(
    text(16, H / 2, opts.yLabel, `text-anchor="middle" transform="rotate(-90 16 ${H / 2})"`),
  );
  opts.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/>`);
    for (const [x, y] of s.points) {
      out.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    const ly = top + 10 + i * 20;
    out.push(
      `<rect x="${W - right + 14}" y="${ly - 9}" width="12" height="12" fill="${color}"/>`,
      text(W - right + 32, ly + 1, s.name),
    );
  });
  return svg(W, H, out);
}

/** Side-by-side bar panels sharing their labels (e.g. accuracy, forward passes, time per mode). */
export function barPanels(opts: { title: string; panels: readonly Panel[] }): string {
  const panelW = 260,
    H = 340,
    top = 72,
    bottom = 60;
  const W = panelW * opts.panels.length + 20;
  const out: string[] = [text(W / 2, 22, opts.title, 'text-anchor="middle" font-weight="bold"')];
  opts.panels.forEach((panel, p) => {
    const x0 = 20 + p * panelW;
    const max = Math.max(...panel.bars.map((b) => (Number.isFinite(b.value) ? b.value : 0)), 1e-9);
    const slot = (panelW - 30) / Math.max(1, panel.bars.length);
    const base = H - bottom;
    const fmt = panel.format ?? ((v: number) => String(Math.round(v * 10) / 10));
    out.push(text(x0 + (panelW - 30) / 2, top - 30, panel.title, 'text-anchor="middle"'));
    out.push(`<line x1="${x0}" x2="${x0 + panelW - 30}" y1="${base}" y2="${base}" stroke="#999"/>`);
    panel.bars.forEach((bar, i) => {
      const cx = x0 + slot * i + slot / 2;
      const color = COLORS[i % COLORS.length]!;
      if (Number.isFinite(bar.value)) {
        const h = (bar.value / max) * (base - top);
        out.push(
          `<rect x="${(cx - slot * 0.35).toFixed(1)}" y="${(base - h).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${h.toFixed(1)}" fill="${color}"/>`,
          text(cx, base - h - 4, fmt(bar.value), 'text-anchor="middle"'),
        );
      } else {
        out.push(text(cx, base - 6, "n/a", 'text-anchor="middle" fill="#999"'));
      }
      // Labels break at ", " so that long mode names stay under their own bar.
      bar.label.split(", ").forEach((line, l) => {
        out.push(text(cx, base + 16 + 14 * l, line, 'text-anchor="middle"'));
      });
    });
  });
  return svg(W, H, out);
}

function svg(w: number, h: number, body: readonly string[]): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">\n` +
    `<rect width="${w}" height="${h}" fill="white"/>\n${body.join("\n")}\n</svg>\n`
  );
}
