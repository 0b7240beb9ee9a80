import type { StoreAccess } from "../domain/core/ports.js";
import type { SchemaQueue } from "../domain/databases/ports.js";
import type { EngineConnection } from "../engine/connection.js";
import { frameLogFolder } from "../engine/frame-log-meta.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { readSchema, schemaFingerprint } from "../engine/schema-copy.js";
import { type SchemaChange, SchemaJournal } from "../engine/schema-journal.js";
import type { Logger } from "../lib/logger.js";
import { type Clock, isoTime } from "../lib/time.js";
import type { DatabaseWithPlacement } from "../store/databases.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";

/** What schema propagation reaches. */
export interface SchemaPropagationPorts {
  store: StoreAccess;
  files: InstanceFiles;
  /** Where each child's changes are applied: the process serving it. */
  runtimes: Pick<DatabaseRuntimes, "applySchemaChange">;
  clock: Clock;
  log: Logger;
}

/** How long applying a change to a child waits for the child's own writers. */
const LOCK_WAIT_MS = 30_000;

/** Runs tasks one after another per key (a schema database), each after the previous settled. */
class SerialQueues {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/** The journal of a schema database's changes, beside its frame log. */
export function schemaJournal(
  ports: { files: Pick<InstanceFiles, "path"> },
  db: Pick<DatabaseWithPlacement, "id" | "primary_location">,
) {
  return new SchemaJournal(frameLogFolder(ports.files.path(db.primary_location, db.id)));
}

/**
 * Journals a change right after a transaction that ran DDL committed on a schema database, on the
 * connection that committed it (its writer still holds the write lock, so the schema read here is
 * exactly the committed one), durably. The caller then has its children brought forward
 * (`SchemaPropagation.propagate`).
 */
export function journalSchemaChange(
  files: Pick<InstanceFiles, "path">,
  parent: Pick<DatabaseWithPlacement, "id" | "primary_location">,
  conn: EngineConnection,
  statements: readonly string[],
): void {
  const fingerprint = schemaFingerprint(readSchema(conn));
  schemaJournal({ files }, parent).append({ at: Date.now(), statements: [...statements], fingerprint });
}

/** What `applyToChild` answers when the follower's write lock stayed taken: retried, not reported. */
const BUSY = "busy";
/** How long a follower that was busy gets before its schema change is tried again. */
const BUSY_RETRY_MS = 5_000;

/**
 * Schema databases' changes, journaled as they commit and brought to the databases following them.
 * Everything that touches the schema of a schema database's children runs in that database's
 * queue: propagating its changes, and creating a child (so a child never misses a change made
 * while it was being created).
 */
export class SchemaPropagation implements SchemaQueue {
  private readonly queues = new SerialQueues();
  /** Changes already reported as failed per child, so a retry that fails again isn't logged twice. */
  private readonly reported = new Set<string>();

  constructor(private readonly ports: SchemaPropagationPorts) {}

  run<T>(schemaDbId: string, task: () => Promise<T>): Promise<T> {
    return this.queues.run(schemaDbId, task);
  }

  /** Brings every child of a schema database up to its latest journaled change (in the background). */
  propagate(parentId: string): void {
    this.queues
      .run(parentId, () => this.catchUp(parentId))
      .catch((e: unknown) => this.ports.log.error({ err: e, dbId: parentId }, "schema propagation failed"));
  }

  /** After a start: children that missed changes (a stop before they were applied) get them. */
  async resume(): Promise<void> {
    const parents = await this.ports.store.read((r) => r.databases.schemaParents());
    for (const p of parents) {
      if (this.ports.files.exists(p.primary_location, p.id)) this.propagate(p.id);
    }
  }

  private retryLater(parentId: string): void {
    setTimeout(() => this.propagate(parentId), BUSY_RETRY_MS).unref();
  }

  private async catchUp(parentId: string): Promise<void> {
    const deps = this.ports;
    const { parent, children } = await deps.store.read(async (r) => ({
      parent: await r.databases.findById(parentId),
      children: await r.databases.schemaChildren(parentId),
    }));
    if (!parent) return;
    const journal = schemaJournal(deps, parent);
    // Schema changes never cross organizations (a transferred schema database leaves its followers).
    for (const child of children.filter((c) => c.org_id === parent.org_id)) {
      if (child.schema_seq >= journal.lastSeq()) continue;
      for (const change of journal.since(child.schema_seq)) {
        const error = await deps.runtimes.applySchemaChange(child, change);
        if (error === BUSY) {
          this.retryLater(parentId);
          break;
        }
        if (error !== undefined) {
          await this.reportFailure(parent, child, change, error);
          break;
        }
        await deps.store.write((r) => r.databases.setSchemaSeq(child.id, change.seq));
      }
    }
  }

  private async reportFailure(
    parent: DatabaseWithPlacement,
    child: DatabaseWithPlacement,
    change: SchemaChange,
    error: string,
  ): Promise<void> {
    const deps = this.ports;
    const key = `${child.id}/${change.seq}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    deps.log.warn(
      { schema: parent.id, dbId: child.id, change: change.seq, error },
      "a schema change could not be applied to a database following the schema database",
    );
    await deps.store.write((r) =>
      r.audit.insert({
        org_id: child.org_id,
        code: "db-schema-migration-failed",
        message: `schema change ${change.seq} of ${parent.name} could not be applied to database ${child.name}: ${error}`,
        origin: "shoal",
        author: "shoal",
        data: JSON.stringify({
          database: child.name,
          schema: parent.name,
          change: change.seq,
          statements: change.statements,
          error,
        }),
        created_at: isoTime(deps.clock()),
      }),
    );
  }
}

/**
 * Applies one change to one child in one transaction, under the child's write lock. A child that
 * already has the change's schema is only marked; otherwise the statements run, and the result
 * must match the parent's schema right after that change, or nothing is kept.
 */
export async function applyToChild(
  deps: { files: Pick<InstanceFiles, "exists">; hosted: Pick<HostedDatabases, "of"> },
  child: DatabaseWithPlacement,
  change: SchemaChange,
): Promise<string | undefined> {
  if (!deps.files.exists(child.primary_location, child.id)) return "its primary is not on this node";
  const hosted = deps.hosted.of(child.primary_location, child.id);
  const lock = hosted.writeLock;
  const owner = {};
  try {
    await lock.acquire(owner, LOCK_WAIT_MS);
  } catch {
    // The follower was busy writing for a long while: not its fault, try again soon.
    return BUSY;
  }
  let conn: EngineConnection | undefined;
  try {
    conn = hosted.checkout();
    conn.configure({ queryOnly: false, maxPageCount: 0 });
    conn.exec("BEGIN IMMEDIATE");
    if (schemaFingerprint(readSchema(conn)) === change.fingerprint) {
      conn.exec("ROLLBACK");
      return undefined;
    }
    try {
      for (const sql of change.statements) conn.exec(sql);
    } catch (e) {
      conn.exec("ROLLBACK");
      return e instanceof Error ? e.message : String(e);
    }
    if (schemaFingerprint(readSchema(conn)) !== change.fingerprint) {
      conn.exec("ROLLBACK");
      return "after the change its schema differs from the schema database's (it had diverged before)";
    }
    conn.exec("COMMIT");
    hosted.afterWrite(conn);
    return undefined;
  } catch (e) {
    if (conn?.inTransaction) conn.exec("ROLLBACK");
    return e instanceof Error ? e.message : String(e);
  } finally {
    if (conn) hosted.checkin(conn);
    lock.release(owner);
  }
}
