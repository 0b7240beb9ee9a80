import type { Output } from "./io.js";
import { sizeText as size } from "./output.js";

/** A transfer shorter than this shows no bar at all. */
const QUIET_MS = 400;
const REDRAW_MS = 100;
const WIDTH = 30;

/**
 * A progress bar on a terminal (nothing when the output is a pipe or a file, so scripts and logs
 * stay clean). It appears only once a transfer has taken a moment, and redraws at most ten
 * times a second.
 */
export class Progress {
  private done = 0;
  private drawn = 0;
  private shown = false;
  private readonly started = Date.now();

  constructor(
    private readonly out: Output,
    private readonly label: string,
    private readonly total?: number,
  ) {}

  add(bytes: number): void {
    this.done += bytes;
    const now = Date.now();
    if (!this.out.isTTY || now - this.started < QUIET_MS || now - this.drawn < REDRAW_MS) return;
    this.drawn = now;
    this.draw();
  }

  private draw(): void {
    this.shown = true;
    let line = `${this.label} ${size(this.done)}`;
    if (this.total) {
      const part = Math.min(1, this.done / this.total);
      const filled = Math.round(part * WIDTH);
      line = `${this.label} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${Math.floor(part * 100)}% ${size(this.done)} of ${size(this.total)}`;
    }
    this.out.write(`\r${line}\u001b[K`);
  }

  /** Leaves the finished bar on its own line (if one was shown). */
  finish(): void {
    if (!this.shown) return;
    this.draw();
    this.out.write("\n");
  }
}
