import type { Logger } from "../../../core/logger.js";
import type { PubSub } from "../../../core/ports/pubsub.js";
import type { ClaimedJob } from "../../../stores/alerts/jobs.js";
import type { NotificationSettings } from "../../settings.js";

export interface ChannelContext {
  readonly settings: NotificationSettings;
  readonly pubsub: PubSub;
  readonly logger: Logger;
}

/** A delivery failure that retrying cannot fix (refused target, 410 Gone): the job goes dead at once. */
export class PermanentFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentFailure";
  }
}

export interface NotificationChannel {
  readonly name: "email" | "slack" | "webhook" | "dashboard";
  readonly label: string;
  /** What the target field holds, for the form. */
  readonly targetHelp: string;
  readonly targetPlaceholder: string;
  /** Normalises a target or throws an Error whose message is shown next to the field. */
  validateTarget(target: string, settings: NotificationSettings): Promise<string>;
  /** Resolves when the peer accepted the notification; throws otherwise. */
  send(job: ClaimedJob, ctx: ChannelContext): Promise<void>;
}
