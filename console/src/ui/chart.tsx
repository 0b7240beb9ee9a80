import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface Series {
  /** UTC days, `YYYY-MM-DD`. */
  days: string[];
  values: Array<number | null>;
}

const DAY = 86_400;
/** Tick steps for counts: whole numbers only (a count of 0.5 rows means nothing). */
const WHOLE_STEPS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();
const dayToSeconds = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;
const label = (s: number) =>
  new Date(s * 1000).toLocaleDateString("en", { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * One daily series as a uPlot chart, sized to its box (and re-sized with it). The canvas is
 * hidden from assistive technology; the caption carries the figures in words.
 */
interface ChartProps {
  title: string;
  summary: string;
  series: Series;
  kind: "bars" | "line";
  format: (n: number) => string;
  /** How many days the x axis spans, ending with the series' last day. */
  windowDays: number;
  /** The values are counts: whole-number ticks. */
  whole?: boolean;
}

export function DailyChart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const days = props.series.days;
    const last = dayToSeconds(days[days.length - 1] ?? new Date().toISOString().slice(0, 10));
    const opts = chartOptions(props, Math.max(200, el.clientWidth), last);
    // Every day of the window, empty before the series starts: bar widths come from the spacing.
    const byDay = new Map(days.map((d, i) => [dayToSeconds(d), props.series.values[i] ?? null]));
    const xs = Array.from({ length: props.windowDays }, (_, i) => last - (props.windowDays - 1 - i) * DAY);
    const data: uPlot.AlignedData = [xs, xs.map((x) => byDay.get(x) ?? null)];
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(200, el.clientWidth), height: 160 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.series, props.kind]);
  return (
    <figure class="chart">
      <figcaption>
        <strong>{props.title}</strong> <span class="hint">{props.summary}</span>
      </figcaption>
      <div ref={box} class="chart-box" aria-hidden="true" />
    </figure>
  );
}

/** uPlot's settings for one daily series ending on the day `last` (seconds), `width` pixels wide. */
function chartOptions(props: ChartProps, width: number, last: number): uPlot.Options {
  const stroke = props.kind === "bars" ? "#2f5f9f" : "#2f7d4f";
  return {
    width,
    height: 160,
    // The legend under the chart gives the day and the value under the pointer.
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    scales: {
      // The whole window, even for a database younger than it, so one day is one day wide.
      x: { time: true, range: () => [last - (props.windowDays - 0.5) * DAY, last + 0.5 * DAY] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        stroke: "#5a6477",
        grid: { show: false },
        ticks: { show: false },
        space: 60,
        values: (_u, splits) => splits.map(label),
      },
      {
        stroke: "#5a6477",
        size: 64,
        grid: { stroke: "#e4e8ef" },
        values: (_u, splits) => splits.map((v) => props.format(v)),
        ...(props.whole ? { incrs: WHOLE_STEPS } : {}),
      },
    ],
    series: [
      { label: "Day", value: (_u, v) => (v === null ? "–" : label(v)) },
      {
        label: props.title,
        value: (_u, v) => (v === null ? "–" : props.format(v)),
        stroke,
        width: 2,
        fill: props.kind === "bars" ? "rgba(47,95,159,0.35)" : "rgba(47,125,79,0.12)",
        ...(props.kind === "bars"
          ? { paths: uPlot.paths.bars?.({ size: [0.7, 24] }), points: { show: false } }
          : // Dots on a line, so a lone day (a database's first) still shows.
            { points: { show: true, size: 5 } }),
      },
    ],
  };
}
