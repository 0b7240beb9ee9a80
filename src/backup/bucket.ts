import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { BackupSettings } from "./settings.js";

export type BucketOptions = Pick<
  BackupSettings,
  "bucket" | "prefix" | "endpoint" | "region" | "credentials" | "pathStyle"
> & {
  /** Keys per listing page (S3's default and maximum is 1000; tests use fewer to page). */
  pageSize?: number;
  /** A request with no answer this long fails (and is retried by the caller). */
  requestTimeoutMs?: number;
};

export interface ListedObject {
  key: string;
  size: number;
}

/** A bucket request failed; `status` is the HTTP status when the server answered at all. */
export class BucketError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly notFound: boolean,
  ) {
    super(message);
  }
}

/**
 * The backup bucket: the few S3 calls the backup makes, with errors turned into one message an
 * operator can act on (never the credentials). Works with AWS S3 and S3-compatible servers; the
 * SDK's newer default of sending CRC checksums on every upload is limited to the calls that need
 * one, since several compatible servers refuse those headers. Integrity is checked end to end by
 * the backup's own SHA-256 instead (objects.ts).
 */
export class BackupBucket {
  readonly name: string;
  readonly prefix: string;
  private readonly client: S3Client;
  private readonly pageSize: number;

  constructor(opts: BucketOptions) {
    this.name = opts.bucket;
    this.prefix = opts.prefix;
    this.pageSize = opts.pageSize ?? 1000;
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.pathStyle,
      credentials: opts.credentials,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: { requestTimeout: opts.requestTimeoutMs ?? 60_000, connectionTimeout: 10_000 },
    });
  }

  async put(key: string, body: Buffer, metadata: Record<string, string> = {}): Promise<void> {
    await this.call(`upload ${key}`, () =>
      this.client.send(new PutObjectCommand({ Bucket: this.name, Key: key, Body: body, Metadata: metadata })),
    );
  }

  /** Uploads a file as one object (S3 takes up to 5 GiB in one request). */
  async putFile(key: string, file: string, metadata: Record<string, string> = {}): Promise<void> {
    const { size } = await stat(file);
    await this.call(`upload ${key}`, async () => {
      const body = createReadStream(file);
      // The SDK listens only once it pipes the body, and may never: a read failing before (or a
      // request given up before) would be an error nobody hears. The upload then fails by itself.
      body.on("error", () => {});
      try {
        return await this.client.send(
          new PutObjectCommand({
            Bucket: this.name,
            Key: key,
            Body: body,
            ContentLength: size,
            Metadata: metadata,
          }),
        );
      } finally {
        body.destroy();
      }
    });
  }

  async get(key: string): Promise<{ body: Buffer; metadata: Record<string, string> }> {
    return this.call(`download ${key}`, async () => {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: key }));
      const bytes = await res.Body!.transformToByteArray();
      return {
        body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        metadata: res.Metadata ?? {},
      };
    });
  }

  /** Downloads an object into a file, streaming; returns its metadata. */
  async getFile(key: string, file: string): Promise<Record<string, string>> {
    return this.call(`download ${key}`, async () => {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: key }));
      await pipeline(res.Body as Readable, createWriteStream(file, { flags: "wx" }));
      return res.Metadata ?? {};
    });
  }

  /** Every object whose key starts with `prefix`, in key order, a page at a time. */
  async *list(prefix: string): AsyncGenerator<ListedObject> {
    let token: string | undefined;
    do {
      const page = await this.call(`list ${prefix}`, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.name,
            Prefix: prefix,
            MaxKeys: this.pageSize,
            ContinuationToken: token,
          }),
        ),
      );
      for (const o of page.Contents ?? []) yield { key: o.Key!, size: o.Size ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** The "folders" directly under `prefix` (keys up to the next slash), in key order. */
  async folders(prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.call(`list ${prefix}`, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.name,
            Prefix: prefix,
            Delimiter: "/",
            MaxKeys: this.pageSize,
            ContinuationToken: token,
          }),
        ),
      );
      for (const p of page.CommonPrefixes ?? []) out.push(p.Prefix!);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  /** Deletes objects, up to 1000 per request; a key already gone counts as deleted. */
  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const res = await this.call(`delete ${batch.length} objects`, () =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.name,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      );
      const failed = (res.Errors ?? []).filter((e) => e.Code !== "NoSuchKey");
      if (failed.length > 0) {
        throw new BucketError(`couldn't delete ${failed[0]!.Key}: ${failed[0]!.Code}`, undefined, false);
      }
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw describe(what, this.name, e);
    }
  }
}

function describe(what: string, bucket: string, e: unknown): BucketError {
  const err = e as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const status = err.$metadata?.httpStatusCode;
  const name = err.name ?? "Error";
  const notFound = name === "NoSuchKey" || status === 404;
  let hint = "";
  if (name === "NoSuchBucket") hint = `: the bucket "${bucket}" doesn't exist`;
  else if (status === 403 || name === "AccessDenied" || name === "InvalidAccessKeyId")
    hint = ": check the backup credentials and the bucket's permissions";
  const reason = err.code && !err.message?.includes(err.code) ? `${err.code} ${err.message}` : err.message;
  const detail = status ? `HTTP ${status} ${name}` : (reason ?? name);
  return new BucketError(`couldn't ${what} in bucket ${bucket} (${detail})${hint}`, status, notFound);
}
