import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";
import { type Browser, chromium } from "playwright-core";

/**
 * Headless Chromium for the console's browser tests, from the `@sparticuz/chromium` npm package:
 * it ships the browser binary (brotli-packed) and the NSS libraries it links against inside the
 * tarball, so `npm ci` is all a fresh machine needs (no download from anywhere but the npm
 * registry, nothing from apt). Unpacked once into node_modules/.cache and reused.
 */
const REPO = path.resolve(import.meta.dirname, "../..");

function packageDir(): { dir: string; version: string } {
  const entry = createRequire(import.meta.url).resolve("@sparticuz/chromium");
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, "package.json")) || !existsSync(path.join(dir, "bin")))
    dir = path.dirname(dir);
  const version = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string })
    .version;
  return { dir, version };
}

async function unbrotli(from: string, to: string): Promise<void> {
  await pipeline(createReadStream(from), createBrotliDecompress(), createWriteStream(to, { mode: 0o755 }));
}

/** The unpacked browser (binary, libraries, fallback fonts); other test files may race for it. */
async function unpacked(): Promise<{ executable: string; lib: string; fonts: string }> {
  const { dir, version } = packageDir();
  const target = path.join(REPO, "node_modules", ".cache", `shoal-chromium-${version}`);
  const result = {
    executable: path.join(target, "chromium"),
    lib: path.join(target, "lib"),
    fonts: path.join(target, "fonts"),
  };
  if (existsSync(path.join(target, "done"))) return result;
  const work = `${target}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  mkdirSync(work, { recursive: true });
  try {
    await unbrotli(path.join(dir, "bin", "chromium.br"), path.join(work, "chromium"));
    for (const [pack, into] of [
      ["al2023.tar.br", work],
      ["fonts.tar.br", path.join(work, "fonts")],
    ] as const) {
      mkdirSync(into, { recursive: true });
      await unbrotli(path.join(dir, "bin", pack), path.join(work, "pack.tar"));
      execFileSync("tar", ["-xf", path.join(work, "pack.tar"), "-C", into]);
      rmSync(path.join(work, "pack.tar"));
    }
    writeFileSync(path.join(work, "done"), version);
    renameSync(work, target);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    // Another test file unpacked it first: use theirs.
    if (existsSync(path.join(target, "done"))) return result;
    throw e;
  }
  return result;
}

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with the flags a closed network needs (no background connections,
 * no component updates). Playwright gives every launch a fresh profile of its own
 * (`--user-data-dir` in a new temp folder, removed at close).
 */
export async function launchBrowser(opts: { posixLocale?: boolean } = {}): Promise<TestBrowser> {
  const { executable, lib, fonts } = await unpacked();
  // The pages run in US English, whatever the machine's locale, so screenshots and texts are the
  // same everywhere; `posixLocale` instead runs the browser as most servers and containers would
  // (LANG=C.UTF-8), which gives the page a navigator.language Intl refuses (`en-US@posix`).
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    LD_LIBRARY_PATH: lib,
    ...(opts.posixLocale ? { LANG: "C.UTF-8" } : { LANG: "en_US.UTF-8", LANGUAGE: "en_US" }),
  };
  delete env.LC_ALL;
  if (opts.posixLocale) delete env.LANGUAGE;
  // The system's fonts when it has a fontconfig setup; the package's own otherwise.
  if (!existsSync("/etc/fonts/fonts.conf")) env.FONTCONFIG_PATH = fonts;
  const browser = await chromium.launch({
    executablePath: executable,
    headless: true,
    env,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...(opts.posixLocale ? [] : ["--lang=en-US"]),
    ],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}
