import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliHarness } from "../helpers/cli.js";
import { PtySession } from "../helpers/pty.js";

let h: CliHarness;

beforeAll(async () => {
  // Short-lived idle streams, so the shell's handling of them can be seen.
  h = await CliHarness.start({ SHOAL_STREAM_IDLE_TIMEOUT_MS: "1000" });
  await h.ok(["db", "create", "notes"]);
  await h.ok([
    "db",
    "shell",
    "notes",
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, score REAL, raw BLOB)",
  ]);
  await h.ok([
    "db",
    "shell",
    "notes",
    "INSERT INTO notes (body, score, raw) VALUES ('hello', 1.5, x'00ff'), ('wörld, \"quoted\"', NULL, NULL);",
  ]);
});
afterAll(() => h?.close());

describe("db shell with SQL on the command line", () => {
  it("prints a table of the rows", async () => {
    expect(await h.ok(["db", "shell", "notes", "SELECT id, body, score, raw FROM notes ORDER BY id"])).toBe(
      [
        "id  body             score  raw",
        "--  ---------------  -----  -------",
        "1   hello            1.5    X'00FF'",
        '2   wörld, "quoted"  NULL   NULL',
        "",
      ].join("\n"),
    );
  });

  it("prints JSON with --json and CSV with --mode csv", async () => {
    expect(
      await h.json(["db", "shell", "notes", "SELECT id, body, score, raw FROM notes ORDER BY id"]),
    ).toEqual([
      { id: 1, body: "hello", score: 1.5, raw: "AP8=" },
      { id: 2, body: 'wörld, "quoted"', score: null, raw: null },
    ]);
    expect(
      await h.ok(["db", "shell", "notes", "SELECT id, body FROM notes ORDER BY id", "--mode", "csv"]),
    ).toBe('id,body\r\n1,hello\r\n2,"wörld, ""quoted"""\r\n');
    expect(await h.fails(["db", "shell", "notes", "SELECT 1", "--mode", "xml"])).toContain(
      "unknown mode xml",
    );
  });

  it("keeps integers beyond 2^53 exact in JSON", async () => {
    expect(await h.json(["db", "shell", "notes", "SELECT 9007199254740993 AS big, 42 AS small"])).toEqual([
      { big: "9007199254740993", small: 42 },
    ]);
  });

  it("fails with exit code 1, naming the statement's line and the database's error code", async () => {
    const err = await h.fails(["db", "shell", "notes", "SELECT 1;\nSELECT * FROM missing"]);
    expect(err).toBe("shoal: line 2: SQL input error: no such table: missing (SQL_INPUT_ERROR)\n");
  });
});

