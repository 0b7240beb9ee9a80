import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BackupPrimary, BackupSource } from "../../src/backup/source.js";
import type { SqlValue } from "../../src/engine/connection.js";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";

const LOCATION = "home";

/**
 * Primaries of one node, through the engine itself: files made as Shoal makes them, connections
 * from its pool, and the frame log told after every write, as a stream does. Also the shipper's
 * source: it lists these databases and hands out their logs.
 */
export class TestPrimaries implements BackupSource {
  readonly files: InstanceFiles;
  readonly hosted: HostedDatabases;
  private readonly ids = new Set<string>();

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.files = new InstanceFiles(path.join(dataDir, "locations"));
    this.hosted = new HostedDatabases({ maxOpen: 16, synchronous: "NORMAL" }, this.files);
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
    const db = this.hosted.at(this.path(id));
    const conn = db.checkout();
    try {
      conn.configure({ queryOnly: false, maxPageCount: 0 });
      conn.run(sql, args);
      db.afterWrite(conn);
    } finally {
      db.checkin(conn);
    }
    const { generation, frame } = db.frameLog.position();
    return { generation, frame, at: Date.now() };
  }

  rows(id: string, sql: string): SqlValue[][] {
    const db = this.hosted.at(this.path(id));
    const conn = db.checkout();
    try {
      return [...conn.rows(sql)];
    } finally {
      db.checkin(conn);
    }
  }

  /** Ends the current generation now, as the frame log does when its WAL grows large. */
  rollover(id: string): void {
    const db = this.hosted.at(this.path(id));
    const conn = db.checkout();
    try {
      if (!this.hosted.rollover(db, conn)) throw new Error("checkpoint was busy");
    } finally {
      db.checkin(conn);
    }
  }

  *primaries(): Iterable<BackupPrimary> {
    for (const id of this.ids)
      yield { id, path: this.path(id), labels: { node: "node-a", location: LOCATION } };
  }

  log(file: string) {
    return this.hosted.at(file).frameLog;
  }

  async close(): Promise<void> {
    await this.hosted.closeAll();
  }
}
