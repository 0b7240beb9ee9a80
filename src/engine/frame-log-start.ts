import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Makes the frame log of a database file that was just rebuilt elsewhere (restored from a backup)
 * start at generation `generation`, with the replication index going on from `index`, instead of
 * at generation 1. A restored primary must not number its generations from 1 again: the bucket
 * and any replica already hold generations under those numbers with other contents.
 *
 * Writes the log's `meta.json` in the form `FrameLog` reads (frame-log.ts); the file must have no
 * log yet. Tested against `FrameLog` itself (test/engine/frame-log-start.test.ts).
 */
export function startFrameLogAt(dbPath: string, start: { generation: number; index: number }): void {
  const dir = `${dbPath}.log`;
  const file = path.join(dir, "meta.json");
  if (existsSync(file)) throw new Error(`${dbPath} already has a frame log`);
  if (!Number.isInteger(start.generation) || start.generation < 1) throw new Error("a generation from 1");
  mkdirSync(dir, { recursive: true });
  const meta = { generation: start.generation, baseIndex: start.index, archived: [], lost: [] };
  writeFileSync(`${file}.tmp`, JSON.stringify(meta));
  renameSync(`${file}.tmp`, file);
}
