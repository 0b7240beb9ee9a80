import { pathToFileURL } from "node:url";

/**
 * The name under which `libsql` opens `file` read-only. Its `readonly` option is accepted and
 * ignored (libsql 0.5: the connection can write, and as a file's last connection it checkpoints
 * the WAL on closing), so read-only is asked of SQLite itself, through a URI filename with
 * `mode=ro`. The path is percent-encoded, so a `?` or `#` in a folder's name stays part of it.
 */
export function readOnlyFile(file: string): string {
  return `${pathToFileURL(file).href}?mode=ro`;
}
