import type { DatabaseAccess } from "../database.js";
import { CliError } from "../errors.js";
import { HranaStream, type SqlError, type StatementResult } from "../hrana.js";
import { type Output, write } from "../io.js";
import { runDotCommand } from "./dot-commands.js";
import type { Item } from "./feeder.js";
import { formatResult, type Mode } from "./format.js";

/** Statements sent in one request when running a script (each still runs, and fails, on its own). */
const BATCH_STATEMENTS = 200;
const BATCH_CHARS = 1 << 20;

/** A failed statement in a script, with where it was. */
export class ScriptError extends CliError {
  constructor(line: number, error: SqlError | CliError) {
    super(`line ${line}: ${error.message}`, error.hint);
  }
}

/** What the shell holds between inputs: the database's stream and the output mode. */
export class Shell {
  readonly stream: HranaStream;
  mode: Mode;
  headers = true;
  quit = false;

  constructor(
    readonly db: DatabaseAccess,
    readonly out: Output,
    mode: Mode,
  ) {
    this.stream = new HranaStream(db.url, db.token);
    this.mode = mode;
  }

  async print(r: StatementResult): Promise<void> {
    const text = formatResult(r, this.mode, this.headers);
    if (text) await write(this.out, text);
  }

  /** Runs one item (typed in the shell); errors are thrown to the caller. */
  async run(item: Item): Promise<void> {
    if (item.kind === "dot") await runDotCommand(this, item.text);
    else await this.print(await this.stream.execute(item.sql));
  }

  /**
   * Runs a script's items in order, statements in batches; stops at the first failure with a
   * ScriptError naming its line. A transaction the script left open is rolled back by closing.
   */
  async runScript(items: AsyncIterable<Item> | Iterable<Item>): Promise<void> {
    let batch: Extract<Item, { kind: "sql" }>[] = [];
    let chars = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const sent = batch;
      batch = [];
      chars = 0;
      const outcome = await this.stream.batch(sent.map((s) => s.sql));
      for (const r of outcome.results) if (r) await this.print(r);
      if (outcome.failed) throw new ScriptError(sent[outcome.failed.step]!.line, outcome.failed.error);
    };
    for await (const item of items) {
      if (this.quit) break;
      if (item.kind === "dot") {
        await flush();
        try {
          await runDotCommand(this, item.text);
        } catch (e) {
          if (e instanceof CliError) throw new ScriptError(item.line, e);
          throw e;
        }
        continue;
      }
      batch.push(item);
      chars += item.sql.length;
      if (batch.length >= BATCH_STATEMENTS || chars >= BATCH_CHARS) await flush();
    }
    await flush();
  }

  async close(): Promise<void> {
    await this.stream.close();
  }
}
