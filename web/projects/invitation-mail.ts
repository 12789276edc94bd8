/**
 * The invitation e-mail, sent through the SMTP server the alerts use (SMTP_*, docs/ALERTS.md). Without one, or when
 * it refuses, the inviter is shown the link to pass on instead.
 */
import nodemailer from "nodemailer";
import { loadNotificationSettings } from "../../alerts/index.js";
import type { Role } from "../../core/access/roles.js";
import type { Project } from "../../stores/accounts/projects.js";
import type { SessionUser, WebDeps } from "../deps.js";

export async function sendInvitation(
  deps: WebDeps, m: { to: string; project: Project; role: Role; link: string; invitedBy: SessionUser },
): Promise<boolean> {
  const { smtp, timeoutMs } = loadNotificationSettings();
  if (!smtp.host) return false;
  const transport = nodemailer.createTransport({
    host: smtp.host, port: smtp.port, secure: smtp.secure, auth: smtp.user ? { user: smtp.user, pass: smtp.pass ?? "" } : undefined,
    connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs,
  });
  try {
    await transport.sendMail({
      from: smtp.from,
      to: m.to,
      subject: `${m.invitedBy.name} invited you to ${m.project.name} on Runwatch`,
      text: `${m.invitedBy.name} (${m.invitedBy.email}) invited you to the project ${m.project.name} as ${m.role}.\n\n` +
        `Accept within 7 days: ${m.link}\n\nThe link works once, for an account with the address ${m.to}.\n`,
    });
    return true;
  } catch (err) {
    deps.logger.warn("invitation e-mail not sent: showing the link instead", { err: (err as Error).message });
    return false;
  } finally {
    transport.close();
  }
}
