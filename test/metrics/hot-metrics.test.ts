import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HotCounter, HotHistogram } from "../../src/metrics/hot-metrics.js";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const SAMPLES: Array<[string, number]> = [
  ["insert", 0.0004],
  ["insert", 0.001],
  ["select", 0.05],
  ["insert", 0.3],
  ["select", 7],
];

/** The same observations through prom-client's own metrics and through hot-metrics.ts. */
function both() {
  const own = new Registry();
  const hot = new Registry();
  const c = new Counter({ name: "x_total", help: "h", labelNames: ["kind"], registers: [own] });
  const h = new Histogram({
    name: "x_seconds",
    help: "h",
    labelNames: ["kind"],
    buckets: BUCKETS,
    registers: [own],
  });
  const bare = new Counter({ name: "y_total", help: "h", registers: [own] });
  const hc = new HotCounter({ name: "x_total", help: "h", labelNames: ["kind"], registers: [hot] });
  const hh = new HotHistogram({
    name: "x_seconds",
    help: "h",
    labelNames: ["kind"],
    buckets: BUCKETS,
    registers: [hot],
  });
  const hbare = new HotCounter({ name: "y_total", help: "h", labelNames: [], registers: [hot] });
  for (const [kind, v] of SAMPLES) {
    c.inc({ kind }, 2);
    h.observe({ kind }, v);
    hc.labels({ kind }).value += 2;
    hh.labels({ kind }).observe(v);
  }
  bare.inc(0);
  hbare.labels({}).value += 0;
  return { own, hot };
}

/** A scrape's lines, each series' labels in one order (Prometheus doesn't care about their order). */
const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => l.replace(/\{([^}]*)\}/, (_, inner: string) => `{${inner.split(",").sort().join(",")}}`))
    .sort();

describe("hot-path metric families", () => {
  it("scrape as prom-client's own counters and histograms do, a family without labels at 0 from the start", async () => {
    const { own, hot } = both();
    expect(lines(await hot.metrics())).toEqual(lines(await own.metrics()));
  });

  it("add up across processes as prom-client's do", async () => {
    const a = both();
    const b = both();
    const ownSum = AggregatorRegistry.aggregate([
      await a.own.getMetricsAsJSON(),
      await b.own.getMetricsAsJSON(),
    ]);
    const hotSum = AggregatorRegistry.aggregate([
      await a.hot.getMetricsAsJSON(),
      await b.hot.getMetricsAsJSON(),
    ]);
    expect(lines(await hotSum.metrics())).toEqual(lines(await ownSum.metrics()));
    expect(await hotSum.metrics()).toContain('x_seconds_bucket{kind="insert",le="+Inf"} 6');
  });

  it("refuses a series whose labels aren't the family's", () => {
    const hc = new HotCounter({ name: "z_total", help: "h", labelNames: ["kind"], registers: [] });
    expect(() => hc.labels({ kind: "a", database: "b" })).toThrow(/don't match/);
    expect(() => hc.labels({})).toThrow(/don't match/);
    expect(hc.labels({ kind: "a" })).toBe(hc.labels({ kind: "a" }));
  });
});
