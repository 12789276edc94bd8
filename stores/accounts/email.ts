/** E-mail addresses as accounts, invitations and projects compare them: trimmed, lower-case. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether a normalised address can be an account's or an invitation's: at most 254 characters, one @, a dot after it. */
export const isEmailAddress = (email: string): boolean => email.length <= 254 && EMAIL.test(email);
