import type { Command } from "commander";
import { notFoundHint } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { confirm, type Options, remote } from "./context.js";

/** A database's settings as `GET .../configuration` answers them. */
interface Configuration {
  size_limit: string;
  allow_attach: boolean;
  block_reads: boolean;
  block_writes: boolean;
  delete_protection: boolean;
  allowed_ips: string[];
}

/** `on`/`off` (and the usual spellings of each) as a boolean. */
function onOff(value: string): boolean {
  if (/^(on|true|yes|1|enable|enabled)$/i.test(value)) return true;
  if (/^(off|false|no|0|disable|disabled)$/i.test(value)) return false;
  throw new CliError(`${value} is neither on nor off`);
}

/** A comma-separated list of addresses; `none` (or an empty string) clears it. */
function addressList(value: string): string[] {
  const v = value.trim();
  if (v === "" || v === "none") return [];
  return v.split(",").map((a) => a.trim());
}

const FLAGS: ReadonlyArray<[keyof Configuration, string]> = [
  ["size_limit", "size limit"],
  ["block_reads", "block reads"],
  ["block_writes", "block writes"],
  ["delete_protection", "delete protection"],
  ["allow_attach", "allow attach"],
  ["allowed_ips", "allowed IPs"],
];

function configRows(c: Configuration): string[][] {
  return FLAGS.map(([key, label]) => {
    const v = c[key];
    const shown = Array.isArray(v) ? (v.length > 0 ? v.join(", ") : "every address") : v;
    return [label, typeof shown === "boolean" ? (shown ? "on" : "off") : shown === "0" ? "no limit" : shown];
  });
}

export function registerDbConfig(db: Command, tokens: Command, io: Io): void {
  dbConfigCommand(db, io);
  dbLocationsCommand(db, io);
  tokensInvalidateCommand(tokens, io);
}

function dbConfigCommand(db: Command, io: Io): void {
  db.command("config")
    .description("Show a database's settings, or change the ones given (the rest stay as they are)")
    .argument("<name>")
    .option("--size-limit <size>", "largest size, bytes or a unit such as 256mb; 0 for no limit")
    .option("--block-reads <on|off>", "refuse every statement with BLOCKED", onOff)
    .option("--block-writes <on|off>", "refuse writes with BLOCKED (reads still work)", onOff)
    .option("--delete-protection <on|off>", "refuse to delete the database", onOff)
    .option("--allow-attach <on|off>", "let other databases' tokens ATTACH this one", onOff)
    .option(
      "--allowed-ips <list>",
      "comma-separated addresses or CIDR blocks; `none` serves every address",
      addressList,
    )
    .action(
      remote(io, async (s, [name], opts) => {
        const path = await s.orgPath(`/databases/${encodeURIComponent(String(name))}/configuration`);
        const body: Record<string, unknown> = {};
        if (opts.sizeLimit !== undefined) body.size_limit = opts.sizeLimit;
        if (opts.blockReads !== undefined) body.block_reads = opts.blockReads;
        if (opts.blockWrites !== undefined) body.block_writes = opts.blockWrites;
        if (opts.deleteProtection !== undefined) body.delete_protection = opts.deleteProtection;
        if (opts.allowAttach !== undefined) body.allow_attach = opts.allowAttach;
        if (opts.allowedIps !== undefined) body.allowed_ips = opts.allowedIps;
        const hints = notFoundHint(await s.org());
        const config =
          Object.keys(body).length > 0
            ? await s.api.call<Configuration>("PATCH", path, { body, hints })
            : await s.api.call<Configuration>("GET", path, { hints });
        await emit(io.stdout, opts.json, config, () => renderTable(["setting", "value"], configRows(config)));
      }),
    );
}

function dbLocationsCommand(db: Command, io: Io): void {
  db.command("locations")
    .description("List the location codes this Shoal serves (what --location and group locations take)")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<{ locations: Record<string, string> }>("GET", "/v1/locations");
        const rows = Object.entries(r.locations).map(([code, description]) => [code, description]);
        await emit(io.stdout, opts.json, r.locations, () => renderTable(["code", "location"], rows));
      }),
    );
}

/**
 * Rotates the keys of a database's or a group's tokens (`what`: "database x", "group y"): every
 * token minted for it so far stops working. `mint` is the command that makes new ones.
 */
export async function invalidateTokens(
  s: Session,
  io: Io,
  opts: Options,
  target: { what: string; path: string; mint: string; hints: Partial<Record<number, string>> },
): Promise<void> {
  await confirm(io, opts, `Invalidate every token of ${target.what}? Clients using them will be refused`);
  await s.api.call("POST", target.path, { hints: target.hints });
  await emit(
    io.stdout,
    opts.json,
    { invalidated: target.what },
    () => `Invalidated every token of ${target.what}. Mint new ones with \`${target.mint}\`.\n`,
  );
}

function tokensInvalidateCommand(tokens: Command, io: Io): void {
  tokens
    .command("invalidate")
    .description("Invalidate every token of a database (its group's tokens stay valid)")
    .argument("<name>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await invalidateTokens(s, io, opts, {
          what: `database ${name}`,
          path: await s.orgPath(`/databases/${encodeURIComponent(String(name))}/auth/rotate`),
          mint: `shoal db tokens create ${name}`,
          hints: notFoundHint(await s.org()),
        });
      }),
    );
}
