/**
 * Bytes one thread hands to another without a buffer of their own: views lent from one SharedArrayBuffer that the
 * lending thread owns, given back when the receiver has answered.
 *
 * Why: V8 counts every ArrayBuffer an isolate allocates or receives (a transferred one included) as external
 * memory, and starts a full mark-compact of that isolate for about every 64 MB of it, whatever its heap holds; views of
 * one SharedArrayBuffer start none. The main thread receives the pipeline thread's rows (~1.2 KB per span) and hands it
 * the log's batches, so at a high span rate it ran a mark-compact every few hundred milliseconds, and less than half as
 * many with the arenas (docs/BENCHMARKS.md, "Pipeline thread, per span"). The CPU this saves is within the machine's
 * run-to-run spread end to end. A view of a SharedArrayBuffer crosses by reference, and its memory is the arena's,
 * counted once when the arena is made.
 *
 * Contract: the lender writes a view, posts it, and gives it back only after the receiver's answer, so no two
 * threads touch the same bytes at once; a receiver must not keep a view (or a view of it) past its answer. When no
 * gap is large enough, `lend` answers undefined and the caller sends bytes of their own, as before.
 */
const ALIGN = 8;

export class SharedArena {
  private bytes: Uint8Array | undefined;
  /** Lent blocks as [start, end) byte ranges, in order of start. */
  private readonly lent: { start: number; end: number }[] = [];

  /** `size` bytes of address space; the OS backs only the pages that are written (first fit keeps those low). */
  constructor(readonly size: number) {}

  /**
   * A view of `length` bytes that no lent view overlaps; undefined when no gap is that large, and for no bytes (an
   * empty block would share its start with a lent one, and `giveBack` tells views apart by their start).
   */
  lend(length: number): Uint8Array | undefined {
    if (length <= 0 || length > this.size) return undefined;
    const need = Math.ceil(length / ALIGN) * ALIGN;
    let at = 0;
    let i = 0;
    for (; i < this.lent.length; i++) {
      if (this.lent[i]!.start - at >= need) break;
      at = this.lent[i]!.end;
    }
    if (i === this.lent.length && this.size - at < need) return undefined;
    this.bytes ??= new Uint8Array(new SharedArrayBuffer(this.size));
    this.lent.splice(i, 0, { start: at, end: at + need });
    return this.bytes.subarray(at, at + length);
  }

  /** A lent copy of `bytes`, or undefined when the arena has no room for it. */
  lendCopy(bytes: Uint8Array): Uint8Array | undefined {
    const view = this.lend(bytes.byteLength);
    view?.set(bytes);
    return view;
  }

  /** Takes back a view `lend` gave (the whole view, as lent). */
  giveBack(view: Uint8Array): void {
    const i = this.lent.findIndex((b) => b.start === view.byteOffset);
    if (i === -1 || view.buffer !== this.bytes?.buffer) throw new Error("SharedArena.giveBack: not a view this arena lent, or given back twice");
    this.lent.splice(i, 1);
  }

  /**
   * Sends `view` with `send(lent)`: `lent` says whether the view is this arena's (post it as is) or bytes of the
   * caller's own (transfer their buffer). A lent view is given back once `send` has settled, i.e. once the receiver
   * has answered, whether it succeeded or not.
   */
  async send<T>(view: Uint8Array, send: (lent: boolean) => Promise<T>): Promise<T> {
    const lent = this.bytes !== undefined && view.buffer === this.bytes.buffer;
    try {
      return await send(lent);
    } finally {
      if (lent) this.giveBack(view);
    }
  }

  /** Bytes lent and not given back. */
  get lentBytes(): number {
    let n = 0;
    for (const b of this.lent) n += b.end - b.start;
    return n;
  }
}

/** Whether `bytes` are a view of shared memory (a receiver copies such bytes that it must keep past its answer). */
export const isShared = (bytes: Uint8Array): boolean =>
  typeof SharedArrayBuffer !== "undefined" && bytes.buffer instanceof SharedArrayBuffer;
