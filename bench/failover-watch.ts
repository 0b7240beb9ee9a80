/**
 * What the replica that gets promoted had applied when the primary died, so that the benchmark
 * can tell writes lost to replication lag (the replica never had them) from writes lost at the
 * promotion itself (the replica had them, the new primary doesn't): the second would be a bug.
 *
 * Two witnesses: reads at the replica's location (the highest id a read answered, which the
 * replica had applied by the time the answer arrived) and the replica's own sync metadata
 * (libSQL's `-info` file beside it: generation and frame it has durably applied). The primary's
 * own frame log, read from its data folder once its process is dead, says how far it had gone.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { FrameLog } from "../src/engine/frame-log.js";
import { type ReplicaPosition, replicaPosition } from "../src/engine/replica-info.js";
import { rows } from "../test/helpers/nodes.js";

/** The one database file in a location folder of a node's data folder. */
export function onlyDatabase(dataDir: string, location: string): string {
  const names = readdirSync(path.join(dataDir, "locations", location)).filter((n) => n.endsWith(".db"));
  if (names.length !== 1) throw new Error(`expected one database in ${location}, found ${names.length}`);
  return path.join(dataDir, "locations", location, names[0]!);
}

/** The highest id in `t` a read at `base` returns. */
export async function maxId(base: string, token: string): Promise<number> {
  const [[max]] = (await rows(base, token, "SELECT coalesce(max(id), 0) FROM t")) as [[number]];
  return max;
}

/**
 * Reads the replica back to back until stopped. `seenBefore(t)` is the highest id among the
 * answers that arrived before `t` (performance.now()): the replica had applied at least that much
 * by then.
 */
export function watchReplica(base: string, token: string) {
  const answers: Array<{ at: number; max: number }> = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      try {
        const max = await maxId(base, token);
        answers.push({ at: performance.now(), max });
      } catch {
        // The replica's node is busy or between states: the next read tells.
      }
    }
  })();
  return {
    seenBefore(t: number): number {
      let best = 0;
      for (const a of answers) if (a.at < t && a.max > best) best = a.max;
      return best;
    },
    async stop(): Promise<void> {
      stopped = true;
      await done;
    },
  };
}

/** Where the dead primary's own history ended: its frame log, read from its data folder. */
export function primaryEnd(dbPath: string): { generation: number; frame: number } {
  const log = new FrameLog(dbPath);
  const { generation, frame } = log.position();
  return { generation, frame };
}

export type { ReplicaPosition };
export { replicaPosition };

/**
 * The writes the dead primary acknowledged, sorted by what the promoted replica had of them:
 * `unreadAtKill` no read at the replica had returned before the kill (a loose bound: reads queue
 * behind the replica's syncs), `inLagAtPromotion` the replica lacked when it was promoted (read
 * once the primary was dead, when nothing more can reach it), `lost` are missing afterwards, and
 * `lostApplied` are missing although the replica had them before the promotion (must be 0:
 * anything else is the promotion dropping frames).
 */
export function tally(
  acked: readonly number[],
  seenAtKill: number,
  seenAtPromotion: number,
  have: Set<number>,
) {
  const lost = acked.filter((id) => !have.has(id));
  return {
    acked: acked.length,
    unreadAtKill: acked.filter((id) => id > seenAtKill).length,
    inLagAtPromotion: acked.filter((id) => id > seenAtPromotion).length,
    lost: lost.length,
    lostApplied: lost.filter((id) => id <= seenAtPromotion).length,
  };
}
