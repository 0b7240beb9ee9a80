import { z } from "zod";

/** Where backups go and how often, from the `SHOAL_BACKUP_*` settings. */
export interface BackupSettings {
  bucket: string;
  /** Key prefix inside the bucket, without leading or trailing slashes ("" for the bucket's root). */
  prefix: string;
  /** An S3-compatible server's base URL; undefined: AWS S3 itself. */
  endpoint: string | undefined;
  region: string;
  /** Undefined: the AWS SDK's usual chain (AWS_ACCESS_KEY_ID, profiles, instance roles). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`. */
  pathStyle: boolean;
  /** The longest a committed write waits before the shipper sends it. */
  intervalMs: number;
  /** A new snapshot once the last one is this old and frames came since. */
  snapshotIntervalMs: number;
  /** Every moment this far back stays restorable; older objects are deleted. */
  retentionMs: number;
  /** A replica of another node's primary starts from the bucket's copy, then follows the primary. */
  seedReplicas: boolean;
}

const HOUR = 3_600_000;

/** Bucket names as S3 accepts them: 3-63 lowercase letters, digits, dots and dashes. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function wholeNumber(min: number, max: number) {
  const error = `a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, error)
    .transform(Number)
    .pipe(z.number().min(min, error).max(max, error));
}

function hours(min: number, max: number) {
  const error = `a number of hours from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, error)
    .transform(Number)
    .pipe(z.number().min(min, error).max(max, error));
}

/** `s3://bucket/prefix`: the bucket and the key prefix every object of this instance lives under. */
export function parseBackupUrl(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url.trim());
  if (!m) throw new Error("an S3 URL such as s3://my-bucket/shoal");
  const bucket = m[1]!;
  if (!BUCKET.test(bucket)) {
    throw new Error(`"${bucket}" is not a bucket name (3-63 lowercase letters, digits, dots and dashes)`);
  }
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((part) => part === "" || part === "." || part === "..") && prefix !== "") {
    throw new Error("the prefix may not have empty, . or .. parts");
  }
  return { bucket, prefix };
}

const BackupEnv = z.object({
  SHOAL_BACKUP_URL: z
    .string()
    .transform((text, ctx) => {
      try {
        return parseBackupUrl(text);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    })
    .optional(),
  SHOAL_BACKUP_ENDPOINT: z
    .string()
    .regex(/^https?:\/\/[^/\s]+\/?$/, "a base URL such as http://127.0.0.1:9000")
    .transform((s) => s.replace(/\/$/, ""))
    .optional(),
  SHOAL_BACKUP_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, "a region such as us-east-1")
    .optional(),
  SHOAL_BACKUP_ACCESS_KEY_ID: z.string().min(1).optional(),
  SHOAL_BACKUP_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  SHOAL_BACKUP_PATH_STYLE: z.enum(["true", "false"], "true or false").optional(),
  SHOAL_BACKUP_INTERVAL_MS: wholeNumber(50, 3_600_000).default(1000),
  SHOAL_BACKUP_SNAPSHOT_INTERVAL_HOURS: hours(0.001, 24 * 365).default(6),
  SHOAL_BACKUP_RETENTION_HOURS: hours(0.001, 24 * 3650).default(168),
  SHOAL_BACKUP_SEED_REPLICAS: z.enum(["true", "false"], "true or false").default("true"),
});

/** Every backup setting's variable name, for `--help` and the docs' checks. */
export const BACKUP_SETTING_NAMES: readonly string[] = Object.keys(BackupEnv.shape);

/**
 * Reads the backup settings from the environment (already filtered to non-empty values by the
 * caller, or not: empty values count as unset here too). `settings` is undefined when
 * `SHOAL_BACKUP_URL` is unset (backups are off) or when `problems` names bad settings, one line
 * each (`SHOAL_BACKUP_X: what it accepts`), never with a secret's value.
 */
export function readBackupSettings(env: Record<string, string | undefined>): {
  settings: BackupSettings | undefined;
  problems: string[];
} {
  const present = Object.fromEntries(
    BACKUP_SETTING_NAMES.filter((k) => env[k] !== undefined && env[k] !== "").map((k) => [k, env[k]]),
  );
  const parsed = BackupEnv.safeParse(present);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  problems.push(...combinationProblems(present));
  if (problems.length > 0 || !parsed.data?.SHOAL_BACKUP_URL) return { settings: undefined, problems };
  const e = parsed.data;
  const url = e.SHOAL_BACKUP_URL!;
  const settings: BackupSettings = Object.freeze({
    ...url,
    endpoint: e.SHOAL_BACKUP_ENDPOINT,
    region: e.SHOAL_BACKUP_REGION ?? "us-east-1",
    credentials:
      e.SHOAL_BACKUP_ACCESS_KEY_ID && e.SHOAL_BACKUP_SECRET_ACCESS_KEY
        ? { accessKeyId: e.SHOAL_BACKUP_ACCESS_KEY_ID, secretAccessKey: e.SHOAL_BACKUP_SECRET_ACCESS_KEY }
        : undefined,
    // S3-compatible servers mostly don't have a DNS name per bucket; AWS prefers virtual hosts.
    pathStyle: e.SHOAL_BACKUP_PATH_STYLE
      ? e.SHOAL_BACKUP_PATH_STYLE === "true"
      : e.SHOAL_BACKUP_ENDPOINT !== undefined,
    intervalMs: e.SHOAL_BACKUP_INTERVAL_MS,
    snapshotIntervalMs: Math.round(e.SHOAL_BACKUP_SNAPSHOT_INTERVAL_HOURS * HOUR),
    retentionMs: Math.round(e.SHOAL_BACKUP_RETENTION_HOURS * HOUR),
    seedReplicas: e.SHOAL_BACKUP_SEED_REPLICAS === "true",
  });
  return { settings, problems };
}

/** `readBackupSettings`, throwing one error naming every bad setting. */
export function parseBackupSettings(env: Record<string, string | undefined>): BackupSettings | undefined {
  const { settings, problems } = readBackupSettings(env);
  if (problems.length > 0) throw new Error(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return settings;
}

/** Settings that are each valid but can't go together. */
function combinationProblems(present: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  if (present.SHOAL_BACKUP_URL === undefined) {
    // Any other backup setting without a URL is a forgotten URL: say so rather than run unprotected.
    for (const name of [
      "SHOAL_BACKUP_ENDPOINT",
      "SHOAL_BACKUP_ACCESS_KEY_ID",
      "SHOAL_BACKUP_PATH_STYLE",
      "SHOAL_BACKUP_SEED_REPLICAS",
    ]) {
      if (present[name] !== undefined) out.push(`${name}: needs SHOAL_BACKUP_URL, which is unset`);
    }
  }
  if (
    (present.SHOAL_BACKUP_ACCESS_KEY_ID === undefined) !==
    (present.SHOAL_BACKUP_SECRET_ACCESS_KEY === undefined)
  ) {
    out.push(
      "SHOAL_BACKUP_SECRET_ACCESS_KEY: set SHOAL_BACKUP_ACCESS_KEY_ID and SHOAL_BACKUP_SECRET_ACCESS_KEY together, or neither",
    );
  }
  return out;
}
