import type { StoreAccess } from "../core/ports.js";
import { insertAccount, insertApiToken } from "./account-tx.js";
import type { AccountPorts } from "./ports.js";

/** What making the first administrator reaches. */
export type FirstAdminPorts = Pick<AccountPorts, "store" | "clock" | "apiTokenKey">;

/**
 * First start: when the store has no administrator, creates one with a personal organization and
 * the given API token. Returns false when an administrator already exists (later starts, or another
 * process that bootstrapped first); then nothing changes.
 */
export async function bootstrapAdmin(
  deps: FirstAdminPorts,
  input: { username: string; email: string; token: { id: string; token: string } },
): Promise<boolean> {
  return deps.store.write(async (r) => {
    // Nodes starting at once with different SHOAL_ADMIN_USER values would each see no
    // administrator and make one: the first start takes a lock the others wait for.
    await r.users.lockBootstrap();
    if ((await r.users.countAdmins()) > 0) return false;
    const { user } = await insertAccount(r, deps, {
      username: input.username,
      email: input.email,
      isAdmin: true,
    });
    await insertApiToken(r, deps, user.id, "bootstrap", input.token);
    return true;
  });
}

/** Whether the instance already has an administrator (i.e. this is not a first start). */
export async function hasAdmin(deps: { store: StoreAccess }): Promise<boolean> {
  return (await deps.store.read((r) => r.users.countAdmins())) > 0;
}
