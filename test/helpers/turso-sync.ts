import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { connect } from "@tursodatabase/sync";
import { ProtobufWriter, readFields, splitDelimited } from "../../src/lib/protobuf.js";

export type SyncDatabase = Awaited<ReturnType<typeof connect>>;

/** A temp folder for local sync databases; `cleanup()` removes it. */
export async function localFolder(): Promise<{ file(name: string): string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-turso-sync-"));
  return { file: (name) => path.join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Rows of a query on a local @tursodatabase/sync database. */
export async function localRows(db: SyncDatabase, sql: string): Promise<unknown[]> {
  return (await db.prepare(sql)).all();
}

export interface PullAnswer {
  status: number;
  /** The JSON error body, when the status isn't 200. */
  error?: { message?: string; code?: string };
  header: { revision: string; dbPages: number; raw: boolean; zstdLevel?: number; protocol: number };
  /** Page number (1-based) to its bytes as sent (compressed under zstd). */
  pages: Map<number, Buffer>;
  /** Bytes of the whole answer. */
  bytes: number;
}

export interface PullAsk {
  encoding?: 0 | 1;
  serverRevision?: string;
  clientRevision?: string;
  longPollMs?: number;
  pagesSelector?: Uint8Array;
  querySelector?: string;
}

/** Sends `POST <base>/pull-updates` as the client does, and decodes the answer. */
export async function pullRaw(
  base: string,
  token: string | undefined,
  ask: PullAsk = {},
): Promise<PullAnswer> {
  const body = new ProtobufWriter()
    .uint(1, ask.encoding ?? 0)
    .string(2, ask.serverRevision ?? "")
    .string(3, ask.clientRevision ?? "")
    .uint(4, ask.longPollMs ?? 0)
    .string(7, ask.querySelector ?? "");
  if (ask.pagesSelector) body.bytes(5, ask.pagesSelector);
  return pullBytes(base, token, body.message());
}

export async function pullBytes(
  base: string,
  token: string | undefined,
  body: Uint8Array,
): Promise<PullAnswer> {
  const headers: Record<string, string> = { "content-type": "application/protobuf" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}/pull-updates`, { method: "POST", headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const answer: PullAnswer = {
    status: res.status,
    header: { revision: "", dbPages: 0, raw: false, protocol: 0 },
    pages: new Map(),
    bytes: bytes.length,
  };
  if (res.status !== 200) {
    answer.error = JSON.parse(bytes.toString());
    return answer;
  }
  const { messages, used } = splitDelimited(bytes);
  if (used !== bytes.length || messages.length === 0)
    throw new Error("the answer is not a stream of messages");
  for (const f of readFields(messages[0]!)) {
    if (f.field === 1 && "bytes" in f) answer.header.revision = Buffer.from(f.bytes).toString();
    if (f.field === 2 && "varint" in f) answer.header.dbPages = Number(f.varint);
    if (f.field === 3 && "bytes" in f) answer.header.raw = true;
    if (f.field === 4 && "bytes" in f) {
      const level = readFields(f.bytes).find((x) => x.field === 1);
      answer.header.zstdLevel = level && "varint" in level ? Number(level.varint) : 0;
    }
    if (f.field === 8 && "varint" in f) answer.header.protocol = Number(f.varint);
  }
  for (const m of messages.slice(1)) {
    let id = 0;
    let data = Buffer.alloc(0);
    for (const f of readFields(m)) {
      if (f.field === 1 && "varint" in f) id = Number(f.varint);
      if (f.field === 2 && "bytes" in f) data = Buffer.from(f.bytes);
    }
    answer.pages.set(id + 1, data);
  }
  return answer;
}
