import type { Ctx, Deps } from "../domain/context.js";

/** Per-request values Hono carries between middleware and handlers. */
export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    /** Set once the bearer token was checked; absent on public routes called without one. */
    ctx?: Ctx;
  };
}
