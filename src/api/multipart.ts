import { apiErrors } from "./errors.js";

/** Largest header block of one part; real ones are a few hundred bytes. */
/** Bytes allowed before the first boundary (clients send none, or a line of text). */
const MAX_PREAMBLE = 64 * 1024;
const MAX_PART_HEADERS = 16 * 1024;

/**
 * The content of one field of a `multipart/form-data` body, streamed as it arrives, so a large
 * upload is never held in memory whole (the `Request.formData()` of the platform would be). Parts
 * before the field are skipped; reading stops at the end of the field.
 */
export async function* multipartField(
  body: ReadableStream<Uint8Array> | null,
  contentType: string | undefined,
  field: string,
): AsyncGenerator<Uint8Array> {
  const m = /^multipart\/form-data\s*;.*\bboundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  const boundary = m?.[1] ?? m?.[2];
  if (!body || !boundary) {
    throw apiErrors.notMultipart(field);
  }
  const reader = body.getReader();
  let buf = Buffer.alloc(0);
  const more = async (): Promise<boolean> => {
    const { done, value } = await reader.read();
    if (done) return false;
    buf = buf.length === 0 ? Buffer.from(value) : Buffer.concat([buf, value]);
    return true;
  };
  const opening = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  try {
    // The preamble before the first boundary is ignored; it is never worth keeping whole.
    let at = buf.indexOf(opening);
    while (at < 0) {
      if (buf.length > MAX_PREAMBLE) throw apiErrors.noMultipartBoundary();
      if (!(await more())) throw apiErrors.multipartTruncated();
      at = buf.indexOf(opening);
    }
    buf = buf.subarray(at + opening.length);
    for (;;) {
      while (buf.length < 2) if (!(await more())) throw apiErrors.multipartTruncated();
      if (buf.subarray(0, 2).toString() === "--") break;
      let end = buf.indexOf("\r\n\r\n");
      while (end < 0) {
        if (buf.length > MAX_PART_HEADERS) throw apiErrors.multipartHeadersTooLarge();
        if (!(await more())) throw apiErrors.multipartTruncated();
        end = buf.indexOf("\r\n\r\n");
      }
      const headers = buf.subarray(0, end).toString("latin1");
      buf = buf.subarray(end + 4);
      const name = /content-disposition:[^\r\n]*?\bname="([^"]*)"/i.exec(headers)?.[1];
      const wanted = name === field;
      for (;;) {
        const stop = buf.indexOf(delimiter);
        if (stop >= 0) {
          if (wanted && stop > 0) yield buf.subarray(0, stop);
          buf = buf.subarray(stop + delimiter.length);
          break;
        }
        // Keep what could be the start of the delimiter; the rest of the part is final.
        const safe = buf.length - (delimiter.length - 1);
        if (safe > 0) {
          if (wanted) yield buf.subarray(0, safe);
          buf = buf.subarray(safe);
        }
        if (!(await more())) throw apiErrors.multipartTruncated();
      }
      if (wanted) return;
    }
    throw apiErrors.multipartFieldMissing(field);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
