import { describe, expect, it } from "vitest";
import { BACKUP_SETTING_NAMES, parseBackupSettings } from "../../src/backup/settings.js";

describe("backup settings", () => {
  it("are off without SHOAL_BACKUP_URL, with defaults for everything else", () => {
    expect(parseBackupSettings({})).toBeUndefined();
    expect(parseBackupSettings({ SHOAL_BACKUP_URL: "s3://shoal-backups/prod/eu" })).toEqual({
      bucket: "shoal-backups",
      prefix: "prod/eu",
      endpoint: undefined,
      region: "us-east-1",
      credentials: undefined,
      pathStyle: false,
      intervalMs: 1000,
      snapshotIntervalMs: 6 * 3_600_000,
      retentionMs: 168 * 3_600_000,
      seedReplicas: true,
    });
  });

  it("take an S3-compatible endpoint (path-style by default), credentials and intervals", () => {
    const s = parseBackupSettings({
      SHOAL_BACKUP_URL: "s3://bucket/",
      SHOAL_BACKUP_ENDPOINT: "http://127.0.0.1:9000/",
      SHOAL_BACKUP_REGION: "eu-central-1",
      SHOAL_BACKUP_ACCESS_KEY_ID: "id",
      SHOAL_BACKUP_SECRET_ACCESS_KEY: "secret",
      SHOAL_BACKUP_INTERVAL_MS: "250",
      SHOAL_BACKUP_SNAPSHOT_INTERVAL_HOURS: "0.5",
      SHOAL_BACKUP_RETENTION_HOURS: "24",
      SHOAL_LOG_LEVEL: "debug",
    });
    expect(s).toMatchObject({
      bucket: "bucket",
      prefix: "",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-central-1",
      credentials: { accessKeyId: "id", secretAccessKey: "secret" },
      pathStyle: true,
      intervalMs: 250,
      snapshotIntervalMs: 1_800_000,
      retentionMs: 86_400_000,
    });
    expect(
      parseBackupSettings({
        SHOAL_BACKUP_URL: "s3://bucket",
        SHOAL_BACKUP_ENDPOINT: "http://h:1",
        SHOAL_BACKUP_PATH_STYLE: "false",
      })?.pathStyle,
    ).toBe(false);
    expect(
      parseBackupSettings({ SHOAL_BACKUP_URL: "s3://bucket", SHOAL_BACKUP_SEED_REPLICAS: "false" })
        ?.seedReplicas,
    ).toBe(false);
  });

  it("name every bad setting at once", () => {
    expect(() =>
      parseBackupSettings({
        SHOAL_BACKUP_URL: "https://bucket/x",
        SHOAL_BACKUP_INTERVAL_MS: "soon",
        SHOAL_BACKUP_ACCESS_KEY_ID: "id",
      }),
    ).toThrow(
      /SHOAL_BACKUP_URL: an S3 URL[\s\S]*SHOAL_BACKUP_INTERVAL_MS: a whole number[\s\S]*SHOAL_BACKUP_SECRET_ACCESS_KEY: set SHOAL_BACKUP_ACCESS_KEY_ID and/,
    );
    expect(() => parseBackupSettings({ SHOAL_BACKUP_URL: "s3://Bad_Bucket" })).toThrow(/not a bucket name/);
    expect(() => parseBackupSettings({ SHOAL_BACKUP_URL: "s3://bucket/a/../b" })).toThrow(/prefix/);
    expect(() => parseBackupSettings({ SHOAL_BACKUP_ENDPOINT: "http://minio:9000" })).toThrow(
      /SHOAL_BACKUP_ENDPOINT: needs SHOAL_BACKUP_URL/,
    );
  });

  it("list every variable for --help and the docs", () => {
    expect(BACKUP_SETTING_NAMES).toContain("SHOAL_BACKUP_URL");
    expect(BACKUP_SETTING_NAMES.every((n) => n.startsWith("SHOAL_BACKUP_"))).toBe(true);
  });
});
