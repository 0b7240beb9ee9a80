import type { Ctx, Deps } from "../domain/core/context.js";
import type { RateLimiter } from "../lib/rate-limiter.js";

/** Per-request values Hono carries between middleware and handlers. */
export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    /** Per-token request limits set by the operator. */
    limiter: RateLimiter;
    /** The body once read (see api/body.ts). */
    bodyText?: string;
    /** Set once the bearer token was checked; absent on public routes called without one. */
    ctx?: Ctx;
  };
}
