/** Where a login (password or single sign-on) goes next: only same-site relative paths are followed (no open redirect). */
export const safeNext = (next: unknown): string =>
  typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/dashboard";
