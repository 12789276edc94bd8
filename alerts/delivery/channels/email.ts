/** email: SMTP through nodemailer, settings from SMTP_* (settings.ts). One transport per process. */
import nodemailer from "nodemailer";
import validator from "validator";

const { isEmail } = validator;
import type { Transporter } from "nodemailer";
import { htmlOf, subjectOf, textOf } from "../../message.js";
import type { NotificationSettings } from "../../settings.js";
import type { NotificationChannel } from "./types.js";

export const MAX_RECIPIENTS = 20;
/** The most an address may have (RFC 5321's path limit), and so the most a whole target may have. */
export const MAX_ADDRESS_LENGTH = 254;
export const MAX_TARGET_LENGTH = MAX_RECIPIENTS * (MAX_ADDRESS_LENGTH + 2);

/**
 * Lengths first, then validator's isEmail on each address (a maintained validator, run only on at most 254
 * characters): a hand-written pattern here backtracked for seconds on a 60k-character target.
 */
export function parseRecipients(target: string): string[] {
  if (target.length > MAX_TARGET_LENGTH) throw new Error(`at most ${MAX_TARGET_LENGTH} characters (${MAX_RECIPIENTS} addresses)`);
  const list = target.split(/[\s,;]+/).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new Error("enter at least one email address");
  if (list.length > MAX_RECIPIENTS) throw new Error(`at most ${MAX_RECIPIENTS} addresses`);
  const bad = list.find((a) => a.length > MAX_ADDRESS_LENGTH || !(isEmail(a) || isEmail(a, { require_tld: false, host_whitelist: ["localhost"] })));
  if (bad) throw new Error(`“${bad.length > 60 ? `${bad.slice(0, 60)}…` : bad}” is not an email address`);
  return list;
}

let cached: { key: string; transport: Transporter } | undefined;

function transportFor(s: NotificationSettings): Transporter {
  const { smtp } = s;
  if (!smtp.host) throw new Error("SMTP is not configured: set SMTP_HOST (and SMTP_PORT, SMTP_USER, SMTP_PASS, SMTP_FROM) on the pipeline");
  const key = JSON.stringify([smtp, s.timeoutMs]);
  if (cached?.key !== key) {
    cached?.transport.close();
    cached = {
      key,
      transport: nodemailer.createTransport({
        host: smtp.host,
        port: smtp.port,
        secure: smtp.secure,
        auth: smtp.user ? { user: smtp.user, pass: smtp.pass ?? "" } : undefined,
        connectionTimeout: s.timeoutMs,
        greetingTimeout: s.timeoutMs,
        socketTimeout: s.timeoutMs,
      }),
    };
  }
  return cached.transport;
}

export const emailChannel: NotificationChannel = {
  name: "email",
  label: "Email",
  targetHelp: "One or more addresses, separated by commas.",
  targetPlaceholder: "oncall@example.com, lead@example.com",
  async validateTarget(target) {
    return parseRecipients(target).join(", ");
  },
  async send(job, ctx) {
    await transportFor(ctx.settings).sendMail({
      from: ctx.settings.smtp.from,
      to: parseRecipients(job.target),
      subject: subjectOf(job),
      text: textOf(job),
      html: htmlOf(job),
      headers: { "X-Runwatch-Delivery": String(job.id) },
    });
  },
};
