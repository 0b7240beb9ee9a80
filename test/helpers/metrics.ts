import { getMetricsFromIterator, type PromMetric, type PromMetrics } from "prom2javascript";
import { expect } from "vitest";

type Series = { labels: Record<string, string>; value?: number; count?: number };

/**
 * One scrape of `GET /metrics`, read by a Prometheus text-format parser (prom2javascript, which
 * refuses a line it can't parse and a histogram whose count and `+Inf` bucket disagree).
 */
export class Scrape {
  constructor(readonly metrics: PromMetrics) {}

  family(name: string): PromMetric | undefined {
    return this.metrics[name];
  }

  /** The series of `name` whose labels include `labels`. */
  series(name: string, labels: Record<string, string> = {}): Series[] {
    const data = (this.metrics[name]?.data ?? []) as Series[];
    return data.filter((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v));
  }

  /** The sum of the matching series' values (a histogram's: its counts); 0 when there is none. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((sum, m) => sum + (m.value ?? m.count ?? 0), 0);
  }

  /** Every label name used by any series. */
  labelNames(): Set<string> {
    const out = new Set<string>();
    for (const name of Object.keys(this.metrics)) {
      for (const m of this.series(name)) for (const k of Object.keys(m.labels)) out.add(k);
    }
    return out;
  }

  /** Every label value of every series. */
  labelValues(): string[] {
    return Object.keys(this.metrics).flatMap((name) =>
      this.series(name).flatMap((m) => Object.values(m.labels)),
    );
  }
}

/** A sample whose value is NaN (`Nan`, as prom-client writes it). */
const NAN_SAMPLE = /^(\w+)(?:\{.*\})?\s+nan$/i;

/**
 * Parses Prometheus text. The parser reads no NaN, which the format allows and prom-client writes
 * for the event-loop lag gauges until their first sample: those lines (and only those: any other
 * NaN fails the test) are left out before parsing.
 */
export async function parseMetrics(text: string): Promise<Scrape> {
  const lines = text.split("\n").filter((line) => {
    const nan = NAN_SAMPLE.exec(line);
    if (nan) expect(nan[1]).toMatch(/^nodejs_eventloop_lag_/);
    return !nan;
  });
  return new Scrape(await getMetricsFromIterator(lines[Symbol.iterator]()));
}

/** Scrapes `/metrics` with `token`, expecting 200 and the Prometheus text format. */
export async function scrape(baseUrl: string, token: string): Promise<Scrape> {
  const r = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(text);
}
