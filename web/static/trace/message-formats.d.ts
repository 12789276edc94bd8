export type Part =
  | { type: "text"; text: string; refusal?: true }
  | { type: "reasoning"; text: string; redacted?: true }
  | { type: "tool_call"; id?: string; name: string; arguments: unknown }
  | { type: "tool_result"; id?: string; name?: string; is_error?: true; content: Part[] }
  | { type: "media"; modality: string; mime?: string; size?: number; url?: string; name?: string }
  | { type: "json"; value: unknown };
export interface Message {
  role: string;
  name?: string;
  parts: Part[];
}
export function isMessageItem(value: unknown): boolean;
export function splitMessages(value: unknown, options?: { defaultRole?: string }): { messages: Message[]; rest?: Record<string, unknown>; cut?: true } | null;
export function normalizeMessages(value: unknown, options?: { defaultRole?: string }): Message[] | null;
