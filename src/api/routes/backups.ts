import { z } from "@hono/zod-openapi";
import type { RestoreOutcome } from "../../domain/cluster/backup-port.js";
import {
  backupPoints,
  backupStatus,
  restoreFromBackup,
  restoreMissing,
} from "../../domain/cluster/backups.js";
import { isoTime } from "../../lib/time.js";
import { DatabaseParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Instance administration"];
const iso = (ms: number | null) => (ms === null ? null : isoTime(new Date(ms)));
const forbidden = { 403: "Only the instance administrator manages backups." };
const off = { 409: "`backups_off`: this node has no `SHOAL_BACKUP_URL`." };

const DatabaseBackupWire = z.object({
  id: z.string(),
  organization: z.string().nullable(),
  name: z.string().nullable(),
  location: z.string().nullable(),
  generation: z.number().nullable().openapi({ description: "Where the bucket's copy ends: generation..." }),
  frame: z.number().nullable().openapi({ description: "...and frame (null until the bucket was read)." }),
  delay_ms: z.number().openapi({ description: "Age of the oldest commit the bucket lacks (0: none)." }),
  failures: z.number().openapi({ description: "Failed attempts in a row (0 when shipping works)." }),
  last_error: z.string().nullable(),
  diverged: z
    .string()
    .nullable()
    .openapi({ description: "Why nothing is shipped, when this node's log is behind the bucket." }),
});

const RestoredWire = z.object({
  generation: z.number(),
  frame: z.number(),
  committed_at: z.string().nullable().openapi({ description: "Time of the last commit the file holds." }),
  earliest: z.string().openapi({ description: "The oldest moment the bucket can restore this database to." }),
  replaced: z.boolean().openapi({ description: "An existing file was replaced (false: it was missing)." }),
  ms: z.number().openapi({ description: "How long the restore took." }),
});
type Restored = Extract<RestoreOutcome, { kind: "restored" }>;
const restoredWire = (o: Restored) => ({
  generation: o.generation,
  frame: o.frame,
  committed_at: iso(o.commitAt),
  earliest: isoTime(new Date(o.earliest)),
  replaced: o.replaced,
  ms: o.ms,
});

const RestoreBody = z
  .object({
    timestamp: optional(z.string()).openapi({
      description:
        "RFC 3339 moment to restore to (the state after the last commit at or before it); unset: the latest shipped.",
      example: "2026-11-23T04:00:00Z",
    }),
  })
  .strict();

export const backupRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/admin/backups",
    summary: "Backup status of this node",
    description:
      "Instance administrators only. Whether this node ships its primaries to the bucket (`SHOAL_BACKUP_URL`), how far the bucket trails it (`delay_ms`, the largest of its databases'), and per database where the bucket's copy ends, failures and the last error. Each node reports the databases it holds.",
    tags,
    response: z.object({
      enabled: z.boolean(),
      node: z.string(),
      bucket: z.string().nullable(),
      interval_ms: z.number().nullable(),
      delay_ms: z.number(),
      databases: z.array(DatabaseBackupWire),
    }),
    errors: forbidden,
    handler: async ({ ctx }) => {
      const s = await backupStatus(ctx);
      return {
        enabled: s.enabled,
        node: s.node,
        bucket: s.bucket,
        interval_ms: s.intervalMs,
        delay_ms: s.delayMs,
        databases: s.databases.map((d) => ({
          id: d.id,
          organization: d.organization,
          name: d.name,
          location: d.location,
          generation: d.generation,
          frame: d.frame,
          delay_ms: d.delayMs,
          failures: d.failures,
          last_error: d.lastError,
          diverged: d.diverged,
        })),
      };
    },
  }),
  route({
    method: "get",
    path: "/v1/admin/backups/{organizationName}/{databaseName}",
    summary: "Restorable points of a database",
    description:
      "Instance administrators only. What the bucket can restore the database to: the oldest restorable moment, the latest shipped commit, and its snapshots.",
    tags,
    params: DatabaseParams,
    response: z.object({
      database: z.string(),
      id: z.string(),
      earliest: z.string(),
      latest: z.object({ generation: z.number(), frame: z.number(), committed_at: z.string() }),
      snapshots: z.array(z.object({ generation: z.number(), frame: z.number(), at: z.string() })),
      objects: z.number(),
      bytes: z.number(),
    }),
    errors: {
      ...forbidden,
      404: "The organization or database is unknown, or the bucket has no backup of it.",
      ...off,
    },
    handler: async ({ ctx, params }) => {
      const { id, points: p } = await backupPoints(ctx, params.organizationName, params.databaseName);
      return {
        database: params.databaseName,
        id,
        earliest: isoTime(new Date(p.earliest)),
        latest: {
          ...p.latest,
          committed_at: isoTime(new Date(p.latest.committedAt)),
          committedAt: undefined,
        },
        snapshots: p.snapshots.map((s) => ({
          generation: s.generation,
          frame: s.frame,
          at: isoTime(new Date(s.at)),
        })),
        objects: p.objects,
        bytes: p.bytes,
      };
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/backups/{organizationName}/{databaseName}/restore",
    summary: "Restore a database from the bucket",
    description:
      "Instance administrators only, on the node holding the database's primary location. Rebuilds the database from the bucket as of `timestamp` (or the latest shipped commit) into a new file, checks it, and only then puts it in place of the database's file: same name, id, tokens and URLs. Everything committed after that moment, writes made while the restore runs included, is gone; replicas on this node are rebuilt from it. On any failure the database is left as it was. Sent to a node that doesn't hold the primary location, it is answered 421 `misdirected` naming the node that does.",
    tags,
    params: DatabaseParams,
    body: RestoreBody,
    response: z.object({
      database: z.string(),
      id: z.string(),
      location: z.string(),
      restored: RestoredWire,
    }),
    errors: {
      400: "A timestamp that is not RFC 3339, in the future, or older than the oldest restorable moment (named); an unknown field.",
      ...forbidden,
      404: "The organization or database is unknown, or the bucket has no backup of it.",
      409: "`backups_off`, or a restore of that database is already running.",
      503: "`bucket_unavailable`: the bucket can't be reached; or the database stayed busy. Nothing changed. (A damaged object in the bucket: 502 `restore_failed`.)",
    },
    handler: async ({ ctx, params, body }) => {
      const r = await restoreFromBackup(ctx, params.organizationName, params.databaseName, body.timestamp);
      return {
        database: params.databaseName,
        id: r.id,
        location: r.location,
        restored: restoredWire(r.outcome),
      };
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/backups/restore-missing",
    summary: "Restore every missing database of this node",
    description:
      "Instance administrators only. For a node started on an empty data folder in place of a lost one: restores from the bucket every database whose primary location this node holds but whose file is missing, one after the other (one failing doesn't stop the others), then rebuilds this node's replicas of them.",
    tags,
    body: RestoreBody,
    response: z.object({
      databases: z.array(
        z.object({
          id: z.string(),
          organization: z.string().nullable(),
          name: z.string().nullable(),
          location: z.string(),
          restored: RestoredWire.nullable(),
          error: z.string().nullable(),
        }),
      ),
    }),
    errors: { 400: "A bad timestamp, or one in the future; an unknown field.", ...forbidden, ...off },
    handler: async ({ ctx, body }) => ({
      databases: (await restoreMissing(ctx, body.timestamp)).map((x) => ({
        id: x.id,
        organization: x.organization,
        name: x.name,
        location: x.location,
        restored: x.outcome?.kind === "restored" ? restoredWire(x.outcome) : null,
        error: x.error ?? (x.outcome && x.outcome.kind !== "restored" ? refusal(x.outcome) : null),
      })),
    }),
  }),
];

function refusal(
  o: { kind: "before-history"; earliest: number } | { kind: "future"; now: number } | { kind: "missing" },
): string {
  if (o.kind === "missing") return "the bucket holds no backup of this database";
  if (o.kind === "future") return "the timestamp is in the future";
  return `the timestamp is older than the oldest restorable moment, ${isoTime(new Date(o.earliest))}`;
}
