import { execFileSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { CLI_ADMIN_TOKEN, CliHarness } from "../helpers/cli.js";

let h: CliHarness;

beforeAll(async () => {
  h = await CliHarness.start();
});
afterAll(() => h?.close());

function allCommands(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...allCommands(c, [...prefix, c.name()])]);
}

describe("the shoal command", () => {
  it("prints its version and its help", async () => {
    const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8"));
    expect((await h.ok(["--version"])).trim()).toBe(pkg.version);
    const help = await h.ok(["--help"]);
    for (const c of ["start", "login", "logout", "org", "group", "db", "tokens", "admin", "completion"]) {
      expect(help).toMatch(new RegExp(`^  ${c}\\b`, "m"));
    }
  });

  it("has a description and a --help on every command", async () => {
    const program = buildProgram({} as never, async () => {});
    const commands = allCommands(program).filter((c) => c.at(-1) !== "help");
    expect(commands.length).toBeGreaterThan(35);
    for (const path of commands) {
      let cmd: Command = program;
      for (const name of path) cmd = cmd.commands.find((c) => c.name() === name)!;
      expect(cmd.description(), path.join(" ")).not.toBe("");
      expect(cmd.helpInformation()).toContain(`Usage: shoal ${path.join(" ")}`);
    }
    // And through real processes, for a few of them.
    for (const path of [
      ["db", "shell"],
      ["group", "locations", "add"],
      ["admin", "users", "create"],
    ]) {
      const out = await h.ok([...path, "--help"]);
      expect(out).toContain(`Usage: shoal ${path.join(" ")}`);
      expect(out).toContain("--json");
    }
  });

  it("exits 1 naming what is wrong on an unknown command or a missing argument", async () => {
    expect(await h.fails(["dbx"])).toMatch(/unknown command 'dbx'[\s\S]*Did you mean db\?/);
    expect(await h.fails(["db", "show"])).toContain("missing required argument 'name'");
  });
});

describe("shell completions", () => {
  it("generates a bash script that parses and completes the command tree", async () => {
    const script = await h.ok(["completion", "bash"]);
    const file = path.join(h.home, "shoal.bash");
    writeFileSync(file, script);
    execFileSync("bash", ["-n", file]);
    const complete = (line: string) =>
      execFileSync(
        "bash",
        [
          "-c",
          `source ${file}; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _shoal; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: "utf8" },
      )
        .trim()
        .split("\n");
    expect(complete("shoal d")).toEqual(["db"]);
    expect(complete("shoal db s")).toEqual(["show", "shell"]);
    expect(complete("shoal group locations ''")).toEqual(expect.arrayContaining(["add", "remove", "--help"]));
    expect(complete("shoal db shell mydb --m")).toEqual(["--mode"]);
  });

  it("completes database names where a command takes an existing database, asking Shoal for them", async () => {
    await h.ok(["db", "create", "completes-me"]);
    await h.ok(["db", "create", "completes-too"]);
    const file = path.join(h.home, "shoal-names.bash");
    writeFileSync(file, await h.ok(["completion", "bash"]));
    // `shoal` is this test's CLI, with the harness's login, as it would be on a user's PATH.
    const complete = (line: string) =>
      execFileSync(
        "bash",
        [
          "-c",
          `shoal() { ${h.commandLine([])} "$@"; }; source ${file}; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _shoal; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: "utf8", env: h.env() },
      )
        .trim()
        .split("\n");
    expect(complete("shoal db shell compl")).toEqual(["completes-me", "completes-too"]);
    expect(complete("shoal db tokens create completes-m")).toEqual(["completes-me"]);
    // A new database's name, and options, are not completed from the list.
    expect(complete("shoal db create compl")).toEqual([""]);
    expect(complete("shoal db show --u")).toEqual(["--url"]);
  });

  it("generates zsh and fish scripts from the same tree", async () => {
    const zsh = await h.ok(["completion", "zsh"]);
    expect(zsh.startsWith("#compdef shoal\n")).toBe(true);
    expect(zsh).toContain("'migrate:Apply a folder");
    const fish = await h.ok(["completion", "fish"]);
    expect(fish).toContain("complete -c shoal -n 'test (__shoal_path) = '\\''db'\\''' -a 'shell'");
    expect(fish).toContain("-l read-only");
    expect(await h.fails(["completion", "tcsh"])).toContain("Allowed choices are bash, zsh, fish");
  });
});

describe("logging in and out", () => {
  it("keeps the URL and token in a 0600 config file, and whoami shows them", async () => {
    expect(statSync(h.configFile).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(h.configFile, "utf8"));
    expect(saved).toEqual({ url: h.url, token: CLI_ADMIN_TOKEN });
    expect(await h.json(["whoami"])).toEqual({ url: h.url, username: "admin", org: "admin", admin: true });
    expect(await h.ok(["whoami"])).toMatch(/^URL\s+USER\s+ORG\s+ADMIN\n\S+\s+admin\s+admin\s+yes\n$/);
  });

  it("reads the token from standard input and checks it before saving anything", async () => {
    const config = path.join(h.home, "other.json");
    const out = await h.ok(["login", h.url.replace("http://", ""), "--config", config], {
      input: `${CLI_ADMIN_TOKEN}\n`,
    });
    expect(out).toContain(`Logged in to ${h.url} as admin`);
    const err = await h.fails([
      "login",
      h.url,
      "--token",
      "wrong-token",
      "--config",
      path.join(h.home, "never.json"),
    ]);
    expect(err).toContain("HTTP 401");
    expect(err).toContain("this API token is not valid on this Shoal");
    // The server's message names the turso CLI's command; printed here it names this CLI's own.
    expect(err).toContain("mint one with POST /v1/auth/api-tokens/{name} (shoal tokens create <name>)");
    expect(err).not.toMatch(/\bturso /);
    expect(() => statSync(path.join(h.home, "never.json"))).toThrow();
  });

  it("logs out by removing the token, after which commands say to log in", async () => {
    const config = path.join(h.home, "logout.json");
    await h.ok(["login", h.url, "--token", CLI_ADMIN_TOKEN, "--config", config]);
    expect(await h.json(["logout", "--config", config])).toEqual({ config, removed: true });
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ url: h.url });
    const err = await h.fails(["db", "list", "--config", config]);
    expect(err).toContain("no API token to call Shoal with");
    expect(err).toContain("shoal login <url>");
    expect(await h.ok(["logout", "--config", config])).toBe("Not logged in: nothing to remove.\n");
  });

  it("lets SHOAL_URL, SHOAL_TOKEN and SHOAL_CONFIG override the config file", async () => {
    const env = {
      SHOAL_CONFIG: path.join(h.home, "absent.json"),
      SHOAL_URL: h.url,
      SHOAL_TOKEN: CLI_ADMIN_TOKEN,
    };
    expect((await h.json(["whoami"], { env })).username).toBe("admin");
    const wrong = await h.fails(["db", "list"], { env: { SHOAL_TOKEN: "not-a-token" } });
    expect(wrong).toMatch(/^shoal: .*\(HTTP 401\)\n {2}the API token was refused: log in again/);
    const away = await h.fails(["db", "list"], { env: { SHOAL_URL: "http://127.0.0.1:9" } });
    expect(away).toContain("could not reach Shoal at http://127.0.0.1:9");
    expect(away).toContain("shoal start");
  });

  it("refuses a config file that isn't one, naming it", async () => {
    const bad = path.join(h.home, "bad.json");
    writeFileSync(bad, "not json");
    expect(await h.fails(["db", "list", "--config", bad])).toContain(
      `${bad} is not a valid Shoal config file`,
    );
  });
});
