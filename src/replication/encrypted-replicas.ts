import type Database from "libsql";
import type { ReplicaRows } from "../domain/core/ports.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import { openReplicaReader } from "../engine/encryption/open.js";
import { closeWhenUnreferenced } from "../engine/handle-release.js";
import { HttpFrameSource } from "./frame-source.js";
import { KeylessFollower } from "./keyless-follower.js";
import type { ReplicaSpec } from "./location-worker-client.js";

interface Replica {
  follower: KeylessFollower;
  /** A read-only connection opened with the key of the last read, closed before each apply. */
  reader?: { db: Database.Database; check: string };
}

/**
 * The replicas of encrypted databases, kept on the main thread by keyless followers (libSQL's
 * embedded replica, which the location workers run, would keep a plain copy or none). Following
 * needs no key: the follower copies the primary's stored pages. Reads need the request's key and
 * run here, on a read-only connection tagged with that key's check.
 */
export class EncryptedReplicas {
  private readonly replicas = new Map<string, Replica>();

  has(key: string): boolean {
    return this.replicas.has(key);
  }

  /** Starts following (a fresh copy if the replica has none) and waits until caught up. */
  async ensure(key: string, spec: ReplicaSpec): Promise<void> {
    await this.adopt(key, spec).follower.sync();
  }

  /** Takes a replica that exists on disk; it follows from its saved position on the next pull. */
  adopt(key: string, spec: ReplicaSpec): Replica {
    let r = this.replicas.get(key);
    if (!r) {
      const replica: Replica = {
        follower: new KeylessFollower({
          path: spec.path,
          source: new HttpFrameSource(spec.syncUrl, spec.token),
          beforeApply: () => this.closeReader(replica),
        }),
      };
      r = replica;
      this.replicas.set(key, r);
    }
    return r;
  }

  async pull(key: string): Promise<void> {
    await this.replicas.get(key)?.follower.sync();
  }

  async drop(key: string): Promise<void> {
    const r = this.replicas.get(key);
    this.replicas.delete(key);
    await r?.follower.drop();
  }

  /** Lets go of a replica whose file becomes a primary's: its sync ends, its files stay. */
  async release(key: string): Promise<void> {
    const r = this.replicas.get(key);
    this.replicas.delete(key);
    if (!r) return;
    await r.follower.idle();
    this.closeReader(r);
  }

  /** A read on the replica with the request's key: rows as arrays, integers as bigints. */
  query(key: string, sql: string, args: unknown, dbKey: DatabaseKey | undefined): ReplicaRows {
    const r = this.replicas.get(key);
    if (!r) throw new Error("the replica is not open here");
    if (r.reader && r.reader.check !== dbKey?.check) this.closeReader(r);
    if (!r.reader) r.reader = { db: openReplicaReader(r.follower.path, dbKey), check: dbKey?.check ?? "" };
    const stmt = r.reader.db.prepare(sql);
    if (!stmt.reader) {
      throw Object.assign(new Error("only reads run on a replica"), { code: "REPLICA_READ_ONLY" });
    }
    const columns = stmt.columns().map((c) => ({ name: c.name, decltype: c.type ?? null }));
    stmt.raw(true);
    stmt.safeIntegers(true);
    const started = performance.now();
    const rows = stmt.all(args) as unknown[][];
    return { columns, rows, durationMs: performance.now() - started };
  }

  /** Closes the readers of one database's replicas (its key was dropped from memory). */
  closeReaders(dbId: string): void {
    for (const [key, r] of this.replicas) if (key.startsWith(`${dbId}/`)) this.closeReader(r);
  }

  close(): void {
    for (const r of this.replicas.values()) this.closeReader(r);
  }

  private closeReader(r: Replica): void {
    // Closed only once its statements are collected: until then the driver keeps the connection.
    if (r.reader) closeWhenUnreferenced(r.reader.db);
    r.reader = undefined;
  }
}
