import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config.js";
import { newApiTokenValue } from "../domain/accounts/api-token-auth.js";
import { bootstrapAdmin, type FirstAdminPorts, hasAdmin } from "../domain/accounts/first-admin.js";
import { ConflictError } from "../errors.js";
import type { Logger } from "../lib/logger.js";

/**
 * First start only: creates the administrator. A generated token is written to
 * `<data>/admin-token` (0600) before it is committed, so a crash can never leave an administrator
 * whose only token nobody has.
 */
export async function bootstrap(
  config: Config,
  deps: FirstAdminPorts & { log: Logger },
  announce: (text: string) => void,
): Promise<void> {
  if (await hasAdmin(deps)) {
    if (config.adminToken) deps.log.warn("SHOAL_ADMIN_TOKEN is only read on the first start; ignoring it");
    return;
  }
  const tokenFile = path.join(config.dataDir, "admin-token");
  const token = config.adminToken
    ? { id: (await newApiTokenValue(deps)).id, token: config.adminToken }
    : await newApiTokenValue(deps);
  if (!config.adminToken) await writeFile(tokenFile, `${token.token}\n`, { mode: 0o600 });
  let created: boolean;
  try {
    created = await bootstrapAdmin(deps, { username: config.adminUser, email: config.adminEmail, token });
  } catch (e) {
    // Several processes starting at once on an empty PostgreSQL store: another one created the
    // administrator between our check and our insert. That is a later start, not a failure.
    if (!(e instanceof ConflictError) || !(await hasAdmin(deps))) throw e;
    created = false;
  }
  if (!created) {
    if (!config.adminToken) await rm(tokenFile, { force: true });
    return;
  }
  deps.log.info({ username: config.adminUser }, "created the instance administrator");
  if (!config.adminToken) {
    announce(
      `\nShoal created the instance administrator "${config.adminUser}".\n` +
        `Its API token is shown once here and saved to ${tokenFile}:\n\n  ${token.token}\n\n`,
    );
  }
}
