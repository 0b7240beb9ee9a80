import type { Command } from "commander";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { confirm, remote } from "./context.js";

interface ApiToken {
  name: string;
  id: string;
  created_at?: string;
}

export function registerTokens(program: Command, io: Io): void {
  const tokens = program.command("tokens").description("Your API tokens (for the API and this CLI)");

  tokens
    .command("list")
    .description("List your API tokens (names and ids; a token's value is shown only when it is created)")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<{ tokens: ApiToken[] }>("GET", "/v1/auth/api-tokens");
        await emit(io.stdout, opts.json, r.tokens, () =>
          renderTable(
            ["name", "id", "created"],
            r.tokens.map((t) => [t.name, t.id, t.created_at]),
          ),
        );
      }),
    );

  tokens
    .command("create")
    .description("Create an API token; its value is shown once")
    .argument("<name>", "a name to tell it by")
    .action(
      remote(io, async (s, [name], opts) => {
        const r = await s.api.call<{ name: string; id: string; token: string }>(
          "POST",
          `/v1/auth/api-tokens/${encodeURIComponent(String(name))}`,
          { hints: { 409: "a token of yours already has that name: choose another, or revoke it first" } },
        );
        await emit(
          io.stdout,
          opts.json,
          r,
          () => `Created API token ${r.name}. Keep it now: it is not shown again.\n\n  ${r.token}\n\n`,
        );
      }),
    );

  tokens
    .command("revoke")
    .description("Revoke an API token: it is refused from its next request")
    .argument("<name>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await confirm(io, opts, `Revoke API token ${name}?`);
        const r = await s.api.call("DELETE", `/v1/auth/api-tokens/${encodeURIComponent(String(name))}`, {
          hints: { 404: "see your tokens with `shoal tokens list`" },
        });
        await emit(io.stdout, opts.json, r, () => `Revoked API token ${name}.\n`);
      }),
    );
}
