import { ApiClient } from "./api-client.js";
import { configPath, readConfig, type SavedConfig } from "./config-file.js";
import { CliError } from "./errors.js";
import type { Io } from "./io.js";

/** The options every command accepts (see program.ts). */
export interface GlobalOptions {
  config?: string;
  org?: string;
  json?: boolean;
}

/** One command's view of where Shoal is and who the user is. */
export class Session {
  private orgSlug: string | undefined;

  constructor(
    readonly io: Io,
    readonly configFile: string,
    readonly saved: SavedConfig,
    readonly api: ApiClient,
    private readonly orgFlag: string | undefined,
  ) {}

  /**
   * The organization commands act on: `--org`, else SHOAL_ORG, else the one chosen with
   * `shoal org switch`, else the user's personal organization (named after the user).
   */
  async org(): Promise<string> {
    this.orgSlug ??=
      this.orgFlag ||
      this.io.env.SHOAL_ORG ||
      this.saved.org ||
      (await this.api.call<{ user: { username: string } }>("GET", "/v1/current-user")).user.username;
    return this.orgSlug;
  }

  /** `/v1/organizations/<org>` + `rest`, with the names in it escaped. */
  async orgPath(rest = ""): Promise<string> {
    return `/v1/organizations/${encodeURIComponent(await this.org())}${rest}`;
  }
}

/** The config file and what it holds, for commands that need no connection (login, logout). */
export async function loadConfig(io: Io, opts: GlobalOptions): Promise<{ file: string; saved: SavedConfig }> {
  const file = configPath(io.env, opts.config);
  return { file, saved: await readConfig(file) };
}

/** A session for a command that calls the API: SHOAL_URL and SHOAL_TOKEN win over the config file. */
export async function openSession(io: Io, opts: GlobalOptions): Promise<Session> {
  const { file, saved } = await loadConfig(io, opts);
  const url = io.env.SHOAL_URL || saved.url;
  const token = io.env.SHOAL_TOKEN || saved.token;
  if (!url || !token) {
    throw new CliError(
      url ? "no API token to call Shoal with" : "not logged in to a Shoal",
      "run `shoal login <url>` (or set SHOAL_URL and SHOAL_TOKEN)",
    );
  }
  // The organization chosen with `org switch` belongs to the saved login, not to another token.
  const own = token === saved.token && url === saved.url;
  return new Session(
    io,
    file,
    own ? saved : { ...saved, org: undefined },
    new ApiClient(url, token),
    opts.org,
  );
}
