import type { BackupObject } from "./layout.js";

export type Snapshot = Extract<BackupObject, { kind: "snapshot" }>;
type Sized<T> = T & { size: number };

/** A point of a database's history in the bucket; `finished`: the generation ended there. */
export interface ChainPoint {
  generation: number;
  frame: number;
  finished: boolean;
}

/** An object whose frames a restore replays, in order. */
export interface ChainStep {
  key: string;
  generation: number;
  first: number;
  last: number;
}

/**
 * What the bucket holds for one database, from a listing: its snapshots, frames and archives.
 * Everything the backup decides (where shipping resumes, what a restore replays, what retention
 * may delete) is read from here, so it follows from the bucket alone and survives any restart.
 */
export class Catalog {
  private objects: Array<Sized<BackupObject>> = [];

  constructor(objects: Iterable<Sized<BackupObject>> = []) {
    for (const o of objects) this.add(o);
  }

  get isEmpty(): boolean {
    return this.objects.length === 0;
  }

  add(o: Sized<BackupObject>): void {
    this.objects = this.objects.filter((x) => x.key !== o.key);
    this.objects.push(o);
    this.objects.sort(order);
  }

  remove(keys: readonly string[]): void {
    const gone = new Set(keys);
    this.objects = this.objects.filter((o) => !gone.has(o.key));
  }

  all(): ReadonlyArray<Sized<BackupObject>> {
    return this.objects;
  }

  snapshots(): Array<Sized<Snapshot>> {
    return this.objects.filter((o): o is Sized<Snapshot> => o.kind === "snapshot");
  }

  /** The newest generation any object belongs to (0: none). */
  get lastGeneration(): number {
    return this.objects.reduce((g, o) => Math.max(g, o.generation), 0);
  }

  /**
   * The objects to replay after `from`, in order, as far as frames follow on without a gap: a
   * finished generation's archive leads into the next generation's frame 1.
   */
  walk(from: Snapshot): { steps: ChainStep[]; end: ChainPoint } {
    const steps: ChainStep[] = [];
    let at: ChainPoint = { generation: from.generation, frame: from.frame, finished: false };
    for (;;) {
      const inGen = this.objects.filter((o) => o.generation === at.generation);
      const archive = inGen.find((o) => o.kind === "archive");
      if (archive?.kind === "archive" && archive.frames >= at.frame) {
        if (archive.frames > at.frame)
          steps.push({ key: archive.key, generation: at.generation, first: 1, last: archive.frames });
        at = { generation: at.generation, frame: archive.frames, finished: true };
        if (!this.objects.some((o) => o.generation === at.generation + 1)) return { steps, end: at };
        at = { generation: at.generation + 1, frame: 0, finished: false };
        continue;
      }
      for (const o of inGen) {
        if (o.kind !== "frames" || o.first > at.frame + 1 || o.last <= at.frame) continue;
        steps.push({ key: o.key, generation: o.generation, first: o.first, last: o.last });
        at = { ...at, frame: o.last };
      }
      return { steps, end: at };
    }
  }

  /** The newest snapshot; with `at`, the newest whose state was current at or before `at`. */
  snapshotFor(at?: number): Snapshot | undefined {
    const candidates = this.snapshots().filter((s) => at === undefined || s.validFrom <= at);
    return candidates.at(-1);
  }

  /** The oldest restorable moment: the earliest snapshot's. */
  earliest(): number | undefined {
    const times = this.snapshots().map((s) => s.validFrom);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /** How far the bucket's history goes on from its newest snapshot: where shipping resumes. */
  end(): ChainPoint | undefined {
    const newest = this.snapshotFor();
    return newest ? this.walk(newest).end : undefined;
  }

  /** Compressed bytes of frames shipped after the newest snapshot, to judge when to take another. */
  bytesSinceSnapshot(): number {
    const s = this.snapshotFor();
    if (!s) return 0;
    return this.objects
      .filter(
        (o) =>
          o.kind !== "snapshot" && (o.generation > s.generation || (o.kind === "frames" && o.last > s.frame)),
      )
      .reduce((n, o) => n + o.size, 0);
  }

  /**
   * Objects retention may delete: everything only a moment older than `cutoff` could need. The
   * newest snapshot whose state was current at `cutoff` is kept with all that follows it, so every
   * moment from `cutoff` on stays restorable; nothing is deleted while no snapshot is that old.
   */
  expired(cutoff: number): string[] {
    const keep = this.snapshotFor(cutoff);
    if (!keep) return [];
    return this.objects
      .filter(
        (o) =>
          o.generation < keep.generation ||
          (o.generation === keep.generation &&
            ((o.kind === "snapshot" && o.frame < keep.frame) ||
              (o.kind === "frames" && o.last <= keep.frame))),
      )
      .map((o) => o.key);
  }

  /** Small frames objects of a generation whose archive now holds all their frames. */
  superseded(generation: number): string[] {
    return this.objects.filter((o) => o.generation === generation && o.kind === "frames").map((o) => o.key);
  }
}

/** Generation, then snapshots before frames at the same place, then by frame. */
function order(a: BackupObject, b: BackupObject): number {
  if (a.generation !== b.generation) return a.generation - b.generation;
  return startOf(a) - startOf(b) || rank(a) - rank(b) || a.key.localeCompare(b.key);
}

function startOf(o: BackupObject): number {
  if (o.kind === "snapshot") return o.frame;
  if (o.kind === "frames") return o.first - 1;
  return 0;
}

const rank = (o: BackupObject) => (o.kind === "snapshot" ? 0 : o.kind === "archive" ? 1 : 2);
