/**
 * Language detection: the guesslang model shipped in @vscode/vscode-languagedetection (loaded once per
 * process, reused), combined with syntax markers (heuristics.ts) that settle close relatives and short
 * snippets. Falls back to "plaintext" when neither gives enough evidence.
 */
import type languageDetection from "@vscode/vscode-languagedetection";
import { fromModelLabel, findLanguage } from "../../core/agents/languages.js";
import { markerScores } from "./heuristics.js";

import type { DetectionMethod } from "../../core/agents/contract.js";

export type { DetectionMethod };

export interface Detection {
  /** VS Code language id, e.g. "python", "typescript", or "plaintext". */
  readonly language: string;
  /** 0..1: the model's probability, raised by syntax markers when they agree (capped at 1). */
  readonly confidence: number;
  readonly method: DetectionMethod;
  /** Top candidates considered, best first (for diagnostics and the dashboard). */
  readonly candidates: ReadonlyArray<{ language: string; score: number }>;
}

/** Below this combined score the best guess is not trusted and the answer is "plaintext". */
export const MIN_CONFIDENCE = 0.1;
/** The model needs this many characters (its own default minimum). */
const MODEL_MIN_CHARS = 20;

/** A language that is (almost) a superset of another: without its own markers, prefer the subset. */
const SUPERSETS: ReadonlyArray<{ superset: string; subset: string }> = [
  { superset: "typescript", subset: "javascript" },
  { superset: "cpp", subset: "c" },
];

type ModelOps = InstanceType<typeof languageDetection.ModelOperations>;
export type DetectorState = "idle" | "loading" | "ready" | "failed";
let model: Promise<ModelOps> | undefined;
let state: DetectorState = "idle";

/**
 * The model is loaded on the first detection, not at start: it costs memory that a server whose /improve is never
 * called should not pay, and only the first detection waits for it (docs/BENCHMARKS.md, "Parts loaded on demand").
 */
function getModel(): Promise<ModelOps> {
  model ??= (async () => {
    state = "loading";
    try {
      const { default: detection } = await import("@vscode/vscode-languagedetection");
      const ops = new detection.ModelOperations();
      await ops.runModel("function warmUp() { return 42; }\nconsole.log(warmUp());");
      state = "ready";
      return ops;
    } catch (err) {
      state = "failed";
      model = undefined; // the next request tries again
      throw err;
    }
  })();
  return model;
}

/** Whether the model has been loaded (GET /health). */
export const detectorState = (): DetectorState => state;

async function modelScores(code: string): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  if (code.trim().length < MODEL_MIN_CHARS) return scores;
  for (const r of await (await getModel()).runModel(code)) {
    const lang = fromModelLabel(r.languageId);
    if (lang) scores.set(lang.id, r.confidence);
  }
  return scores;
}

export async function detectLanguage(code: string): Promise<Detection> {
  const [byModel, byMarkers] = [await modelScores(code), markerScores(code)];
  const combined = new Map(byModel);
  for (const [lang, s] of byMarkers) combined.set(lang, (combined.get(lang) ?? 0) + s);

  const ranked = [...combined.entries()].sort((a, b) => b[1] - a[1]);
  const candidates = ranked.slice(0, 5).map(([language, score]) => ({ language, score: round(Math.min(1, score)) }));
  if (ranked.length === 0 || ranked[0][1] < MIN_CONFIDENCE) {
    return { language: "plaintext", confidence: 0, method: "fallback", candidates };
  }

  let [language, score] = ranked[0];
  const rule = SUPERSETS.find((r) => r.superset === language);
  if (rule && !byMarkers.has(rule.superset) && (combined.get(rule.subset) ?? 0) > 0) {
    language = rule.subset;
    score = Math.max(combined.get(rule.subset) ?? 0, score);
  }

  const method: DetectionMethod = !byModel.size ? "heuristics" : byMarkers.size ? "model+heuristics" : "model";
  return { language, confidence: round(Math.min(1, score)), method, candidates };
}

/** The caller named the language: normalise it ("py" → "python"); unknown names are kept as given. */
export function callerLanguage(name: string): Detection {
  const language = findLanguage(name)?.id ?? name.trim().toLowerCase();
  return { language, confidence: 1, method: "caller", candidates: [{ language, score: 1 }] };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
