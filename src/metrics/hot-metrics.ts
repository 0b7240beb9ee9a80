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

/** What both kinds share: a name, and series by label values, each made once by `create`. */
abstract class HotFamily<S> {
  abstract readonly type: FamilyJson["type"];
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  protected readonly series = new Map<string, { labels: Labels; counts: S }>();

  constructor(
    family: Family,
    private readonly create: () => S,
  ) {
    this.name = family.name;
    this.help = family.help;
    this.labelNames = family.labelNames;
    for (const r of family.registers) r.registerMetric(this as unknown as Metric);
    if (this.labelNames.length === 0) this.labels({});
  }

  /** The series of `labels`, created empty; keep it rather than asking again on a hot path. */
  labels(labels: Labels): S {
    const names = Object.keys(labels);
    if (names.length !== this.labelNames.length || names.some((n) => !this.labelNames.includes(n)))
      throw new Error(`labels ${names.join(",")} don't match ${this.labelNames.join(",")}`);
    const key = this.labelNames.map((n) => labels[n]).join("\u0000");
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: this.create() };
      this.series.set(key, s);
    }
    return s.counts;
  }

  async get(): Promise<FamilyJson> {
    const { name, help, type, aggregator } = this;
    return { name, help, type, aggregator, values: this.values() };
  }

  protected abstract values(): FamilyJson["values"];
}

/** One series of a counter: add to `value`. */
export interface CounterSeries {
  value: number;
}

export class HotCounter extends HotFamily<CounterSeries> {
  readonly type = "counter";

  constructor(family: Family) {
    super(family, () => ({ value: 0 }));
  }

  protected values(): FamilyJson["values"] {
    return [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.counts.value }));
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

export class HotHistogram extends HotFamily<BucketCounts> {
  readonly type = "histogram";
  private readonly buckets: readonly number[];

  constructor(family: Family & { buckets: readonly number[] }) {
    const buckets = [...family.buckets].sort((a, b) => a - b);
    super(family, () => new BucketCounts(buckets));
    this.buckets = buckets;
  }

  /** As prom-client reports a histogram: cumulative `_bucket`s by `le`, then `_sum` and `_count`. */
  protected values(): FamilyJson["values"] {
    const values: FamilyJson["values"] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts.counts[i]!;
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { ...labels, le: "+Inf" }, value: counts.count, metricName: bucket });
      values.push({ labels: { ...labels }, value: counts.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: counts.count, metricName: `${this.name}_count` });
    }
    return values;
  }

  reset(): void {
    for (const s of this.series.values()) {
      s.counts.counts.fill(0);
      s.counts.sum = 0;
      s.counts.count = 0;
    }
  }
}
