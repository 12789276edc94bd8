import { dashboardChannel } from "./dashboard.js";
import { emailChannel } from "./email.js";
import { slackChannel } from "./slack.js";
import type { NotificationChannel } from "./types.js";
import { webhookChannel } from "./webhook.js";

export type { NotificationChannel, ChannelContext } from "./types.js";
export { PermanentFailure } from "./types.js";

export const CHANNELS: readonly NotificationChannel[] = [emailChannel, slackChannel, webhookChannel, dashboardChannel];

export const channelByName = (name: string): NotificationChannel | undefined => CHANNELS.find((c) => c.name === name);
