import type { AccountPorts } from "../domain/accounts/ports.js";
import type { BackupPorts } from "../domain/cluster/backup-port.js";
import type { NodeStatusPorts } from "../domain/cluster/node-status.js";
import type { ReadinessProbe } from "../domain/cluster/readiness.js";
import type { Ctx } from "../domain/core/context.js";
import type { DbTokenPorts, JwksPorts } from "../domain/data-access/ports.js";
import type { DatabasePorts } from "../domain/databases/ports.js";
import type { GroupPorts } from "../domain/groups/ports.js";
import type { PlanPorts } from "../domain/plans/ports.js";
import type { IpAllowlist } from "../lib/ip-allowlist.js";
import type { RateLimiter } from "../lib/rate-limiter.js";
import type { ShoalMetrics } from "../metrics/metrics.js";

/** What the management API reaches: the ports of every area it serves, and the readiness probes. */
export type ApiPorts = AccountPorts &
  PlanPorts &
  GroupPorts &
  DatabasePorts &
  DbTokenPorts &
  JwksPorts &
  BackupPorts &
  NodeStatusPorts & {
    /** What `GET /health/ready` checks. */
    readiness: readonly ReadinessProbe[];
    /** Where requests are counted, and what `GET /metrics` shows. */
    metrics: Pick<ShoalMetrics, "apiRequest" | "scrape">;
  };

/** A management API request's context: it can call the verbs of every area. */
export type ApiCtx = Ctx<ApiPorts>;

/** Per-request values Hono carries between middleware and handlers. */
export interface AppEnv {
  Variables: {
    deps: ApiPorts;
    requestId: string;
    /** Per-token request limits set by the operator. */
    limiter: RateLimiter;
    /** The operator's reverse proxies (`SHOAL_TRUSTED_PROXIES`), whose forwarded headers are believed. */
    proxies?: IpAllowlist;
    /** The body once read (see api/body.ts). */
    bodyText?: string;
    /** Set once the bearer token was checked; absent on public routes called without one. */
    ctx?: ApiCtx;
  };
}
