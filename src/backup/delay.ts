import type { ChainPoint } from "./catalog.js";
import type { BackupLog } from "./source.js";

/**
 * When the oldest commit the bucket doesn't have yet was made (ms), read from the log's commit
 * times; undefined when the bucket has every commit (or none of the waiting ones has a recorded
 * time). `at` is where the bucket's chain ends; undefined: nothing shipped yet.
 */
export function pendingSince(log: BackupLog, at: ChainPoint | undefined): number | undefined {
  const local = log.position();
  if (!at) return log.commits(local.generation)[0]?.at;
  if (at.generation === local.generation && at.frame >= local.frame) return undefined;
  if (at.generation > local.generation) return undefined;
  for (let g = at.finished ? at.generation + 1 : at.generation; g <= local.generation; g++) {
    const from = g === at.generation ? at.frame : 0;
    const next = log.commits(g).find((c) => c.frames > from);
    if (next) return next.at;
  }
  return undefined;
}
