import type { InstanceFiles } from "../../engine/instance-files.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import type { DatabaseForDataPlane } from "../../store/databases.js";
import type { Ctx } from "../core/context.js";
import type { BasePorts, DataPlaneCache, Placement } from "../core/ports.js";
import type { TrustedKeySet } from "./provider-tokens.js";
import type { DbTokenVerifier } from "./token-verifier.js";

/** What the verbs minting and revoking database and group tokens reach. */
export interface DbTokenPorts extends BasePorts {
  /** Signs database and group tokens; kept apart from the API token key. */
  dbTokenKey: SigningKey;
  directory: DataPlaneCache;
}

export type DbTokenCtx = Ctx<DbTokenPorts>;

/** What managing an organization's trusted key sets reaches (`jwks.ts`). */
export interface JwksPorts extends BasePorts {
  directory: DataPlaneCache;
  /** Fetches a key set URL and checks it serves usable public keys; throws why not. */
  checkJwks(url: string): Promise<void>;
}

export type JwksCtx = Ctx<JwksPorts>;

/** What deciding a data-plane request's access reaches (`open.ts`). */
export interface DataAccessPorts {
  directory: DatabaseLookup;
  tokenVerifier: DbTokenVerifier;
  placement: Placement;
  files: Pick<InstanceFiles, "path">;
}

/** The data plane's directory of databases (`hosting/directory.ts`), cached. */
export interface DatabaseLookup {
  find(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined>;
  /** The record read from the store again, whatever the cache holds. */
  reload(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined>;
  /** The cached record, if fresh; no store access. */
  peek(locator: DatabaseLocator): DataPlaneDatabase | undefined;
  /** File of a database's primary instance. */
  pathOf(d: DatabaseForDataPlane, files: Pick<InstanceFiles, "path">): string;
  /** Whether a group exists (a token of a deleted group is told so). */
  groupExists(groupId: string): Promise<boolean>;
}

/** How a data-plane request names its database: by hostname label, by path, or by id. */

export type DatabaseLocator = { label: string } | { orgSlug: string; name: string } | { id: string };

/** A database as the data plane sees it: placement, settings, generations, and its group's locations. */
export type DataPlaneDatabase = DatabaseForDataPlane & {
  locations: string[];
  /** Ids (`jti`) of this database's and its group's tokens revoked one by one, not yet expired. */
  revokedTokens: ReadonlySet<string>;
  /** Key sets of identity providers the database's organization trusts to sign its tokens. */
  jwks: readonly TrustedKeySet[];
};
