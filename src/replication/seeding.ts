import { existsSync, renameSync, rmSync } from "node:fs";
import { writeDurably, writeReplicaPosition } from "../engine/replica-info.js";
import type { Logger } from "../lib/logger.js";
import { type FrameSource, HttpFrameSource } from "./frame-source.js";
import type { ReplicaSpec } from "./location-worker-client.js";

/** A point of a primary's history a replica's file was seeded at, by something other than the primary. */
export interface ReplicaSeed {
  generation: number;
  frame: number;
  /** Frame `frame` of `generation` as the seed has it (header and page), to compare with the primary's. */
  lastFrame?: Buffer;
}

export type SeedOutcome = ({ kind: "seeded" } & ReplicaSeed) | { kind: "none"; reason: string };

/**
 * Where a replica's file can come from instead of its primary (the backup bucket, hosting/replica-seeds.ts).
 * `fetch` writes the database as of a point of the primary's history (the same generation and
 * frame numbers its sync protocol serves) into `dest`, a file that must not exist, or says why not.
 */
export interface ReplicaSeeder {
  fetch(dbId: string, dest: string): Promise<SeedOutcome>;
}

/** What the primary says about a seed: it has that very frame (`same`), another history, or can't be asked. */
export type SeedVerdict = "same" | "differs" | "unknown";

/**
 * Compares a seed with the primary's history: frame `frame` of `generation` must be there, byte
 * for byte. A WAL frame's header carries checksums chained over every frame before it in the
 * generation, so an equal frame means an equal history. A seed at a generation's start (frame 0)
 * can only be checked against the primary's current generation.
 */
export async function checkSeed(source: FrameSource, seed: ReplicaSeed): Promise<SeedVerdict> {
  try {
    if (seed.frame === 0) return (await source.currentGeneration()) >= seed.generation ? "same" : "differs";
    const read = await source.frames(seed.generation, seed.frame, seed.frame + 1);
    if (read.kind !== "frames") return "differs";
    if (!seed.lastFrame) return "same";
    return read.data.equals(seed.lastFrame) ? "same" : "differs";
  } catch {
    return "unknown";
  }
}

/**
 * Writes where a seeded replica stands, in the follower's own terms, so its first pull asks the
 * primary for frame `frame + 1` of `generation`: libSQL's embedded replica reads `<file>-info`
 * (its sync metadata: a CRC-32 over version, frame and generation), the keyless follower of an
 * encrypted database `<file>.follow`.
 */
export function writeSeedPosition(path: string, seed: ReplicaSeed, encrypted: boolean): void {
  if (encrypted)
    writeDurably(`${path}.follow`, JSON.stringify({ generation: seed.generation, frame: seed.frame }));
  else writeReplicaPosition(path, seed);
}

/**
 * Seeds replicas of primaries on other nodes from a `ReplicaSeeder`, then lets them follow the
 * primary from there: only the frames after the seed's point cross the network from the primary.
 * A seed is checked against the primary first; when the primary can't be reached the replica
 * serves the seed's state meanwhile, and is checked before its first pull (`mayPull`).
 */
export class ReplicaSeeding {
  /** Replicas seeded while their primary was unreachable: checked before they pull. */
  private readonly unchecked = new Map<string, ReplicaSeed>();
  /** Replicas to build from their primary next time (a rebuild: its history and the primary's parted). */
  private readonly fromPrimary = new Set<string>();
  /** Seeds being written: a second build of the same replica meanwhile shares the first's answer. */
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly seeder: ReplicaSeeder | undefined,
    private readonly log: Logger,
  ) {}

  /** The next build of this replica copies it from its primary, whatever the seeder has. */
  skipNext(key: string): void {
    if (this.seeder) this.fromPrimary.add(key);
    this.unchecked.delete(key);
  }

  forget(key: string): void {
    this.unchecked.delete(key);
  }

  /**
   * Seeds the replica's file when it has none: true when it now holds the seed's state and its
   * follower's position (the caller then registers it instead of opening it from the primary).
   */
  seed(
    key: string,
    dbId: string,
    spec: ReplicaSpec,
    how: { encrypted: boolean; remote: boolean },
  ): Promise<boolean> {
    // Only a replica of another node's primary is seeded: one on this node copies a local file.
    if (this.fromPrimary.delete(key) || !how.remote) return Promise.resolve(false);
    const running = this.inFlight.get(key);
    if (running) return running;
    const p = this.seedOnce(key, dbId, spec, how.encrypted).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }

  private async seedOnce(key: string, dbId: string, spec: ReplicaSpec, encrypted: boolean): Promise<boolean> {
    if (!this.seeder || existsSync(spec.path)) return false;
    const started = Date.now();
    const tmp = `${spec.path}.bootstrap`;
    rmSync(tmp, { force: true });
    const out = await this.seeder
      .fetch(dbId, tmp)
      .catch((e: unknown): SeedOutcome => ({ kind: "none", reason: (e as Error).message }));
    const where = { dbId, location: key.slice(key.indexOf("/") + 1) };
    if (out.kind !== "seeded") {
      this.log.info(
        { ...where, reason: out.reason },
        "replica not seeded from the backup bucket; copying it from its primary",
      );
      return false;
    }
    const verdict = await checkSeed(new HttpFrameSource(spec.syncUrl, spec.token), out);
    if (verdict === "differs") {
      rmSync(tmp, { force: true });
      this.log.warn(
        where,
        "the primary can't go on from the backup bucket's copy (another history, or frames it no longer keeps); copying the replica from it",
      );
      return false;
    }
    for (const s of ["-wal", "-shm", "-info", ".follow"]) rmSync(spec.path + s, { force: true });
    writeSeedPosition(spec.path, out, encrypted);
    renameSync(tmp, spec.path);
    if (verdict === "unknown") this.unchecked.set(key, out);
    const { generation, frame } = out;
    this.log.info(
      { ...where, generation, frame, checked: verdict === "same", ms: Date.now() - started },
      "replica seeded from the backup bucket",
    );
    return true;
  }

  /**
   * Whether the replica may pull now. One seeded while its primary was unreachable is checked
   * first: `rebuild` is called when the primary's history is another one.
   */
  async mayPull(key: string, spec: () => Promise<ReplicaSpec>, rebuild: () => void): Promise<boolean> {
    const seed = this.unchecked.get(key);
    if (!seed) return true;
    const s = await spec();
    const verdict = await checkSeed(new HttpFrameSource(s.syncUrl, s.token), seed);
    if (verdict === "unknown") return false;
    this.unchecked.delete(key);
    if (verdict === "same") return true;
    this.log.warn(
      { key },
      "the primary can't go on from the backup bucket's copy (another history, or frames it no longer keeps); copying the replica from it",
    );
    this.skipNext(key);
    rebuild();
    return false;
  }
}
