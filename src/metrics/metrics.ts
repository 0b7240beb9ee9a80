import {
  type Aggregator,
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from "prom-client";
import { type CounterSeries, type HistogramSeries, HotCounter, HotHistogram } from "./hot-metrics.js";
import { statementKind } from "./statement-kind.js";

/** Seconds: from a point query served from memory to a slow transaction or a big export. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Replication lag: a replica on this node follows within milliseconds; a remote one within seconds. */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

let processRegistry: Registry | undefined;

/**
 * The process's own metrics (CPU, memory, event loop, GC), collected once per process: several
 * Shoals in one process (the tests) share the process, and each collector installs observers.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricsSettings {
  /** Label statements, rows, replication and backups by database id (`SHOAL_METRICS_PER_DATABASE`). */
  perDatabase: boolean;
}

interface StatementSeries {
  count: CounterSeries;
  seconds: HistogramSeries;
  read: CounterSeries;
  written: CounterSeries;
}

/** A statement as the usage meter saw it run. */
export interface StatementSample {
  dbId: string;
  sql: string;
  rowsRead: number;
  rowsWritten: number;
  ms: number;
}

/** What a backup shipper tells of itself (see src/backup/shipper.ts `status()`). */
export type BackupDelaySource = () =>
  | { delayMs: number; databases?: ReadonlyArray<{ id: string; delayMs: number }> }
  | undefined;

/**
 * Every metric of one Shoal process, in its own registry (so two Shoals in one test process don't
 * share counters). Labels are bounded: route templates, endpoint and statement kinds, status codes,
 * locations; a database's id only when the operator asks for it.
 */
export class ShoalMetrics {
  readonly registry = new Registry();
  private readonly backupSources: BackupDelaySource[] = [];
  private readonly remoteSources: Array<() => Promise<unknown[][]>> = [];
  private readonly apiRequests: Counter<"method" | "route" | "status">;
  private readonly apiSeconds: Histogram<"method" | "route">;
  private readonly dataRequests: HotCounter;
  private readonly dataSeconds: HotHistogram;
  private readonly statements: HotCounter;
  private readonly statementSeconds: HotHistogram;
  private readonly rowsRead: HotCounter;
  private readonly rowsWritten: HotCounter;
  private readonly lagSeconds: Histogram<"location">;
  private readonly sockets: Gauge;
  /**
   * Series of the hot paths by their label values (see hot-metrics.ts), found by one string key.
   * These series are never removed.
   */
  private readonly perStatement = new Map<string, StatementSeries>();
  private readonly perRequest = new Map<string, { count: CounterSeries; seconds: HistogramSeries }>();
  private readonly shardEnds: Counter<"reason">;
  private readonly shardHops = new Counter({
    name: "shoal_shard_hops_total",
    help: "Data-plane requests a process received for another process's database and sent on: a shard over the SQL hop (sql) or as HTTP over loopback (http); the node's main process, for requests on connections it serves (the management API's, TLS ones that named no database), to a shard (main).",
    labelNames: ["way"],
    registers: [this.registry],
  });
  private readonly historyLost: Counter;
  private readonly keyRefusals = new Counter({
    name: "shoal_encryption_key_refusals_total",
    help: "Encryption keys refused on the data plane: a wrong key (invalid), or a key refused unchecked because its address tried too many wrong keys on the database within a minute (attempts).",
    labelNames: ["reason"],
    registers: [this.registry],
  });
  private readonly standbyEvents = new Counter({
    name: "shoal_standby_events_total",
    help: "Standbys of this node's primaries (replicas on other nodes that every acknowledged write waits for): a replica that caught up and was recorded (joined), one dropped after it didn't confirm a write within SHOAL_STANDBY_CONFIRM_MS or left the group (dropped), and writes answered WRITE_UNCONFIRMED because a standby couldn't be dropped with the store out of reach (unconfirmed).",
    labelNames: ["event"],
    registers: [this.registry],
  });
  private readonly afterCommitFailures = new Counter({
    name: "shoal_after_commit_failures_total",
    help: "Steps after a statement ran or a transaction committed that failed (a full disk, most often), by step: the frame log's record or rollover (frame-log), a notice of the commit to replication and waiters (notice), usage counting (usage), a schema change's journal (schema-journal). The statement's answer stands; the step is retried or its loss logged.",
    labelNames: ["step"],
    registers: [this.registry],
  });

