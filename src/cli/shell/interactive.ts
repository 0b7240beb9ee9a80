import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { CliError } from "../errors.js";
import { type Io, write } from "../io.js";
import { Feeder } from "./feeder.js";
import type { Shell } from "./runner.js";

const HISTORY_SIZE = 1000;

async function loadHistory(file: string): Promise<string[]> {
  try {
    return (await readFile(file, "utf8"))
      .split("\n")
      .filter((l) => l.length > 0)
      .slice(0, HISTORY_SIZE);
  } catch {
    return [];
  }
}

/** History is kept newest first, one line each, readable only by the user (SQL can hold secrets). */
async function saveHistory(file: string, lines: string[]): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, `${lines.join("\n")}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
  } catch {
    // A history that can't be saved must not break the shell.
  }
}

/** Prints an error the user can fix and carries on, as a shell does. */
async function report(io: Io, e: unknown): Promise<void> {
  if (!(e instanceof CliError)) throw e;
  await write(io.stderr, `Error: ${e.message}\n${e.hint ? `  ${e.hint}\n` : ""}`);
}

/**
 * The shell on a terminal: line editing and history (arrow keys, saved across sessions), a
 * continuation prompt while a statement is unfinished, Ctrl-C to drop it, Ctrl-D or `.quit` to leave.
 */
export async function interactive(shell: Shell, io: Io, historyFile: string): Promise<void> {
  const prompt = `${shell.db.name}> `;
  const rl = createInterface({
    input: io.stdin,
    output: io.stdout,
    terminal: true,
    history: await loadHistory(historyFile),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    prompt,
  });
  // Saves run one after the other, and the shell waits for the last before it leaves.
  let saving = Promise.resolve();
  rl.on("history", (lines: string[]) => {
    const snapshot = [...lines];
    saving = saving.then(() => saveHistory(historyFile, snapshot));
  });
  const feeder = new Feeder();
  rl.on("SIGINT", () => {
    feeder.clear();
    rl.write("\n");
    rl.setPrompt(prompt);
    rl.prompt();
  });
  await write(
    io.stdout,
    `Connected to ${shell.db.name} at ${shell.db.url}\nEnter SQL ending with ";", .help for commands, .quit or Ctrl-D to leave.\n`,
  );
  rl.prompt();
  for await (const line of rl) {
    for (const item of feeder.push(line)) {
      try {
        await shell.run(item);
      } catch (e) {
        await report(io, e);
      }
      if (shell.quit) break;
    }
    if (shell.quit) break;
    rl.setPrompt(feeder.pending ? "...> ".padStart(prompt.length) : prompt);
    rl.prompt();
  }
  // Left with Ctrl-D, the cursor is still after the prompt: end that line, so the terminal's own
  // prompt starts on a line of its own.
  if (!shell.quit) await write(io.stdout, "\n");
  rl.close();
  await saving;
}
