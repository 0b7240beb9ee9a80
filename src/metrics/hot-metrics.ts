import type { Metric, Registry } from "prom-client";

/**
 * Counter and histogram families for the per-statement and per-request paths, registered in a
 * prom-client registry like its own metrics. prom-client's `labels()` children still validate and
 * hash their labels on every call, which cost a single-row insert about 2% of its CPU; a series
 * here is a plain object the caller keeps, updated with an addition. Scrapes, merges and
 * aggregation across the node's processes go through the registry as before: `get()` answers in
 * the shape prom-client's own metrics do.
 */
interface Family {
  name: string;
  help: string;
  /** The labels every series has, exactly. A family without labels has its one series from the start. */
  labelNames: readonly string[];
  registers: Registry[];
}

type Labels = Record<string, string>;

/** A family as prom-client's registry reads it (its `get()`; prom-client's typings say numbers for `type`). */
interface FamilyJson {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
}

const register = (family: Family, metric: { labels(labels: Labels): unknown }) => {
  for (const r of family.registers) r.registerMetric(metric as unknown as Metric);
  if (family.labelNames.length === 0) metric.labels({});
};

/** A series' key: its label values in the family's order; labels it doesn't have are a bug. */
function keyOf(family: readonly string[], labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length !== family.length || names.some((n) => !family.includes(n)))
    throw new Error(`labels ${names.join(",")} don't match ${family.join(",")}`);
  return family.map((n) => labels[n]).join("\u0000");
}

/** One series of a counter: add to `value`. */
export interface CounterSeries {
  value: number;
}

export class HotCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  private readonly series = new Map<string, { labels: Labels; counts: CounterSeries }>();

  constructor(family: Family) {
    this.name = family.name;
    this.help = family.help;
    this.labelNames = family.labelNames;
    register(family, this);
  }

  /** The series of `labels`, created at 0; keep it rather than asking again on a hot path. */
  labels(labels: Labels): CounterSeries {
    const key = keyOf(this.labelNames, labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: { value: 0 } };
      this.series.set(key, s);
    }
    return s.counts;
  }

  async get(): Promise<FamilyJson> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.counts.value })),
    };
  }

  reset(): void {
    for (const s of this.series.values()) s.counts.value = 0;
  }
}

/** One series of a histogram. */
export interface HistogramSeries {
  observe(value: number): void;
}

class BucketCounts implements HistogramSeries {
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class HotHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  private readonly buckets: readonly number[];
  private readonly series = new Map<string, { labels: Labels; counts: BucketCounts }>();

  constructor(family: Family & { buckets: readonly number[] }) {
    this.name = family.name;
    this.help = family.help;
    this.labelNames = family.labelNames;
    this.buckets = [...family.buckets].sort((a, b) => a - b);
    register(family, this);
  }

  /** The series of `labels`, created empty; keep it rather than asking again on a hot path. */
  labels(labels: Labels): HistogramSeries {
    const key = keyOf(this.labelNames, labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: new BucketCounts(this.buckets) };
      this.series.set(key, s);
    }
    return s.counts;
  }

  /** As prom-client reports a histogram: cumulative `_bucket`s by `le`, then `_sum` and `_count`. */
  async get(): Promise<FamilyJson> {
    const values: FamilyJson["values"] = [];
    for (const { labels, counts } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts.counts[i]!;
        values.push({
          labels: { ...labels, le: bound },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({
        labels: { ...labels, le: "+Inf" },
        value: counts.count,
        metricName: `${this.name}_bucket`,
      });
      values.push({ labels: { ...labels }, value: counts.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: counts.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.series.values()) {
      s.counts.counts.fill(0);
      s.counts.sum = 0;
      s.counts.count = 0;
    }
  }
}
