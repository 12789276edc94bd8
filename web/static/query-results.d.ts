export function baseType(type: string): string;
export function isNumericType(type: string): boolean;
export function isTimeType(type: string): boolean;
export function rowCount(n: number): string;
export const FOLD_AT: number;
export function cellHtml(value: unknown, esc: (s: string) => string): string;
export function timeOf(v: unknown): number;
export function chartSeries(columns: readonly { name: string; type: string }[], rows: readonly (readonly unknown[])[]): { x: string; y: string; xs: number[]; ys: number[] } | null;
export function refusalText(status: number, answer: unknown): string;
