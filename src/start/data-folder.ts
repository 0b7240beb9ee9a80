import { chmod, lstat, mkdir, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { StartError } from "../errors.js";

/** What group and other may have on the data folder: nothing to read or write. */
const SHARED_BITS = 0o066;

/**
 * Makes the data folder private before anything is written to it. A new folder is created with mode
 * 0700. An existing one that other users can read or write is refused, since it holds the signing
 * keys, the administrator's token and every database: the operator should know it was exposed, and
 * decide. Inside a private folder, every file is set to 0600 and every folder to 0700, so a data
 * folder from an older version (whose files were 0644) is tightened on its first start. Symbolic
 * links are left alone: what they point to is not Shoal's.
 */
export async function prepareDataFolder(dir: string): Promise<void> {
  try {
    await makePrivate(dir);
  } catch (e) {
    if (e instanceof StartError) throw e;
    // Not ours to fix (a parent we may not write, a read-only disk): say so in one line.
    throw new StartError(`the data folder ${dir} (SHOAL_DATA_DIR) can't be used: ${(e as Error).message}`);
  }
}

async function makePrivate(dir: string): Promise<void> {
  let mode: number;
  try {
    // The folder itself may be a link to where the disk is; what is inside is Shoal's alone.
    const st = await stat(dir);
    if (!st.isDirectory()) throw new StartError(`the data folder ${dir} (SHOAL_DATA_DIR) is not a folder`);
    mode = st.mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    return;
  }
  if (mode & SHARED_BITS) {
    throw new StartError(
      `the data folder ${dir} can be read or written by other users (mode ${mode.toString(8).padStart(4, "0")}); ` +
        `it holds signing keys and every database. Make it private and start again: chmod -R go-rwx ${dir}`,
    );
  }
  await tighten(dir, true);
}

async function tighten(target: string, isDir: boolean): Promise<void> {
  const st = isDir ? await stat(target) : await lstat(target);
  const wanted = isDir ? 0o700 : 0o600;
  if ((st.mode & 0o777) !== wanted) await chmod(target, wanted);
  if (!isDir) return;
  for (const e of await readdir(target, { withFileTypes: true })) {
    try {
      if (e.isDirectory()) await tighten(path.join(target, e.name), true);
      else if (e.isFile()) await tighten(path.join(target, e.name), false);
    } catch (err) {
      // A file that went away between listing and changing it (a -shm or -journal SQLite removed
      // as its last connection closed, a temporary file) needs no tightening.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}
