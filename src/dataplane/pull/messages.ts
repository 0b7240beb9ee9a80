import { ProtobufError, ProtobufWriter, readFields } from "../../lib/protobuf.js";
import { type IntSet, RoaringFormatError, readRoaring } from "../../lib/roaring.js";
import { ProtocolError } from "../hrana/errors.js";

/**
 * The messages of `POST .../pull-updates`, the page-pull half of Turso's sync protocol (the other
 * half, pushing, is plain Hrana over `/v2/pipeline`). Field numbers are the protocol's.
 *
 * Request `PullUpdatesReqProtoBody`: 1 encoding (0 raw, 1 zstd), 2 server_revision, 3
 * client_revision, 4 long_poll_timeout_ms, 5 server_pages_selector (a Roaring bitmap of 0-based
 * page ids), 6 client_pages (ignored), 7 server_query_selector, 8 stream_kind (0 pages, 1 MVCC
 * logical log). Answer: a length-delimited `PullUpdatesRespProtoBody` header (1 server_revision,
 * 2 db_size in pages, 3 raw_encoding {} or 4 zstd_encoding {1 level, 2 pages_dict}, 5
 * stream_kind, 6 apply_mode, 8 protocol), then one length-delimited `PageData` per page (1
 * page_id, 0-based; 2 encoded_page).
 */
export interface PullRequest {
  encoding: "raw" | "zstd";
  /** The state the answer must describe (empty: the latest). */
  serverRevision: string;
  /** The state the client has (empty: none, send every page). */
  clientRevision: string;
  longPollMs: number;
  /** Pages (1-based) the client asks for; undefined: all. */
  pages?: IntSet;
  /** A query whose pages the client wants first; Shoal sends every page instead (a superset). */
  querySelector: string;
}

const ENCODINGS = ["raw", "zstd"] as const;

export function parsePullRequest(body: Uint8Array): PullRequest {
  const req: PullRequest = {
    encoding: "raw",
    serverRevision: "",
    clientRevision: "",
    longPollMs: 0,
    querySelector: "",
  };
  try {
    for (const f of readFields(body)) {
      if ("varint" in f) {
        if (f.field === 1) {
          const e = ENCODINGS[Number(f.varint)];
          if (!e) throw new ProtocolError(`unknown page encoding ${f.varint}`);
          req.encoding = e;
        } else if (f.field === 4) req.longPollMs = Number(f.varint & 0xffff_ffffn);
      } else {
        const text = () => Buffer.from(f.bytes).toString("utf8");
        if (f.field === 2) req.serverRevision = text();
        else if (f.field === 3) req.clientRevision = text();
        else if (f.field === 7) req.querySelector = text();
        else if (f.field === 5 && f.bytes.length > 0) {
          const ids = readRoaring(f.bytes);
          req.pages = { has: (page) => ids.has(page - 1) };
        }
      }
    }
  } catch (e) {
    if (e instanceof ProtobufError || e instanceof RoaringFormatError)
      throw new ProtocolError(`the pull-updates request is malformed: ${e.message}`);
    throw e;
  }
  return req;
}

/** zstd's level for pages: each page is compressed on its own, so a high level gains little. */
export const ZSTD_LEVEL = 3;

export function encodeHeader(revision: string, dbPages: number, encoding: PullRequest["encoding"]): Buffer {
  const w = new ProtobufWriter().string(1, revision).uint(2, dbPages);
  if (encoding === "raw") w.bytes(3, new Uint8Array(0));
  else w.bytes(4, new ProtobufWriter().uint(1, ZSTD_LEVEL).message());
  // stream_kind and apply_mode stay 0 (pages, incremental); protocol 1 says "pages, not MVCC".
  return w.uint(8, 1).delimited();
}

/** Room a `PageData` message needs besides its page's bytes: its length, page id and field keys. */
export const PAGE_FRAMING_BYTES = 20;

/**
 * Writes the start of a `PageData` message (length prefix, page id, the page field's key and
 * length) into `buf` at `at`, and returns where the `dataLength` bytes of the page go. Written by
 * hand into the caller's buffer: a full pull frames every page of the database, and the page can
 * then be read straight into place.
 */
export function writePageFraming(buf: Buffer, at: number, page: number, dataLength: number): number {
  const id = page - 1;
  const idBytes = id === 0 ? 0 : 1 + varintLength(id); // proto3 leaves the default 0 out
  let o = writeVarint(buf, at, idBytes + 1 + varintLength(dataLength) + dataLength);
  if (id !== 0) {
    buf[o++] = 0x08; // field 1, varint
    o = writeVarint(buf, o, id);
  }
  buf[o++] = 0x12; // field 2, length-delimited
  return writeVarint(buf, o, dataLength);
}

function varintLength(n: number): number {
  let len = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 0x80)) len++;
  return len;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  let o = at;
  let v = n;
  while (v >= 0x80) {
    buf[o++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[o++] = v;
  return o;
}
