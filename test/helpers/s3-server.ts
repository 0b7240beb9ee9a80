import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { BackupBucket } from "../../src/backup/bucket.js";

const CHILD = path.join(import.meta.dirname, "s3-server-child.mjs");

/** A real S3-compatible server (s3rver from npm) on loopback, with one bucket, in its own process. */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Stops the server as an outage would: requests are refused until `start()`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder: everything stored is still there. */
  start(): Promise<void>;
  /** A client for the bucket under `prefix`. */
  client(prefix: string, opts?: { pageSize?: number; requestTimeoutMs?: number }): BackupBucket;
  close(): Promise<void>;
}

export async function startTestS3(bucket = "shoal-backups"): Promise<TestS3> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-s3-"));
  let port = 0;
  let proc: ChildProcess | undefined;
  const clients: BackupBucket[] = [];

  const start = async () => {
    const child = spawn(process.execPath, ["--openssl-legacy-provider", CHILD, dir, String(port), bucket], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc = child;
    let out = "";
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`s3rver did not start:\n${out}`)), 20_000);
      child.stdout?.on("data", (d: Buffer) => {
        const m = /"port":(\d+)/.exec(d.toString());
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited with ${code}:\n${out}`));
      });
    });
  };
  const stop = async () => {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    stop,
    start,
    client: (prefix, opts = {}) => {
      const c = new BackupBucket({
        bucket,
        prefix,
        endpoint,
        region: "us-east-1",
        credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
        pathStyle: true,
        ...opts,
      });
      clients.push(c);
      return c;
    },
    close: async () => {
      for (const c of clients) c.close();
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
