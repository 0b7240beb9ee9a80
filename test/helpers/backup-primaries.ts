import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BackupPrimary, BackupSource } from "../../src/backup/source.js";
import type { SqlValue } from "../../src/engine/connection.js";
import { FrameLogs } from "../../src/engine/frame-logs.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { ConnectionPool } from "../../src/engine/pool.js";

const LOCATION = "home";

/**
 * Primaries of one node, through the engine itself: files made as Shoal makes them, connections
 * from its pool, and the frame log told after every write, as a stream does. Also the shipper's
 * source: it lists these databases and hands out their logs.
 */
export class TestPrimaries implements BackupSource {
  readonly frameLogs = new FrameLogs();
  readonly files: InstanceFiles;
  readonly pool: ConnectionPool;
  private readonly ids = new Set<string>();

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.files = new InstanceFiles(path.join(dataDir, "locations"));
    this.pool = new ConnectionPool({
      maxOpen: 16,
      synchronous: "NORMAL",
      beforeLastClose: (conn) => {
        if (this.frameLogs.get(conn.path).pending > 0) this.frameLogs.rollover(conn);
        this.frameLogs.release(conn.path);
      },
    });
  }

  create(id: string): string {
    this.files.create(LOCATION, id);
    this.ids.add(id);
    return this.path(id);
  }

  /** Adds a database whose file is already there (a restored one). */
  adopt(id: string): void {
    this.ids.add(id);
  }

  path(id: string): string {
    return this.files.path(LOCATION, id);
  }

  /** Runs statements as one write transaction and reports the commit, as a stream does. */
  write(
    id: string,
    sql: string,
    args: readonly SqlValue[] = [],
  ): { generation: number; frame: number; at: number } {
    const conn = this.pool.checkout(this.path(id));
    try {
      conn.configure({ queryOnly: false, maxPageCount: 0 });
      conn.run(sql, args);
      this.frameLogs.afterWrite(conn);
    } finally {
      this.pool.checkin(conn);
    }
    const { generation, frame } = this.frameLogs.get(this.path(id)).position();
    return { generation, frame, at: Date.now() };
  }

  rows(id: string, sql: string): SqlValue[][] {
    const conn = this.pool.checkout(this.path(id));
    try {
      return [...conn.rows(sql)];
    } finally {
      this.pool.checkin(conn);
    }
  }

  /** Ends the current generation now, as the frame log does when its WAL grows large. */
  rollover(id: string): void {
    const conn = this.pool.checkout(this.path(id));
    try {
      if (!this.frameLogs.rollover(conn)) throw new Error("checkpoint was busy");
    } finally {
      this.pool.checkin(conn);
    }
  }

  *primaries(): Iterable<BackupPrimary> {
    for (const id of this.ids)
      yield { id, path: this.path(id), labels: { node: "node-a", location: LOCATION } };
  }

  log(file: string) {
    return this.frameLogs.get(file);
  }

  async close(): Promise<void> {
    await this.pool.closeAll();
  }
}
