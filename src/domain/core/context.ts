import type { BasePorts } from "./ports.js";

/** Who is calling: the user behind an API token, and what that token is restricted to. */
export interface Principal {
  userId: string;
  username: string;
  isAdmin: boolean;
  tokenId: string;
  tokenName: string;
  /** Organization the token is limited to, or null for every organization of the user. */
  orgId: string | null;
  /** Group the token is limited to, or null. */
  groupId: string | null;
  scopes: readonly string[] | null;
}

/**
 * One request's view of the domain: the ports its area declares (`deps`), its caller and where
 * the call came from. Each area names its own (`GroupCtx = Ctx<GroupPorts>`), so a verb reaches
 * only what its area declared.
 */
export interface Ctx<P extends BasePorts = BasePorts> {
  deps: P;
  actor: Principal;
  /** `cli`, `web` or `api`, from the caller's User-Agent; recorded in audit entries. */
  origin: string;
}
