import { X509Certificate } from "node:crypto";
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { createSecureContext, type SecureContext } from "node:tls";
import { StartError } from "../errors.js";
import type { Logger } from "./logger.js";

/** How often the two files are looked at for a change (a renewal by certbot, a new secret mounted). */
const WATCH_INTERVAL_MS = 2_000;
/** Certificates that expire sooner than this are warned about at each load. */
const EXPIRY_WARNING_MS = 14 * 24 * 3600 * 1000;

interface Loaded {
  context: SecureContext;
  subject: string;
  validTo: Date;
}

/**
 * The public port's certificate and key. Both PEM files are read at start (a pair that can't be
 * used stops the start with a message saying why), then again on `reload()` (SIGHUP) and whenever
 * either file changes. A reload that fails keeps the pair in use, so a renewal half written, or a
 * key that doesn't match its certificate, never takes the port down; the log says what happened.
 * Connections take the pair current when they arrive; those already open keep theirs.
 */
export class TlsCertificates {
  private current: Loaded;
  private watching = false;

  constructor(
    private readonly files: { certFile: string; keyFile: string },
    private readonly log: Logger,
    /** Said once per process: the node's shards load the same pair quietly. */
    private readonly quiet = false,
  ) {
    try {
      this.current = load(files);
    } catch (e) {
      throw new StartError(`SHOAL_TLS_CERT / SHOAL_TLS_KEY can't be used: ${(e as Error).message}`);
    }
    this.announce("loaded");
  }

  /** The context a new connection's handshake uses. */
  get context(): SecureContext {
    return this.current.context;
  }

  /** Called after each reload that put a new pair in use (the node tells its shards). */
  onReload: (() => void) | undefined;

  /** Reads both files again; answers whether the new pair is now in use. */
  reload(reason: string): boolean {
    try {
      this.current = load(this.files);
    } catch (e) {
      this.log.error(
        { reason, cert: this.files.certFile, key: this.files.keyFile, error: (e as Error).message },
        "TLS certificate not reloaded: the one loaded before is still in use",
      );
      return false;
    }
    this.announce(`reloaded (${reason})`);
    this.onReload?.();
    return true;
  }

  /** Reloads whenever either file's modification time or size changes. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    for (const file of [this.files.certFile, this.files.keyFile]) {
      watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, (now, before) => {
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload(`${file} changed`);
      });
    }
  }

  close(): void {
    if (!this.watching) return;
    this.watching = false;
    unwatchFile(this.files.certFile);
    unwatchFile(this.files.keyFile);
  }

  private announce(what: string): void {
    if (this.quiet) return;
    const { subject, validTo } = this.current;
    const fields = { cert: this.files.certFile, subject, validTo: validTo.toISOString() };
    const left = validTo.getTime() - Date.now();
    if (left < 0) this.log.error(fields, `TLS certificate ${what}: it has EXPIRED, clients will refuse it`);
    else if (left < EXPIRY_WARNING_MS)
      this.log.warn(fields, `TLS certificate ${what}: it expires in under 14 days`);
    else this.log.info(fields, `TLS certificate ${what}`);
  }
}

function load(files: { certFile: string; keyFile: string }): Loaded {
  const cert = read(files.certFile, "certificate");
  const key = read(files.keyFile, "key");
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new Error(`${files.certFile} holds no PEM certificate`);
  }
  try {
    return {
      context: createSecureContext({ cert, key, minVersion: "TLSv1.2" }),
      subject: x509.subject.replace(/\n/g, ", "),
      validTo: new Date(x509.validTo),
    };
  } catch (e) {
    const message = (e as Error).message;
    if (/key values mismatch/i.test(message)) {
      throw new Error(`${files.keyFile} is not the key of the certificate in ${files.certFile}`);
    }
    throw new Error(`${files.keyFile}: ${message}`);
  }
}

function read(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(`the ${what} file ${file} can't be read (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
}
