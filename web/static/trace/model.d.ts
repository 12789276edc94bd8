// Types of model.js for the server's tests (web/runs/trace-model.test.ts).
import type { SpanSkeleton } from "../../../core/events/span-skeleton.js";

export class TraceModel {
  spans: SpanSkeleton[];
  parent: number[];
  folded: Set<string>;
  kinds: Set<string>;
  range: { start: number; end: number };
  readonly size: number;
  clear(): void;
  at(i: number): SpanSkeleton;
  positionOf(id: string): number | undefined;
  upsert(skel: SpanSkeleton): "added" | "changed" | "moved";
  hasKids(i: number): boolean;
  isFolded(i: number): boolean;
  setFolded(i: number, folded: boolean): boolean;
  reveal(i: number): boolean;
  visible(kind?: string): { rows: Int32Array; depths: Int32Array };
  totals(): { calls: Float64Array; tokens: Float64Array; cost: Float64Array };
  namesMatching(q: string): number[];
}
