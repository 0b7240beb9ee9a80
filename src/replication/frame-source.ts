import { createWriteStream } from "node:fs";
import { copyFile } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { FrameLog } from "../engine/frame-log.js";
import type { FrameRead } from "../engine/frame-log-meta.js";

/**
 * Where a keyless follower reads its primary from: the three calls of libSQL's sync protocol v2,
 * which serve the primary's bytes as stored (encrypted, for an encrypted database).
 */
export interface FrameSource {
  /** The primary's current generation (`GET /info`). */
  currentGeneration(): Promise<number>;
  /**
   * Writes the database file as it was when generation `generation` began into `dest`
   * (`GET /export/{g}`); when `generation` is no longer current, writes nothing and returns the
   * current one instead.
   */
  exportInto(generation: number, dest: string): Promise<{ current: number } | undefined>;
  /** Committed frames `start`..`end - 1` (1-based) of a generation (`GET /sync/{g}/{start}/{end}`). */
  frames(generation: number, start: number, end: number): Promise<FrameRead>;
}

/** The primary answered something a follower can't use (its message, never frame bytes). */
export class FrameSourceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * A primary's replication route over HTTP: `<base>/info`, `/export/{g}`, `/sync/{g}/{s}/{e}`
 * with a bearer token, the same exchange libSQL's embedded replicas make (dataplane/sync.ts).
 */
export class HttpFrameSource implements FrameSource {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async currentGeneration(): Promise<number> {
    const res = await this.get("/info");
    const body = (await res.json()) as { current_generation?: unknown };
    if (!res.ok || typeof body.current_generation !== "number") throw await this.failure(res, body);
    return body.current_generation;
  }

  async exportInto(generation: number, dest: string): Promise<{ current: number } | undefined> {
    const res = await this.get(`/export/${generation}`);
    if (res.status === 400) return { current: generationIn(await res.json(), res) };
    if (!res.ok || !res.body) throw await this.failure(res);
    await pipeline(Readable.fromWeb(res.body as WebReadableStream), createWriteStream(dest, { mode: 0o600 }));
    return undefined;
  }

  async frames(generation: number, start: number, end: number): Promise<FrameRead> {
    const res = await this.get(`/sync/${generation}/${start}/${end}`);
    if (res.ok) return { kind: "frames", data: Buffer.from(await res.arrayBuffer()) };
    if (res.status === 400) return { kind: "past-end", latest: generationIn(await res.json(), res) };
    if (res.status === 410) return { kind: "gone", latest: generationIn(await res.json(), res) };
    throw await this.failure(res);
  }

  private get(path: string): Promise<Response> {
    return fetch(`${this.base.replace(/\/+$/, "")}${path}`, {
      headers: { authorization: `Bearer ${this.token}` },
    });
  }

  private async failure(res: Response, body?: unknown): Promise<FrameSourceError> {
    const json = (body ?? (await res.json().catch(() => ({})))) as { error?: unknown };
    const why = typeof json.error === "string" ? `: ${json.error}` : "";
    return new FrameSourceError(`the primary answered ${res.status}${why}`, res.status);
  }
}

function generationIn(body: unknown, res: Response): number {
  const g = (body as { generation?: unknown } | null)?.generation;
  if (typeof g !== "number") throw new FrameSourceError(`the primary answered ${res.status}`, res.status);
  return g;
}

/**
 * A primary's frame log on this machine, read directly. `holdCheckpoints` runs the export while
 * no checkpoint may change the file (HostedDatabase.whileExporting); without it the caller ensures it.
 */
export function localFrameSource(
  log: FrameLog,
  holdCheckpoints: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
): FrameSource {
  return {
    currentGeneration: async () => log.generation,
    exportInto: (generation, dest) =>
      holdCheckpoints(async () => {
        if (generation !== log.generation) return { current: log.generation };
        await copyFile(log.dbPath, dest);
        return undefined;
      }),
    frames: async (generation, start, end) => log.read(generation, start, end),
  };
}
