import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { frameLogFolder } from "../engine/frame-log-meta.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { DiskSpace } from "../hosting/disk-space.js";
import type { UsageMeter } from "../hosting/usage-meter.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { ReplicationManager } from "../replication/manager.js";
import type { Supervisor } from "../shards/supervisor.js";

/** What the metrics read of the process's parts. */
export interface MetricsSources {
  files: Pick<InstanceFiles, "locations" | "idsIn" | "path">;
  disk: Pick<DiskSpace, "now">;
  meter: Pick<UsageMeter, "onRecord">;
  replicas: Pick<ReplicationManager, "lag" | "behind">;
}

/**
 * Connects the metrics to the parts they describe: statements and rows as the usage meter counts
 * them, lag samples as replicas take them, and gauges read from the parts at every scrape.
 */
export function watchParts(metrics: ShoalMetrics, parts: MetricsSources): void {
  parts.meter.onRecord((s) => metrics.statement(s));
  parts.replicas.lag.onSample((ms, location) => {
    if (location !== undefined) metrics.replicationLag(location, ms);
  });
  metrics.gauge(
    "shoal_databases_hosted",
    "Database instances (primaries and replicas) whose files this node keeps, by location.",
    ["location"],
    () =>
      parts.files.locations().map((location) => [{ location }, parts.files.idsIn(location).length] as const),
  );
  watchReplicasBehind(metrics, parts.replicas);
  watchDisk(metrics, parts);
}

/** The data folder's free space against the reserve, and what the databases' history takes of it. */
function watchDisk(metrics: ShoalMetrics, parts: MetricsSources): void {
  metrics.gauge(
    "shoal_disk_free_bytes",
    "Free space of the filesystem holding the data folder, as this node's user may write it.",
    [],
    () => [[{}, parts.disk.now(true).freeBytes]],
  );
  metrics.gauge(
    "shoal_disk_reserve_bytes",
    "SHOAL_DISK_RESERVE_MB in bytes: below it, writes that grow databases and new databases are refused, and history is pruned.",
    [],
    () => [[{}, parts.disk.now().reserveBytes]],
  );
  metrics.gauge(
    "shoal_history_bytes",
    "Bytes the databases' history takes (archived generations, commit times, starting images: the frame log folders), by location; it gives way first when the disk runs low.",
    ["location"],
    () =>
      parts.files.locations().map((location) => [{ location }, historyBytes(parts.files, location)] as const),
  );
}

/** The size of every frame log folder of a location's databases (read at each scrape). */
function historyBytes(files: MetricsSources["files"], location: string): number {
  let total = 0;
  for (const id of files.idsIn(location)) {
    const dir = frameLogFolder(files.path(location, id));
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        total += statSync(path.join(dir, name)).size;
      } catch {
        // Removed meanwhile.
      }
    }
  }
  return total;
}

/** How long each location's most-behind replica has lacked a commit: 0 when all are caught up. */
function watchReplicasBehind(metrics: ShoalMetrics, replicas: MetricsSources["replicas"]): void {
  const perDatabase = metrics.settings.perDatabase;
  metrics.gauge(
    "shoal_replication_behind_seconds",
    "Age of the oldest commit a replica does not have yet, the largest of the location's replicas (by database too with SHOAL_METRICS_PER_DATABASE).",
    perDatabase ? ["location", "database"] : ["location"],
    () => {
      const now = Date.now();
      const worst = new Map<string, readonly [Record<string, string>, number]>();
      for (const b of replicas.behind()) {
        const labels: Record<string, string> = perDatabase
          ? { location: b.location, database: b.dbId }
          : { location: b.location };
        const k = perDatabase ? `${b.location}|${b.dbId}` : b.location;
        const seconds = b.since === undefined ? 0 : Math.max(0, now - b.since) / 1000;
        if ((worst.get(k)?.[1] ?? -1) < seconds) worst.set(k, [labels, seconds]);
      }
      return worst.values();
    },
  );
}

/** The node's shard processes: how many serve now, and the databases refused for crashing theirs. */
export function watchShards(metrics: ShoalMetrics, supervisor: Supervisor): void {
  metrics.gauge(
    "shoal_shards",
    "Shard processes of the node, by state (serving, or down while starting again).",
    ["state"],
    () => {
      const serving = supervisor.shards.filter((s) => s.serving).length;
      return [
        [{ state: "serving" }, serving],
        [{ state: "down" }, supervisor.count - serving],
      ];
    },
  );
  metrics.gauge(
    "shoal_databases_quarantined",
    "Databases refused for a while because their statements were running each time their shard ended (DATABASE_QUARANTINED).",
    [],
    () => [[{}, supervisor.quarantine.list().length]],
  );
}
