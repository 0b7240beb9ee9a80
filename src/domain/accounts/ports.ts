import type { SigningKey } from "../../lib/signing-keys.js";
import type { Ctx } from "../core/context.js";
import type {
  BasePorts,
  DataPlaneCache,
  FileFacts,
  Instances,
  Placement,
  UsageFlush,
} from "../core/ports.js";

/** What the accounts area's verbs reach. */
export interface AccountPorts extends BasePorts {
  /** Signs API tokens. */
  apiTokenKey: SigningKey;
  /** Only to tell a database token sent to the management API apart from a bad API token. */
  dbTokenKey: SigningKey;
  placement: Placement;
  /** Deleting a user or an organization removes its databases' files. */
  instances: Pick<Instances, "remove" | "dropKept">;
  meter: UsageFlush;
  directory: DataPlaneCache;
  files: Pick<FileFacts, "sizeOf">;
}

export type AccountCtx = Ctx<AccountPorts>;