describe("db shell from a pipe or a file", () => {
  const script = [
    "-- a script: statements over several lines, a trigger with semicolons inside, dot-commands",
    "CREATE TABLE log (msg TEXT);",
    "CREATE TRIGGER notes_log AFTER INSERT ON notes BEGIN",
    "  INSERT INTO log VALUES ('added; ' || NEW.body);",
    "END;",
    "INSERT INTO notes (body) VALUES ('from",
    "the pipe');",
    ".tables",
    ".mode json",
    "SELECT msg FROM log;",
    ".mode csv",
    "SELECT count(*) AS n FROM notes",
  ].join("\n");

  it("runs statements and dot-commands piped in, in order", async () => {
    const out = await h.ok(["db", "shell", "notes"], { input: script });
    expect(out).toBe(
      `log\nnotes\n${JSON.stringify([{ msg: "added; from\nthe pipe" }], null, 2)}\nn\r\n3\r\n`,
    );
  });

  it("runs the same from --file, and .schema and .dump show the result", async () => {
    const file = path.join(h.home, "more.sql");
    writeFileSync(file, "INSERT INTO notes (body) VALUES ('from a file');\n.schema log\n");
    expect(await h.ok(["db", "shell", "notes", "--file", file])).toBe("CREATE TABLE log (msg TEXT);\n");
    const dump = await h.ok(["db", "shell", "notes"], { input: ".dump\n" });
    expect(dump).toContain("CREATE TRIGGER notes_log AFTER INSERT ON notes BEGIN");
    expect(dump).toContain("INSERT INTO \"log\" VALUES('added; from a file');");
    expect(await h.fails(["db", "shell", "notes", "--file", path.join(h.home, "absent.sql")])).toContain(
      "cannot read",
    );
  });

  it("reads a file with .read, lists indexes with .indexes, and leaves out column names with .headers off", async () => {
    const inner = path.join(h.home, "inner.sql");
    writeFileSync(
      inner,
      "CREATE INDEX IF NOT EXISTS log_msg ON log (msg);\nSELECT count(*) AS n FROM log;\n",
    );
    const out = await h.ok(["db", "shell", "notes"], {
      input: `.read ${inner}\n.indexes\n.indexes log\n.indexes notes\n.headers off\nSELECT 'x' AS col;\n.mode csv\nSELECT 1 AS a;\n`,
    });
    expect(out).toMatch(/^n\n-+\n\d+\nlog_msg\nlog_msg\nx\n1\r\n$/);
    // A failure inside the file names the file and its line, and stops there.
    const broken = path.join(h.home, "broken.sql");
    writeFileSync(broken, "SELECT 1;\nSELECT * FROM nowhere;\nSELECT 2;\n");
    const err = await h.fails(["db", "shell", "notes"], { input: `.read ${broken}\nSELECT 3;\n` });
    expect(err).toContain(`${broken}, line 2: SQL input error: no such table: nowhere`);
    expect(await h.fails(["db", "shell", "notes"], { input: ".read\n" })).toContain(".read needs a file");
    expect(await h.fails(["db", "shell", "notes"], { input: ".headers maybe\n" })).toContain(
      ".headers takes on or off",
    );
    // A file that reads itself stops instead of running forever.
    const loop = path.join(h.home, "loop.sql");
    writeFileSync(loop, `.read ${loop}\n`);
    expect(await h.fails(["db", "shell", "notes"], { input: `.read ${loop}\n` })).toContain(
      "nests more than",
    );
  });

  it("runs on a database given by its URL and token, without logging in", async () => {
    const url = (await h.ok(["db", "show", "notes", "--url"])).trim();
    const token = (await h.ok(["db", "tokens", "create", "notes"])).trim();
    // No config file, no API token: only the URL and the database token.
    const bare = { SHOAL_CONFIG: path.join(h.home, "absent-config.json"), SHOAL_TOKEN: "" };
    const q = "SELECT count(*) AS n FROM notes";
    const counted = await h.json(["db", "shell", `${url}?authToken=${token}`, q], { env: bare });
    expect(counted).toEqual([{ n: expect.any(Number) }]);
    expect(await h.json(["db", "shell", url, q, "--auth-token", token], { env: bare })).toEqual(counted);
    expect(
      await h.json(["db", "shell", url.replace(/\/$/, ""), q], { env: { ...bare, SHOAL_DB_TOKEN: token } }),
    ).toEqual(counted);
    // ws:// is the same server's HTTP.
    expect(
      await h.json(["db", "shell", url.replace("http://", "ws://"), q, "--auth-token", token], { env: bare }),
    ).toEqual(counted);
    expect(await h.fails(["db", "shell", url, q], { env: bare })).toContain("no token for");
    expect(await h.fails(["db", "shell", url, q, "--auth-token", "not-a-token"], { env: bare })).toContain(
      "401",
    );
  });

  it("stops at the first error and rolls back the script's open transaction", async () => {
    const err = await h.fails(["db", "shell", "notes"], {
      input: "BEGIN;\nINSERT INTO log VALUES ('lost');\nINSERT INTO nowhere VALUES (1);\nCOMMIT;\n",
    });
    expect(err).toContain("line 3: SQL input error: no such table: nowhere");
    const left = await h.json(["db", "shell", "notes", "SELECT count(*) AS n FROM log WHERE msg = 'lost'"]);
    expect(left).toEqual([{ n: 0 }]);
    expect(await h.fails(["db", "shell", "notes"], { input: ".frobnicate\n" })).toContain(
      "line 1: unknown command .frobnicate",
    );
  });
});

