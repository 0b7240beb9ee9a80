import type { Command } from "commander";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { permissionsOption, type TokenRule } from "../token-permissions.js";
import { confirm, remote } from "./context.js";

interface KeySet {
  jwks_name: string;
  jwks_url: string;
  issuer: string | null;
  audience: string | null;
}

/** The organization's key-set routes live under /v2, as Turso's. */
const jwksPath = async (s: Session, rest = "") =>
  `/v2/organizations/${encodeURIComponent(await s.org())}${rest}`;

/** `shoal org jwks`: the identity providers whose tokens open the organization's databases. */
export function registerOrgJwks(org: Command, io: Io): void {
  const jwks = org
    .command("jwks")
    .description("Identity providers whose signed tokens open the organization's databases (JWKS)");

  jwks
    .command("list")
    .description("List the trusted key sets")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<{ jwks: KeySet[] }>("GET", await jwksPath(s, "/jwks"));
        await emit(io.stdout, opts.json, r.jwks, () =>
          renderTable(
            ["name", "url", "issuer", "audience"],
            r.jwks.map((k) => [k.jwks_name, k.jwks_url, k.issuer ?? "-", k.audience ?? "-"]),
          ),
        );
      }),
    );

  jwksSaveCommand(jwks, io);

  jwks
    .command("remove")
    .description("Stop trusting a key set: tokens its keys signed stop working")
    .argument("<name>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await confirm(io, opts, `Stop trusting key set ${name}? Tokens it signed stop working.`);
        const r = await s.api.call("DELETE", await jwksPath(s, `/jwks/${encodeURIComponent(String(name))}`));
        await emit(io.stdout, opts.json, r, () => `Key set ${name} removed.\n`);
      }),
    );

  const template = jwks
    .command("template")
    .description("Print the claims a provider's tokens need to open a database or a group")
    .option("-d, --database <name>", "the database the tokens open")
    .option("-g, --group <name>", "the group whose databases the tokens open")
    .option("-s, --scope <scope>", "full-access or read-only", "full-access");
  permissionsOption(template).action(
    remote(io, async (s, _args, opts) => {
      const query = new URLSearchParams();
      if (opts.database) query.set("database", String(opts.database));
      if (opts.group) query.set("group", String(opts.group));
      query.set("scope", String(opts.scope));
      const rules = opts.permissions as TokenRule[] | undefined;
      if (rules) query.set("permissions", JSON.stringify(rules));
      const r = await s.api.call<{ template: Record<string, unknown> }>(
        "GET",
        await jwksPath(s, `/jwks-template?${query}`),
      );
      // The claims as JSON either way: they are pasted into the provider's token template.
      io.stdout.write(`${JSON.stringify(r.template, null, opts.json ? 0 : 2)}\n`);
    }),
  );
}

function jwksSaveCommand(jwks: Command, io: Io): void {
  jwks
    .command("save")
    .description("Trust a provider's key set (replaces the set of the same name); the URL is fetched first")
    .argument("<name>", "a name for it in the organization, such as clerk")
    .argument("<url>", "where the provider publishes its keys, such as https://<app>/.well-known/jwks.json")
    .option("--issuer <iss>", "refuse tokens whose iss claim is anything else (recommended)")
    .option(
      "--audience <aud>",
      "refuse tokens whose aud claim lacks this; needed for tokens naming no database",
    )
    .action(
      remote(io, async (s, [name, url], opts) => {
        const r = await s.api.call<{ jwks: KeySet }>(
          "PUT",
          await jwksPath(s, `/jwks/${encodeURIComponent(String(name))}`),
          { body: { jwks_url: url, issuer: opts.issuer, audience: opts.audience } },
        );
        const slug = await s.org();
        // A provider that signs for other applications with the same keys needs one (see the guide).
        if (!opts.issuer && !opts.audience)
          io.stderr.write(
            "Warning: no --issuer or --audience: tokens from any application this provider signs for are accepted if they name one of your databases.\n",
          );
        await emit(io.stdout, opts.json, r.jwks, () => `Organization ${slug} now trusts key set ${name}.\n`);
      }),
    );
}
