// Compiles src/ into dist/ (tsc -p tsconfig.build.json), bundles the web console into dist/console,
// and records when, in dist/.build-stamp.
// `npm run build` always builds; `--if-stale` (npm ci's prepare step, and npm start) builds only
// when dist/ is missing or a source changed after the last build, so starting needs no compiler.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const INPUTS = ["src", "console", "tsconfig.json", "tsconfig.build.json", "package.json"];

/** Newest modification time among the build's inputs. */
function newestInput() {
  let newest = 0;
  const visit = (p) => {
    const st = statSync(p);
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(path.join(p, name));
  };
  for (const input of INPUTS) visit(path.join(ROOT, input));
  return newest;
}

/** Whether dist/ is missing or older than a source. */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  return newestInput() > statSync(STAMP).mtimeMs;
}

/**
 * Makes package.json's bin entries (`shoal`) executable in the fresh build: tsc writes files
 * without the bit, and npm's link in node_modules/.bin runs the file itself, so after a rebuild
 * `npx shoal` would answer "Permission denied".
 */
export function markExecutable(staging) {
  const { bin = {} } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  for (const target of Object.values(bin)) {
    const inStaging = path.join(staging, path.relative("dist", target));
    if (existsSync(inStaging)) chmodSync(inStaging, 0o755);
  }
}

/** Builds dist/ afresh; returns false (after tsc printed why) when the build fails. */
export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    process.stderr.write("shoal: TypeScript is not installed, so dist/ can't be built: run npm ci\n");
    return false;
  }
  // From scratch, beside dist/ and swapped in whole: a source removed since the last build must not
  // live on in dist/, and a build running at the same time never sees half of another.
  const dist = path.join(ROOT, "dist");
  const staging = path.join(ROOT, `.dist-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", staging], {
    cwd: ROOT,
    stdio: "inherit",
  });
  // The web console is bundled into the same staging folder, so a swap never drops it.
  const ui =
    r.status === 0 &&
    spawnSync(
      process.execPath,
      [path.join(ROOT, "scripts", "build-console.mjs"), path.join(staging, "console")],
      {
        cwd: ROOT,
        stdio: "inherit",
      },
    );
  if (r.status !== 0 || !ui || ui.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    return false;
  }
  markExecutable(staging);
  writeFileSync(path.join(staging, ".build-stamp"), `${new Date().toISOString()}\n`);
  rmSync(dist, { recursive: true, force: true });
  renameSync(staging, dist);
  return true;
}

/** Builds when needed; `announce` says so on stderr first, since a build takes a while. */
export function buildIfStale(announce = false) {
  if (!isStale()) return true;
  if (announce) process.stderr.write("shoal: sources changed since the last build; building dist/ first\n");
  return build();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ok = process.argv.includes("--if-stale") ? buildIfStale() : build();
  process.exit(ok ? 0 : 1);
}
