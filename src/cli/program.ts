import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { registerAdmin } from "./commands/admin.js";
import type { CopyStore } from "./commands/admin-store.js";
import { registerAuth } from "./commands/auth.js";
import { registerDb } from "./commands/db.js";
import { registerGroup } from "./commands/group.js";
import { registerImport } from "./commands/import.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerOrg } from "./commands/org.js";
import { registerShell } from "./commands/shell.js";
import { registerTokens } from "./commands/tokens.js";
import { registerTransfer } from "./commands/transfer.js";
import { type CompletionShell, completionScript, SHELLS } from "./completion.js";
import { CliError, inShoalTerms, messageOf } from "./errors.js";
import { type Io, write } from "./io.js";

/** The package's version, read from its package.json (two folders up from src/cli or dist/cli). */
function version(): string {
  const pkg = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

/** What `shoal start` runs: the server's own entry point, loaded only when asked for. */
export type StartServer = (args: string[]) => Promise<void>;

/** The whole command tree. */
export function buildProgram(io: Io, startServer: StartServer, copyStore?: CopyStore): Command {
  const program = new Command("shoal")
    .description("Shoal: self-hosted libSQL databases with a Turso-compatible API")
    .version(version(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help for the command")
    .addOption(
      new Option(
        "--config <file>",
        "the config file (default: $SHOAL_CONFIG, else ~/.config/shoal/config.json)",
      ),
    )
    .addOption(
      new Option(
        "--org <slug>",
        "the organization to act on (default: $SHOAL_ORG, else `shoal org switch`'s)",
      ),
    )
    .addOption(new Option("--json", "print JSON for scripts instead of tables"))
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError(true)
    .showHelpAfterError("(run shoal --help for usage)")
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();

  program
    .command("start")
    .description(
      "Run the Shoal server in the foreground (settings are SHOAL_* environment variables; see the README)",
    )
    // The server reads its own arguments: `--help` lists every setting, and an option such as
    // `--port 9000` is refused with the environment variable meant (SHOAL_PORT=9000).
    .helpOption(false)
    .allowUnknownOption()
    .argument("[arguments...]")
    .action((args: string[]) =>
      startServer(args).catch((e: unknown) => {
        throw new CliError(`failed to start: ${messageOf(e)}`);
      }),
    );

  registerAuth(program, io);
  registerOrg(program, io);
  registerGroup(program, io);
  const db = registerDb(program, io);
  registerInspect(program, db, io);
  registerShell(db, io);
  registerTransfer(db, io);
  registerImport(db, io);
  registerMigrate(db, io);
  registerTokens(program, io);
  registerAdmin(program, io, copyStore);

  program
    .command("completion")
    .description("Print a shell completion script, e.g. `source <(shoal completion bash)`")
    .addArgument(new Command().createArgument("<shell>", SHELLS.join(", ")).choices(SHELLS))
    .action(async (shell: CompletionShell) => write(io.stdout, completionScript(program, shell)));

  // Every command exits through exitOverride, and shows its help after a usage error.
  const inherit = (cmd: Command) => {
    for (const c of cmd.commands) {
      c.exitOverride().showSuggestionAfterError(true).showHelpAfterError("(run with --help for usage)");
      inherit(c);
    }
  };
  inherit(program);
  return program;
}

/** Runs one command line; answers the exit code (0, or 1 for any failure, usage errors included). */
export async function runCli(
  argv: string[],
  io: Io,
  startServer: StartServer,
  copyStore?: CopyStore,
): Promise<number> {
  const program = buildProgram(io, startServer, copyStore);
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version end in an "error" too; usage errors were already printed.
      return e.exitCode === 0 ? 0 : 1;
    }
    if (e instanceof CliError) {
      const hint = e.hint ? `  ${inShoalTerms(e.hint)}\n` : "";
      await write(io.stderr, `shoal: ${inShoalTerms(e.message)}\n${hint}`);
      return e.exitCode;
    }
    await write(io.stderr, `shoal: unexpected failure: ${messageOf(e)}\n`);
    return 1;
  }
}
