import type { Command } from "commander";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { type GlobalOptions, openSession, type Session } from "../session.js";

export type Options = GlobalOptions & Record<string, unknown>;

/** Splits commander's action arguments into positional ones and the options (globals included). */
function parts(params: unknown[]): { args: unknown[]; opts: Options } {
  const cmd = params[params.length - 1] as Command;
  return { args: params.slice(0, -2), opts: cmd.optsWithGlobals<Options>() };
}

/** An action that needs no connection to Shoal. */
export function local(fn: (args: unknown[], opts: Options) => Promise<void>) {
  return (...params: unknown[]) => {
    const { args, opts } = parts(params);
    return fn(args, opts);
  };
}

/** An action that calls Shoal as the logged-in user. */
export function remote(io: Io, fn: (s: Session, args: unknown[], opts: Options) => Promise<void>) {
  return async (...params: unknown[]) => {
    const { args, opts } = parts(params);
    return fn(await openSession(io, opts), args, opts);
  };
}

/**
 * Asks before something that can't be undone. `--yes` skips the question; without a terminal to
 * ask on, the command refuses rather than guess.
 */
export async function confirm(io: Io, opts: Options, question: string): Promise<void> {
  if (opts.yes) return;
  if (!io.stdin.isTTY) {
    throw new CliError(`${question}: not confirmed`, "add --yes to confirm without a terminal");
  }
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("cancelled", undefined);
  } finally {
    rl.close();
  }
}

/** Commander's option parser for positive whole numbers. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${value} is not a positive whole number`);
  return n;
}