  constructor(readonly settings: MetricsSettings) {
    const registers = [this.registry];
    const db = settings.perDatabase ? ["database"] : [];
    this.apiRequests = new Counter({
      name: "shoal_api_requests_total",
      help: "Management API requests answered, by method, route template and status code.",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.apiSeconds = new Histogram({
      name: "shoal_api_request_duration_seconds",
      help: "Time to answer a management API request, by method and route template.",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.dataRequests = new HotCounter({
      name: "shoal_dataplane_requests_total",
      help: "Data-plane requests answered: HTTP by endpoint and status code, WebSocket by Hrana request type and ok/error.",
      labelNames: ["transport", "endpoint", "status"],
      registers,
    });
    this.dataSeconds = new HotHistogram({
      name: "shoal_dataplane_request_duration_seconds",
      help: "Time to answer a data-plane request, by transport and endpoint.",
      labelNames: ["transport", "endpoint"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.statements = new HotCounter({
      name: "shoal_statements_total",
      help: "SQL statements run for clients, by kind (first keyword).",
      labelNames: ["kind", ...db],
      registers,
    });
    this.statementSeconds = new HotHistogram({
      name: "shoal_statement_duration_seconds",
      help: "Time the engine took to run one statement, by kind.",
      labelNames: ["kind"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rowsRead = new HotCounter({
      name: "shoal_rows_read_total",
      help: "Rows read by client statements (as billed).",
      labelNames: db,
      registers,
    });
    this.rowsWritten = new HotCounter({
      name: "shoal_rows_written_total",
      help: "Rows written by client statements (as billed).",
      labelNames: db,
      registers,
    });
    this.lagSeconds = new Histogram({
      name: "shoal_replication_lag_seconds",
      help: "Time from a commit on a primary until a replica in another location had it, by that location.",
      labelNames: ["location"],
      buckets: LAG_BUCKETS,
      registers,
    });
    this.sockets = new Gauge({
      name: "shoal_dataplane_websocket_connections",
      help: "Open Hrana WebSocket connections.",
      registers,
    });
    this.shardEnds = new Counter({
      name: "shoal_shard_restarts_total",
      help: "Shard processes started again after they ended by themselves (crashed) or were killed by the watchdog (killed).",
      labelNames: ["reason"],
      registers,
    });
    this.historyLost = new Counter({
      name: "shoal_replication_history_lost_total",
      help: "Generations of a primary's history ended by a checkpoint Shoal didn't make: their replicas start over. Should stay 0.",
      registers,
    });
  }

  apiRequest(method: string, route: string, status: number, seconds: number): void {
    this.apiRequests.inc({ method, route, status: String(status) });
    this.apiSeconds.observe({ method, route }, seconds);
  }

  dataRequest(transport: "http" | "ws", endpoint: string, status: string, seconds: number): void {
    const key = `${transport} ${endpoint} ${status}`;
    let series = this.perRequest.get(key);
    if (!series) {
      series = {
        count: this.dataRequests.labels({ transport, endpoint, status }),
        seconds: this.dataSeconds.labels({ transport, endpoint }),
      };
      this.perRequest.set(key, series);
    }
    series.count.value++;
    series.seconds.observe(seconds);
  }

  /** A WebSocket opened (+1) or closed (-1). */
  webSocket(delta: 1 | -1): void {
    this.sockets.inc(delta);
  }

  statement(s: StatementSample): void {
    const kind = statementKind(s.sql);
    const key = this.settings.perDatabase ? `${kind} ${s.dbId}` : kind;
    let series = this.perStatement.get(key);
    if (!series) {
      const db: Record<string, string> = this.settings.perDatabase ? { database: s.dbId } : {};
      series = {
        count: this.statements.labels({ kind, ...db }),
        seconds: this.statementSeconds.labels({ kind }),
        read: this.rowsRead.labels(db),
        written: this.rowsWritten.labels(db),
      };
      this.perStatement.set(key, series);
    }
    series.count.value++;
    series.seconds.observe(s.ms / 1000);
    series.read.value += s.rowsRead;
    series.written.value += s.rowsWritten;
  }

  /** A primary's generation ended behind the frame log's back (see HostedDatabases.onLostHistory). */
  lostHistory(): void {
    this.historyLost.inc();
  }

  /** A shard ended without being asked to and is started again. */
  shardEnded(reason: "crashed" | "killed"): void {
    this.shardEnds.inc({ reason });
  }

  /** An encryption key refused on the data plane (see engine/encryption/key-attempts.ts). */
  encryptionKeyRefused(reason: "invalid" | "attempts"): void {
    this.keyRefusals.inc({ reason });
  }

  /** A standby joined, was dropped, or left a write unconfirmed (see hosting/standbys.ts). */
  standbyEvent(event: "joined" | "dropped" | "unconfirmed"): void {
    this.standbyEvents.inc({ event });
  }

  /** A step after a commit failed; the commit stands (see lib/failpoints.ts for the steps). */
  afterCommitFailure(step: "frame-log" | "notice" | "usage" | "schema-journal"): void {
    this.afterCommitFailures.inc({ step });
  }

  /** A request sent on to the process serving its database (see shards/sql-hop.ts). */
  shardHop(way: "sql" | "http" | "main"): void {
    this.shardHops.inc({ way });
  }

  replicationLag(location: string, ms: number): void {
    this.lagSeconds.observe({ location }, ms / 1000);
  }

  /**
   * A gauge read at every scrape. `read` returns the values to show, one per label set
   * (`[[{}, n]]` for an unlabelled gauge); what it no longer returns disappears.
   */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    read: () => Iterable<readonly [Record<string, string>, number]>,
    /** How the node's processes' values are combined (each shard has its own): summed by default. */
    aggregator: Aggregator = "sum",
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      aggregator,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of read()) this.set(labels, value);
      },
    });
  }

  /** The engine's connection gauges, read from its pool at every scrape (each shard has its own). */
  engine(read: () => { idle: number; inUse: number; databases: number }): void {
    this.gauge(
      "shoal_engine_connections",
      "Open connections to hosted database files, by state (idle or in_use).",
      ["state"],
      () => {
        const s = read();
        return [
          [{ state: "idle" }, s.idle],
          [{ state: "in_use" }, s.inUse],
        ];
      },
    );
    this.gauge(
      "shoal_engine_open_databases",
      "Hosted databases (instances) with at least one open connection.",
      [],
      () => [[{}, read().databases]],
    );
  }

  /** Feeds `shoal_backup_delay_seconds` from a backup shipper's status, read at every scrape. */
  addBackupSource(source: BackupDelaySource): void {
    // Made with the first source: without a backup, the gauge would read 0, "nothing is waiting".
    if (this.backupSources.length === 0) this.backupGauge();
    this.backupSources.push(source);
  }

  /**
   * Metrics kept by the node's other processes (its shards), as prom-client's JSON, merged into
   * every scrape: counters and histograms are added up, gauges summed or taken at their worst.
   */
  addRemoteSource(read: () => Promise<unknown[][]>): void {
    this.remoteSources.push(read);
  }

  /** This process's metrics (its own and its runtime's), as prom-client's JSON. */
  json(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    return Registry.merge([processMetrics(), this.registry]).getMetricsAsJSON();
  }

  /** The text a scraper reads, with its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([processMetrics(), this.registry]);
    if (this.remoteSources.length === 0)
      return { contentType: this.registry.contentType, body: await merged.metrics() };
    const all: unknown[][] = [await merged.getMetricsAsJSON()];
    for (const read of this.remoteSources) all.push(...(await read()));
    // A metric prom-client leaves out of a merge (`process_start_time_seconds`) is this process's:
    // the node started when its primary process did.
    for (const list of all)
      for (const m of list as Array<{ aggregator?: string }>)
        if (m.aggregator === "omit") m.aggregator = "first";
    const aggregated = AggregatorRegistry.aggregate(
      all as Parameters<typeof AggregatorRegistry.aggregate>[0],
    );
    return { contentType: this.registry.contentType, body: await aggregated.metrics() };
  }

  private backupGauge(): void {
    const perDatabase = this.settings.perDatabase;
    this.gauge(
      "shoal_backup_delay_seconds",
      perDatabase
        ? "How long the oldest commit not yet in the backup bucket has waited, by database."
        : "How long the oldest commit not yet in the backup bucket has waited (the largest of any database).",
      perDatabase ? ["database"] : [],
      () => {
        const out: Array<readonly [Record<string, string>, number]> = [];
        for (const read of this.backupSources) {
          const status = read();
          if (!status) continue;
          if (!perDatabase) out.push([{}, status.delayMs / 1000]);
          else for (const d of status.databases ?? []) out.push([{ database: d.id }, d.delayMs / 1000]);
        }
        // Several shippers (one per bucket) without database labels: the worst of them.
        if (!perDatabase && out.length > 1) return [[{}, Math.max(...out.map(([, v]) => v))]];
        return out;
      },
      "max",
    );
  }
}
