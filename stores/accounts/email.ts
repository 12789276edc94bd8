import { displayTextProblem } from "../../core/display-text.js";
import { ValidationError } from "../../core/errors.js";

/** E-mail addresses as accounts, invitations and projects compare them: trimmed, lower-case. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether a normalised address can be an account's or an invitation's: at most 254 characters, one @, a dot after it. */
export const isEmailAddress = (email: string): boolean => email.length <= 254 && EMAIL.test(email) && displayTextProblem(email) === undefined;

/**
 * `email` normalised, to look an account or a member up by; a ValidationError naming `field` when it cannot be an
 * address (so that Postgres, which refuses NUL in text, is never asked about it).
 */
export function addressOf(email: string | undefined, field = "email"): string {
  const address = normalizeEmail(email ?? "");
  if (!address) throw new ValidationError({ message: "enter an e-mail address", field });
  if (!isEmailAddress(address)) throw new ValidationError({ message: "enter a valid e-mail address, like you@example.com", field });
  return address;
}
