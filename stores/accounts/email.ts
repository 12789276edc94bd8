/** E-mail addresses as accounts, invitations and projects compare them: trimmed, lower-case. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
