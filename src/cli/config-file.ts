import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { CliError } from "./errors.js";
import type { Env } from "./io.js";

/** What `shoal login` keeps: where Shoal is, the API token, and the organization chosen last. */
export interface SavedConfig {
  url?: string;
  token?: string;
  org?: string;
}

/**
 * The config file: `--config`, else `SHOAL_CONFIG`, else `shoal/config.json` in the user's config
 * folder (`XDG_CONFIG_HOME`, by default `~/.config`).
 */
export function configPath(env: Env, flag?: string): string {
  if (flag) return path.resolve(flag);
  if (env.SHOAL_CONFIG) return path.resolve(env.SHOAL_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), ".config");
  return path.join(base, "shoal", "config.json");
}

export async function readConfig(file: string): Promise<SavedConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    const { url, token, org } = parsed as Record<string, unknown>;
    return {
      ...(typeof url === "string" ? { url } : {}),
      ...(typeof token === "string" ? { token } : {}),
      ...(typeof org === "string" ? { org } : {}),
    };
  } catch {
    throw new CliError(
      `${file} is not a valid Shoal config file`,
      "delete it and run `shoal login <url>` again",
    );
  }
}

/**
 * Saves the config with mode 0600 (it holds an API token), replacing the file in one step so that
 * a crash never leaves half of one.
 */
export async function writeConfig(file: string, config: SavedConfig): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw new CliError(`cannot write ${file}: ${(e as Error).message}`);
  }
}

/** Where the SQL shell keeps its history: beside the config file. */
export function historyPath(configFile: string): string {
  return path.join(path.dirname(configFile), "history");
}
