// A message's content in every provider's shape → the parts of the one message model (message-formats.js):
//   {type:"text", text, refusal?}            {type:"reasoning", text, redacted?}
//   {type:"tool_call", id?, name, arguments} {type:"tool_result", id?, name?, is_error?, content: Part[]}
//   {type:"media", modality, mime?, size?, url?, name?}   {type:"json", value} (structured data that is none of these)
// Pure functions of JSON values, no DOM: the unit tests import this module in Node.

export const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v) => (typeof v === "string" && v !== "" ? v : undefined);

/** A JSON text → its value; anything else (or text that does not parse) → undefined. */
export function parseJsonText(v) {
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (!(s.startsWith("{") && s.endsWith("}")) && !(s.startsWith("[") && s.endsWith("]"))) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/**
 * JSON text cut short (a preview the server cut, "…" at its end; OTLP content is stored that way) → the value its
 * complete part encodes: an open string closed, the last unfinished member dropped, open arrays and objects closed.
 * undefined when nothing of it parses.
 */
export function parseJsonPrefix(v) {
  if (typeof v !== "string") return undefined;
  const s = v.trimEnd().replace(/…$/, "");
  if (!/^\s*[[{]/.test(s)) return undefined;
  const stack = [];
  const cuts = []; // [end, closers]: places where what came before is complete
  let inString = false;
  let escaped = false;
  const closers = () => stack.map((c) => (c === "{" ? "}" : "]")).reverse().join("");
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      stack.push(c);
      cuts.push([i + 1, closers()]);
    } else if (c === "}" || c === "]") {
      stack.pop();
      cuts.push([i + 1, closers()]);
    } else if (c === ",") cuts.push([i, closers()]);
  }
  const tries = [];
  if (inString) tries.push(`${s.replace(/\\(u[0-9a-fA-F]{0,3})?$/, "")}"${closers()}`); // the open string, closed
  for (let k = cuts.length - 1; k >= 0 && tries.length < 6; k--) tries.push(s.slice(0, cuts[k][0]) + cuts[k][1]);
  for (const t of tries) {
    try {
      return JSON.parse(t);
    } catch {
      // the next shorter complete part
    }
  }
  return undefined;
}

/** Tool arguments are often sent as JSON text (OpenAI's `arguments`): shown as the value they encode. */
export const argumentsOf = (v) => parseJsonText(v) ?? v;

/** Bytes that base64 text (or a data: URL's payload) encodes. */
function base64Bytes(b64) {
  const s = b64.replace(/\s/g, "");
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((s.length * 3) / 4) - pad);
}

const MODALITIES = ["image", "audio", "video"];
const modalityOf = (mime, fallback) => MODALITIES.find((m) => typeof mime === "string" && mime.startsWith(`${m}/`)) ?? fallback;

/** A media placeholder: what it is and how big, never the bytes themselves (nor a request for them). */
function media(modality, { mime, data, url, name, size } = {}) {
  const part = { type: "media", modality: modalityOf(mime, modality) };
  let bytes = size;
  if (typeof url === "string" && url.startsWith("data:")) {
    const m = /^data:([^;,]*)(;base64)?,/.exec(url);
    if (m) {
      mime ??= m[1] || undefined;
      bytes ??= m[2] ? base64Bytes(url.slice(m[0].length)) : url.length - m[0].length;
      part.modality = modalityOf(mime, part.modality);
    }
    url = undefined; // the payload is the data: the size says enough
  }
  if (typeof data === "string" && bytes === undefined) bytes = base64Bytes(data);
  if (str(mime)) part.mime = mime;
  if (typeof bytes === "number" && Number.isFinite(bytes)) part.size = bytes;
  if (str(url)) part.url = url;
  if (str(name)) part.name = name;
  return part;
}

const text = (t, extra) => ({ type: "text", text: t, ...extra });
const reasoning = (t, redacted = false) => (redacted ? { type: "reasoning", text: t ?? "", redacted: true } : { type: "reasoning", text: t ?? "" });
const toolCall = (id, name, args) => ({ type: "tool_call", ...(str(id) ? { id } : {}), name: str(name) ?? "tool", arguments: argumentsOf(args) });
export const toolResult = (id, name, content, isError) => ({
  type: "tool_result", ...(str(id) ? { id } : {}), ...(str(name) ? { name } : {}), ...(isError ? { is_error: true } : {}), content: resultParts(content),
});

/** A tool's result: text or blocks as parts, any other value as structured data. */
function resultParts(v) {
  if (v === undefined || v === null) return [];
  const parsed = typeof v === "string" ? parseJsonText(v) : undefined;
  if (parsed !== undefined && !Array.isArray(parsed)) return [{ type: "json", value: parsed }];
  if (typeof v === "string" || Array.isArray(v)) return partsOf(v);
  return [{ type: "json", value: v }];
}

