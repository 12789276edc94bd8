export function duration(ms: number | null | undefined): string;
export function usd(v: number | string | null | undefined): string;
export function count(v: number | string | null | undefined): string;
export function timestamp(iso: string | null | undefined): string;
export function ago(iso: string | null | undefined, now?: number): string;
export function runDurationMs(
  run: { duration_ms?: number | null; started_at: string | null; ended_at: string | null },
  now?: number,
): number | null;
export const STATUS_LABELS: Record<string, string>;
export function statusLabel(s: string | null | undefined): string;
