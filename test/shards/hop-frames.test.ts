import { describe, expect, it } from "vitest";
import { encodeFrame, FrameReader, Kind, MAX_FRAME_BYTES } from "../../src/shards/hop-frames.js";

describe("the SQL hop's frames", () => {
  it("come out as they went in, however the stream cuts them", () => {
    const head = { method: "POST", url: "/db/o/d/v2/pipeline", headers: { "x-é": "ü" }, peer: "::1" };
    const body = Buffer.from(JSON.stringify({ requests: [{ type: "close" }] }));
    const frames = [
      encodeFrame(Kind.Request, 1, head, body),
      encodeFrame(Kind.Answer, 7, { status: 200, headers: {} }, "{}"),
      encodeFrame(Kind.Abort, 0xfffffffe),
      encodeFrame(Kind.Chunk, 3, undefined, Buffer.alloc(100_000, 1)),
    ];
    const all = Buffer.concat(frames);
    for (const cut of [1, 3, 13, 64, 4096, all.length]) {
      const reader = new FrameReader();
      const out = [];
      for (let at = 0; at < all.length; at += cut) out.push(...reader.push(all.subarray(at, at + cut)));
      expect(out.map((f) => [f.kind, f.id])).toEqual([
        [Kind.Request, 1],
        [Kind.Answer, 7],
        [Kind.Abort, 0xfffffffe],
        [Kind.Chunk, 3],
      ]);
      expect(out[0]!.head).toEqual(head);
      expect(out[0]!.payload.equals(body)).toBe(true);
      expect(out[1]!.payload.toString()).toBe("{}");
      expect(out[2]!.head).toBeUndefined();
      expect(out[2]!.payload.length).toBe(0);
      expect(out[3]!.payload.length).toBe(100_000);
    }
  });

  it("refuse a frame larger than any peer sends", () => {
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(MAX_FRAME_BYTES + 1, 0);
    expect(() => new FrameReader().push(prefix)).toThrow(/larger than any sent/);
  });
});