/** The text of a list of text-ish blocks ([{text}], Responses summaries), or undefined. */
const joinedText = (list) => (Array.isArray(list) ? list.map((x) => (typeof x === "string" ? x : x?.text ?? "")).filter(Boolean).join("\n\n") : undefined);

/** A `type`d block of OpenAI (chat and Responses), Anthropic, LangChain (v1 standard blocks) or OTel GenAI parts. */
function typedBlock(b) {
  switch (b.type) {
    case "text": case "input_text": case "output_text":
      return [text(typeof b.text === "string" ? b.text : typeof b.content === "string" ? b.content : JSON.stringify(b.text ?? b.content ?? ""))];
    case "refusal":
      return [text(String(b.refusal ?? b.text ?? ""), { refusal: true })];
    case "image_url":
      return [media("image", { url: isObj(b.image_url) ? b.image_url.url : b.image_url })];
    case "input_image":
      return [media("image", { url: b.image_url, name: b.file_id })];
    case "image": case "audio": case "video": {
      const src = isObj(b.source) ? b.source : b; // Anthropic's source, or LangChain's flat block
      return [media(b.type, { mime: src.media_type ?? src.mime_type ?? src.mimeType, data: src.type === "base64" || src.source_type === "base64" ? src.data : src.base64 ?? (typeof src.data === "string" ? src.data : undefined), url: src.url, name: src.file_id ?? src.id })];
    }
    case "input_audio": {
      const a = isObj(b.input_audio) ? b.input_audio : b;
      return [media("audio", { mime: str(a.format) ? `audio/${a.format}` : undefined, data: a.data })];
    }
    case "file": case "input_file": case "document": {
      if (str(b.modality) || str(b.file_id) && str(b.mime_type)) return [media(b.modality ?? "file", { mime: b.mime_type, name: b.file_id })]; // OTel FilePart
      const f = isObj(b.file) ? b.file : isObj(b.source) ? b.source : b;
      if (f.type === "text" && typeof f.data === "string") return [media("file", { mime: f.media_type ?? "text/plain", size: f.data.length, name: b.title })];
      return [media("file", { mime: f.media_type ?? f.mime_type ?? f.mimeType, data: f.type === "base64" || !f.type ? f.file_data ?? f.data : undefined, url: f.file_url ?? f.url, name: f.filename ?? b.filename ?? b.title ?? f.file_id ?? b.file_id })];
    }
    case "blob":
      return [media(b.modality ?? "file", { mime: b.mime_type, data: b.content })];
    case "uri":
      return [media(b.modality ?? "file", { mime: b.mime_type, url: b.uri })];
    case "tool_use": case "server_tool_use":
      return [toolCall(b.id, b.name, b.input)];
    case "tool_call": // OTel GenAI (arguments) and LangChain (args)
      return [toolCall(b.id, b.name, b.arguments ?? b.args)];
    case "function_call":
      return [toolCall(b.call_id ?? b.id, b.name, b.arguments)];
    case "tool_result":
      return [toolResult(b.tool_use_id ?? b.tool_call_id, b.name, b.content ?? b.output, b.is_error === true || b.status === "error")];
    case "tool_call_response": // OTel GenAI
      return [toolResult(b.id, b.name, b.response ?? b.result)];
    case "function_call_output":
      return [toolResult(b.call_id, b.name, b.output)];
    case "thinking":
      return [reasoning(b.thinking ?? b.text)];
    case "redacted_thinking":
      return [reasoning("", true)];
    case "reasoning": { // OTel (content), LangChain (reasoning), a Responses reasoning item used as a block
      const t = typeof b.content === "string" ? b.content : str(b.reasoning) ?? joinedText(b.summary) ?? joinedText(b.content);
      return [reasoning(t ?? "", !t && b.encrypted_content !== undefined)];
    }
    case "summary_text": case "reasoning_text":
      return [reasoning(String(b.text ?? ""))];
    case "executable_code":
      return [toolCall(undefined, "code_execution", { language: b.language, code: b.code })];
    case "code_execution_result":
      return [toolResult(undefined, "code_execution", b.output ?? b.outcome)];
    default:
      if (b.type.endsWith("_tool_result")) return [toolResult(b.tool_use_id, b.type.slice(0, -"_tool_result".length), b.content, b.is_error === true)];
      return [{ type: "json", value: b }];
  }
}

