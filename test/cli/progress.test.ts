import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Progress } from "../../src/cli/progress.js";

function terminal(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  let text = "";
  const out = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return Object.assign(out, { isTTY, text: () => text });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the progress bar", () => {
  it("appears on a terminal once a transfer takes a moment, and ends on its own line", () => {
    vi.useFakeTimers({ now: 0 });
    const out = terminal(true);
    const bar = new Progress(out, "Exporting db", 4 * 1024 * 1024);
    bar.add(1024 * 1024);
    expect(out.text()).toBe("");
    vi.setSystemTime(1000);
    bar.add(1024 * 1024);
    expect(out.text()).toContain("Exporting db [###############---------------] 50% 2.0 MiB of 4.0 MiB");
    vi.setSystemTime(2000);
    bar.add(2 * 1024 * 1024);
    bar.finish();
    expect(out.text().endsWith("100% 4.0 MiB of 4.0 MiB\u001b[K\n")).toBe(true);
  });

  it("shows nothing in a pipe, or for a transfer that was over at once", () => {
    vi.useFakeTimers({ now: 0 });
    const pipe = terminal(false);
    const quick = terminal(true);
    const a = new Progress(pipe, "x", 10);
    const b = new Progress(quick, "x", 10);
    vi.setSystemTime(5000);
    a.add(10);
    a.finish();
    b.finish();
    expect(pipe.text()).toBe("");
    expect(quick.text()).toBe("");
  });
});
