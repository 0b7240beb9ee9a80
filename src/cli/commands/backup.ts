import type { Command } from "commander";
import type { Io, Output } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { confirm, type Options, remote } from "./context.js";

interface DatabaseBackup {
  organization: string | null;
  name: string | null;
  id: string;
  location: string | null;
  generation: number | null;
  frame: number | null;
  delay_ms: number;
  failures: number;
  last_error: string | null;
  diverged: string | null;
}
interface Status {
  enabled: boolean;
  node: string;
  bucket: string | null;
  interval_ms: number | null;
  delay_ms: number;
  databases: DatabaseBackup[];
}
interface Points {
  database: string;
  earliest: string;
  latest: { generation: number; frame: number; committed_at: string };
  snapshots: Array<{ generation: number; frame: number; at: string }>;
  objects: number;
  bytes: number;
}
interface Restored {
  generation: number;
  frame: number;
  committed_at: string | null;
  replaced: boolean;
  ms: number;
}

const hints = {
  403: "only the instance administrator may do this",
  409: "see `shoal admin backup status`",
  404: "see `shoal admin backup status` for the databases shipped",
};
const at = (g: number | null, f: number | null) => (g === null ? "-" : `${g}/${f}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Says on a terminal how long a long call has been running, every second. */
async function withElapsed<T>(out: Output, label: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const timer = out.isTTY
    ? setInterval(
        () => out.write(`\r${label}... ${Math.round((Date.now() - started) / 1000)} s\u001b[K`),
        1000,
      )
    : undefined;
  try {
    return await run();
  } finally {
    if (timer) {
      clearInterval(timer);
      out.write("\r\u001b[K");
    }
  }
}

function statusText(s: Status): string {
  if (!s.enabled) return `Backups are off on node ${s.node} (SHOAL_BACKUP_URL is unset).\n`;
  const head = `Node ${s.node} ships to ${s.bucket} every ${s.interval_ms} ms; the bucket trails by ${seconds(s.delay_ms)}.\n\n`;
  const rows = s.databases.map((d) => [
    d.organization,
    d.name ?? d.id,
    d.location,
    at(d.generation, d.frame),
    seconds(d.delay_ms),
    d.failures,
    d.diverged ?? d.last_error ?? "",
  ]);
  return (
    head +
    renderTable(["organization", "database", "location", "shipped", "delay", "failures", "error"], rows)
  );
}

async function restoreOne(io: Io, s: Session, db: string, opts: Options): Promise<void> {
  const org = await s.org();
  const moment = opts.timestamp ? `as of ${String(opts.timestamp)}` : "as last shipped";
  await confirm(
    io,
    opts,
    `Replace database ${db} of ${org} with its backup ${moment}? Later writes are lost`,
  );
  const path = `/v1/admin/backups/${encodeURIComponent(org)}/${encodeURIComponent(db)}/restore`;
  const r = await withElapsed(io.stderr, `Restoring ${db}`, () =>
    s.api.call<{ restored: Restored }>("POST", path, { body: { timestamp: opts.timestamp }, hints }),
  );
  const x = r.restored;
  await emit(
    io.stdout,
    opts.json,
    r,
    () =>
      `Restored ${db} to generation ${x.generation} frame ${x.frame}` +
      `${x.committed_at ? ` (last commit ${x.committed_at})` : ""} in ${seconds(x.ms)}.\n`,
  );
}

export function registerBackup(admin: Command, io: Io): void {
  const backup = admin.command("backup").description("Continuous backups to S3-compatible storage");

  backup
    .command("status")
    .description("What this node ships to the bucket, and how far the bucket trails it")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<Status>("GET", "/v1/admin/backups", { hints });
        await emit(io.stdout, opts.json, r, () => statusText(r));
      }),
    );

  backup
    .command("list")
    .description("The moments the bucket can restore a database to")
    .argument("<database>")
    .action(
      remote(io, async (s, [db], opts) => {
        const org = await s.org();
        const path = `/v1/admin/backups/${encodeURIComponent(org)}/${encodeURIComponent(String(db))}`;
        const r = await s.api.call<Points>("GET", path, { hints });
        await emit(
          io.stdout,
          opts.json,
          r,
          () =>
            `Restorable from ${r.earliest} to ${r.latest.committed_at} (generation ${r.latest.generation} frame ${r.latest.frame}); ${r.objects} objects, ${r.bytes} bytes.\n\n` +
            renderTable(
              ["snapshot", "as of"],
              r.snapshots.map((x) => [at(x.generation, x.frame), x.at]),
            ),
        );
      }),
    );

  backup
    .command("restore")
    .description("Put a database back as the bucket has it, or as it was at --timestamp (in place)")
    .argument("<database>")
    .option("--timestamp <rfc3339>", "the moment to restore to, e.g. 2026-11-23T04:00:00Z")
    .option("-y, --yes", "don't ask for confirmation")
    .action(remote(io, (s, [db], opts) => restoreOne(io, s, String(db), opts)));

  registerRestoreMissing(backup, io);
}

function registerRestoreMissing(backup: Command, io: Io): void {
  backup
    .command("restore-missing")
    .description(
      "Restore every database this node holds whose file is missing (a fresh node replacing a lost one)",
    )
    .option("--timestamp <rfc3339>", "the moment to restore to (default: the latest shipped)")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await withElapsed(io.stderr, "Restoring", () =>
          s.api.call<{
            databases: Array<{
              organization: string | null;
              name: string | null;
              id: string;
              location: string;
              restored: Restored | null;
              error: string | null;
            }>;
          }>("POST", "/v1/admin/backups/restore-missing", { body: { timestamp: opts.timestamp }, hints }),
        );
        await emit(io.stdout, opts.json, r, () =>
          r.databases.length === 0
            ? "No database of this node is missing.\n"
            : renderTable(
                ["organization", "database", "location", "restored to", "took", "error"],
                r.databases.map((d) => [
                  d.organization,
                  d.name ?? d.id,
                  d.location,
                  d.restored ? at(d.restored.generation, d.restored.frame) : "-",
                  d.restored ? seconds(d.restored.ms) : "",
                  d.error ?? "",
                ]),
              ),
        );
      }),
    );
}
