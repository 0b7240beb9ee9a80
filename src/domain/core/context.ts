import type { DumpFiles } from "../../engine/dump-files.js";
import type { FrameLogs } from "../../engine/frame-logs.js";
import type { InstanceFiles } from "../../engine/instance-files.js";
import type { ConnectionPool } from "../../engine/pool.js";
import type { DatabaseDirectory } from "../../hosting/directory.js";
import type { UsageMeter } from "../../hosting/usage-meter.js";
import type { Logger } from "../../lib/logger.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import type { Clock } from "../../lib/time.js";
import type { Store } from "../../store/store.js";
import type { DbTokenVerifier } from "../data-access/token-verifier.js";
import type { LocationCatalogue } from "../groups/location-catalogue.js";
import type { Placement, ReadinessProbe, ReplicaPort } from "./ports.js";

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

/** Everything the verbs need from the outside world, wired once in `main.ts`. */
export interface Deps {
  store: Store;
  files: InstanceFiles;
  catalogue: LocationCatalogue;
  /** Suffix of database hostnames: `<db>-<org>.<dbDomain>`. */
  dbDomain: string;
  version: string;
  apiTokenKey: SigningKey;
  /** Signs database and group tokens; kept apart from the API token key. */
  dbTokenKey: SigningKey;
  /** Open connections to hosted databases. */
  pool: ConnectionPool;
  /** Replication logs of the primaries on this node. */
  frameLogs: FrameLogs;
  /** Uploaded SQL dumps waiting to seed new databases (`<data>/dumps`). */
  dumps: DumpFiles;
  directory: DatabaseDirectory;
  tokenVerifier: DbTokenVerifier;
  meter: UsageMeter;
  replicas: ReplicaPort;
  placement: Placement;
  /** What `GET /health/ready` checks. */
  readiness: readonly ReadinessProbe[];
  clock: Clock;
  log: Logger;
}

/** One request's view of the domain: its dependencies, its caller and where the call came from. */
export interface Ctx {
  deps: Deps;
  actor: Principal;
  /** `cli`, `web` or `api`, from the caller's User-Agent; recorded in audit entries. */
  origin: string;
}
