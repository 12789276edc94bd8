import type { LineProblem } from "../core/errors.js";

/** An admin command's refusal, as it crosses the admin socket (deploy/admin.ts): a tag, a message, the field. */
export interface AdminFailure { tag: string; message: string; field?: string; lines?: readonly LineProblem[] }

export class AdminError extends Error {
  constructor(readonly failure: AdminFailure) {
    super(failure.message);
  }
}
