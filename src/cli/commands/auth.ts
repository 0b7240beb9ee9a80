import type { Command } from "commander";
import { ApiClient } from "../api-client.js";
import { writeConfig } from "../config-file.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { readSecret } from "../prompt.js";
import { loadConfig } from "../session.js";
import { local, remote } from "./context.js";

/** A base URL as typed (`localhost:8080`, `https://shoal.example/`) in the form the API client wants. */
export function normalizeUrl(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new CliError(
      `${raw} is not a URL`,
      "give Shoal's address, e.g. `shoal login http://127.0.0.1:8080`",
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new CliError(`${raw} is not an http:// or https:// URL`);
  }
  return u.toString().replace(/\/+$/, "");
}

export function registerAuth(program: Command, io: Io): void {
  program
    .command("login")
    .description("Save Shoal's URL and an API token in the config file (checked before saving)")
    .argument("<url>", "Shoal's address, e.g. http://127.0.0.1:8080")
    .option("--token <token>", "the API token (default: asked for, or read from standard input)")
    .action(
      local(async ([rawUrl], opts) => {
        const url = normalizeUrl(rawUrl as string);
        const token = (opts.token as string | undefined) || (await readSecret(io, "API token: "));
        if (!token)
          throw new CliError("no API token given", "pass --token <API token>, or type it when asked");
        const me = await new ApiClient(url, token).call<{ user: { username: string } }>(
          "GET",
          "/v1/current-user",
          {
            hints: {
              401: "this API token is not valid on this Shoal: check it, or create one with `shoal tokens create`",
            },
          },
        );
        const { file, saved } = await loadConfig(io, opts);
        // The organization chosen before belongs to the old server or user.
        const org = saved.url === url && saved.token === token ? saved.org : undefined;
        await writeConfig(file, { url, token, ...(org ? { org } : {}) });
        await emit(
          io.stdout,
          opts.json,
          { url, username: me.user.username, config: file },
          () => `Logged in to ${url} as ${me.user.username}. The token is saved in ${file}.\n`,
        );
      }),
    );

  program
    .command("logout")
    .description(
      "Remove the API token from the config file (the token itself stays valid: revoke it with `shoal tokens revoke`)",
    )
    .action(
      local(async (_args, opts) => {
        const { file, saved } = await loadConfig(io, opts);
        const had = saved.token !== undefined;
        if (had) await writeConfig(file, saved.url ? { url: saved.url } : {});
        await emit(io.stdout, opts.json, { config: file, removed: had }, () =>
          had
            ? `Logged out: the API token was removed from ${file}.\n`
            : "Not logged in: nothing to remove.\n",
        );
      }),
    );

  program
    .command("whoami")
    .description("Show the URL, user and organization the commands use")
    .action(
      remote(io, async (s, _args, opts) => {
        const me = await s.api.call<{ user: { username: string; email: string; admin?: boolean } }>(
          "GET",
          "/v1/current-user",
        );
        const info = {
          url: s.api.baseUrl,
          username: me.user.username,
          org: await s.org(),
          admin: me.user.admin === true,
        };
        await emit(io.stdout, opts.json, info, () =>
          renderTable(
            ["url", "user", "org", "admin"],
            [[info.url, info.username, info.org, info.admin ? "yes" : "no"]],
          ),
        );
      }),
    );
}