describe("db shell on a terminal", () => {
  it("prompts, continues unfinished statements, recalls history, and keeps it across sessions", async () => {
    const env = h.env({ TERM: "xterm" });
    const pty = new PtySession(h.commandLine(["db", "shell", "notes"]), env);
    try {
      let at = await pty.waitFor("notes> ");
      pty.type("SELECT 40 +\r");
      at = await pty.waitFor("...> ", at);
      pty.type("2 AS answer;\r");
      at = await pty.waitFor(/answer\n-+\n42\nnotes> /, at);
      pty.type("SELECT 7 AS seven;\r");
      at = await pty.waitFor(/seven\n-+\n7\nnotes> /, at);
      pty.type(".mode json\r");
      at = await pty.waitFor(".mode json\nnotes> ", at);
      // Up arrow twice brings back the SELECT, which now answers in JSON.
      pty.type("\u001b[A");
      at = await pty.waitFor(".mode json", at);
      pty.type("\u001b[A");
      at = await pty.waitFor("SELECT 7 AS seven;", at);
      pty.type("\r");
      at = await pty.waitFor('"seven": 7', at);
      pty.type("SELECT nope;\r");
      at = await pty.waitFor("Error: SQL input error: no such column: nope", at);
      at = await pty.waitFor("notes> ", at);
      pty.type(".quit\r");
      expect(await pty.exited).toBe(0);
    } finally {
      pty.kill();
    }
    const history = path.join(h.home, ".config", "shoal", "history");
    expect(readFileSync(history, "utf8").split("\n").slice(0, 6)).toEqual([
      ".quit",
      "SELECT nope;",
      "SELECT 7 AS seven;",
      ".mode json",
      "2 AS answer;",
      "SELECT 40 +",
    ]);
    expect(statSync(history).mode & 0o777).toBe(0o600);

    // A second session starts with that history: one up arrow gives the last line typed.
    const again = new PtySession(h.commandLine(["db", "shell", "notes"]), env);
    try {
      let at = await again.waitFor("notes> ");
      again.type("SELECT 'typed' AS first;\r");
      at = await again.waitFor(/first\n-+\ntyped\nnotes> /, at);
      again.type("\u001b[A");
      at = await again.waitFor("SELECT 'typed' AS first;", at);
      again.type("\u001b[A");
      await again.waitFor(".quit", at);
      again.type("\r");
      expect(await again.exited).toBe(0);
    } finally {
      again.kill();
    }
  });

  it("drops an unfinished statement on Ctrl-C and leaves on Ctrl-D", async () => {
    const pty = new PtySession(h.commandLine(["db", "shell", "notes"]), h.env({ TERM: "xterm" }));
    try {
      let at = await pty.waitFor("notes> ");
      pty.type("SELECT 'never run'\r");
      at = await pty.waitFor("...> ", at);
      pty.type("\u0003");
      at = await pty.waitFor("notes> ", at);
      pty.type("SELECT 'ran' AS r;\r");
      at = await pty.waitFor(/r\n-+\nran\n/, at);
      pty.type("\u0004");
      expect(await pty.exited).toBe(0);
      expect(pty.text).not.toContain("never run\n");
      // Leaving with Ctrl-D ends the prompt's line, so the terminal's own prompt starts afresh.
      expect(pty.text.slice(at)).toMatch(/notes> \n$/);
    } finally {
      pty.kill();
    }
  });

  it("carries on after the server closes an idle stream, and says so when that lost a transaction", async () => {
    const idle = () => new Promise((r) => setTimeout(r, 1500));
    const pty = new PtySession(h.commandLine(["db", "shell", "notes"]), h.env({ TERM: "xterm" }));
    try {
      let at = await pty.waitFor("notes> ");
      pty.type("SELECT 1 AS a;\r");
      at = await pty.waitFor(/a\n-\n1\nnotes> /, at);
      await idle();
      pty.type("SELECT 2 AS b;\r");
      at = await pty.waitFor(/b\n-\n2\nnotes> /, at);
      pty.type("BEGIN;\r");
      at = await pty.waitFor("notes> ", at);
      await idle();
      pty.type("SELECT 3;\r");
      at = await pty.waitFor("Error: the transaction was idle too long: the server rolled it back", at);
      at = await pty.waitFor("notes> ", at);
      pty.type("SELECT 4 AS d;\r");
      at = await pty.waitFor(/d\n-\n4\nnotes> /, at);
      pty.type(".quit\r");
      expect(await pty.exited).toBe(0);
    } finally {
      pty.kill();
    }
  });
});