/** A block without `type`: Gemini's parts and AWS Bedrock's content blocks (which Strands sends). */
function untypedBlock(b) {
  if (typeof b.text === "string") return [b.thought === true ? reasoning(b.text) : text(b.text)];
  const inline = b.inlineData ?? b.inline_data;
  if (isObj(inline)) return [media("file", { mime: inline.mimeType ?? inline.mime_type, data: inline.data, name: inline.displayName ?? inline.display_name })];
  const file = b.fileData ?? b.file_data;
  if (isObj(file)) return [media("file", { mime: file.mimeType ?? file.mime_type, url: file.fileUri ?? file.file_uri, name: file.displayName ?? file.display_name })];
  const call = b.functionCall ?? b.function_call;
  if (isObj(call)) return [toolCall(call.id, call.name, call.args ?? call.arguments)];
  const resp = b.functionResponse ?? b.function_response;
  if (isObj(resp)) return [toolResult(resp.id, resp.name, resp.response)];
  const code = b.executableCode ?? b.executable_code;
  if (isObj(code)) return [toolCall(undefined, "code_execution", { language: code.language, code: code.code })];
  const outcome = b.codeExecutionResult ?? b.code_execution_result;
  if (isObj(outcome)) return [toolResult(undefined, "code_execution", outcome.output ?? outcome.outcome)];
  if (isObj(b.toolUse)) return [toolCall(b.toolUse.toolUseId, b.toolUse.name, b.toolUse.input)];
  if (isObj(b.toolResult)) return [toolResult(b.toolResult.toolUseId, undefined, b.toolResult.content, b.toolResult.status === "error")];
  if (isObj(b.reasoningContent)) {
    const r = b.reasoningContent;
    return [isObj(r.reasoningText) ? reasoning(String(r.reasoningText.text ?? "")) : reasoning("", true)];
  }
  if (isObj(b.image)) return [media("image", { mime: str(b.image.format) ? `image/${b.image.format}` : undefined, data: typeof b.image.source?.bytes === "string" ? b.image.source.bytes : undefined })];
  if (isObj(b.document)) return [media("file", { mime: str(b.document.format) ? `application/${b.document.format}` : undefined, data: typeof b.document.source?.bytes === "string" ? b.document.source.bytes : undefined, name: b.document.name })];
  if ("json" in b && Object.keys(b).length === 1) return [{ type: "json", value: b.json }];
  return [{ type: "json", value: b }];
}

/** One content block → parts. */
export function blockParts(b) {
  if (typeof b === "string") return b === "" ? [] : [text(b)];
  if (b === null || b === undefined) return [];
  if (!isObj(b)) return [{ type: "json", value: b }];
  return typeof b.type === "string" ? typedBlock(b) : untypedBlock(b);
}

/**
 * A message's `content` (or `parts`) → parts: text as it is; a list of blocks one by one; JSON text holding a list
 * of blocks (Strands' GenAI events: '[{"text": "…"}]') as those blocks.
 */
export function partsOf(content) {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") {
    const parsed = parseJsonText(content);
    if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isContentBlock)) return parsed.flatMap(blockParts);
    return content === "" ? [] : [text(content)];
  }
  if (Array.isArray(content)) return content.flatMap(blockParts);
  return blockParts(content);
}

const BLOCK_TYPES = new Set([
  "text", "input_text", "output_text", "refusal", "image_url", "input_image", "image", "audio", "video", "input_audio", "file", "input_file",
  "document", "blob", "uri", "tool_use", "server_tool_use", "tool_call", "tool_result", "tool_call_response", "thinking", "redacted_thinking",
  "reasoning", "executable_code", "code_execution_result", "web_search_tool_result",
]);
const UNTYPED_KEYS = ["inlineData", "inline_data", "fileData", "file_data", "functionCall", "function_call", "functionResponse", "function_response", "executableCode", "codeExecutionResult", "toolUse", "toolResult", "reasoningContent"];

/** Whether a value is a content block of some provider (so a role-less list of them is one message). */
export function isContentBlock(b) {
  if (!isObj(b) || "role" in b) return false;
  if (typeof b.type === "string") return BLOCK_TYPES.has(b.type);
  if (typeof b.text === "string" && Object.keys(b).every((k) => k === "text" || k === "thought" || k === "thoughtSignature" || k === "thought_signature")) return true;
  return UNTYPED_KEYS.some((k) => isObj(b[k])) || (Object.keys(b).length === 1 && (isObj(b.image) || isObj(b.document)));
}

/** OpenAI chat's and LangChain's tool calls on a message → tool_call parts. */
export function toolCallParts(calls) {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObj).map((call) => {
    const c = isObj(call.tool_call) ? call.tool_call : call; // OpenInference wraps each call: tool_calls.0.tool_call.function.name
    return isObj(c.function) ? toolCall(c.id, c.function.name, c.function.arguments) : toolCall(c.id ?? c.call_id, c.name, c.args ?? c.arguments ?? c.input);
  });
}

export { media, reasoning, text, toolCall, joinedText, str };
