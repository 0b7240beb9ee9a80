import http from "node:http";
import https from "node:https";
import type { Logger } from "../../lib/logger.js";

/** How long after a failed probe the next one starts. */
export const PROBE_EVERY_MS = 2000;

interface Down {
  since: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Which primaries' nodes (by origin, `http://host:port`) recently let a replica's pull run past
 * its limit. Every replica following such a node is refused at once, instead of each holding its
 * location's worker for the whole limit again, until a probe of the node's `/health` gets an
 * answer (any answer: the process runs again). Probes use a connection of their own and stop
 * when no replica follows that node any more.
 */
export class PrimaryHealth {
  private readonly down = new Map<string, Down>();

  constructor(
    /** A probe that gets no answer within this long fails. */
    private readonly timeoutMs: number,
    /** Whether some replica still follows a node at `origin`. */
    private readonly followed: (origin: string) => boolean,
    private readonly log: Logger,
  ) {}

  /** Since when the node at `origin` has not answered (undefined: it answers, as far as known). */
  downSince(origin: string): number | undefined {
    return this.down.get(origin)?.since;
  }

  /** A pull to `origin` got no answer in time: refuse its pulls until a probe succeeds. */
  failed(origin: string): void {
    if (this.down.has(origin)) return;
    this.log.warn(
      { primary: origin, timeoutMs: this.timeoutMs },
      "a primary's node didn't answer a replica's pull in time; its replicas here are refused at once until it answers a probe",
    );
    this.down.set(origin, { since: Date.now(), timer: undefined });
    this.schedule(origin);
  }

  close(): void {
    for (const d of this.down.values()) clearTimeout(d.timer);
    this.down.clear();
  }

  private schedule(origin: string): void {
    const d = this.down.get(origin);
    if (!d) return;
    d.timer = setTimeout(() => this.probe(origin), PROBE_EVERY_MS);
    d.timer.unref();
  }

  private probe(origin: string): void {
    if (!this.followed(origin)) {
      this.down.delete(origin);
      return;
    }
    const url = new URL("/health", origin);
    const send = url.protocol === "https:" ? https.get : http.get;
    let done = false;
    const finish = (answered: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      if (!answered) return this.schedule(origin);
      const d = this.down.get(origin);
      this.down.delete(origin);
      if (d)
        this.log.info({ primary: origin, downMs: Date.now() - d.since }, "a primary's node answers again");
    };
    const req = send(url, { agent: false }, (res) => {
      res.resume();
      req.destroy();
      finish(true);
    });
    const limit = setTimeout(() => req.destroy(), this.timeoutMs);
    req.on("error", () => finish(false));
    req.on("close", () => finish(false));
  }
}
