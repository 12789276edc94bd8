/**
 * Language detection accuracy on the fixture set (agents-service/test/fixtures/<language>/*.txt: 130 snippets in
 * 13 languages, written for this test). Prints accuracy overall and per language, for the shipped detector
 * (guesslang model + syntax markers) and for the bare model as a baseline.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import languageDetection from "@vscode/vscode-languagedetection";
import { describe, expect, it } from "vitest";
import { detectLanguage, callerLanguage } from "../language/detect.js";
import { fromModelLabel } from "../../core/agents/languages.js";

const DIR = path.join(import.meta.dirname, "fixtures");
const fixtures = readdirSync(DIR).sort().flatMap((lang) =>
  readdirSync(path.join(DIR, lang)).sort().map((f) => ({ lang, file: `${lang}/${f}`, code: readFileSync(path.join(DIR, lang, f), "utf8") })),
);

describe("language detection accuracy", () => {
  it(`detects ≥ 90% of ${fixtures.length} snippets and every language ≥ 70%`, async () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(100);
    const languages = [...new Set(fixtures.map((f) => f.lang))];
    expect(languages.length).toBeGreaterThanOrEqual(10);

    const model = new languageDetection.ModelOperations();
    const rows = new Map<string, { n: number; ok: number; modelOk: number }>();
    const misses: string[] = [];
    let ms = 0;
    for (const f of fixtures) {
      const t0 = performance.now();
      const d = await detectLanguage(f.code);
      ms += performance.now() - t0;
      const top = (await model.runModel(f.code))[0];
      const bare = top ? fromModelLabel(top.languageId)?.id : undefined;
      const row = rows.get(f.lang) ?? { n: 0, ok: 0, modelOk: 0 };
      row.n++;
      if (d.language === f.lang) row.ok++;
      else misses.push(`${f.file} → ${d.language} (${d.confidence}, ${d.method})`);
      if (bare === f.lang) row.modelOk++;
      rows.set(f.lang, row);
    }
    const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`.padStart(6);
    const total = [...rows.values()].reduce((a, r) => ({ n: a.n + r.n, ok: a.ok + r.ok, modelOk: a.modelOk + r.modelOk }), { n: 0, ok: 0, modelOk: 0 });
    const lines = [
      `language detection on ${total.n} snippets in ${rows.size} languages (mean ${(ms / total.n).toFixed(1)} ms per snippet)`,
      `${"language".padEnd(12)} ${"n".padStart(3)}  detector  model only`,
      ...[...rows].map(([lang, r]) => `${lang.padEnd(12)} ${String(r.n).padStart(3)}  ${pct(r.ok, r.n)}    ${pct(r.modelOk, r.n)}`),
      `${"OVERALL".padEnd(12)} ${String(total.n).padStart(3)}  ${pct(total.ok, total.n)}    ${pct(total.modelOk, total.n)}`,
      ...(misses.length ? ["misses:", ...misses.map((m) => `  ${m}`)] : []),
    ];
    console.log(lines.join("\n"));

    expect(total.ok / total.n).toBeGreaterThanOrEqual(0.9);
    for (const [lang, r] of rows) expect(r.ok / r.n, lang).toBeGreaterThanOrEqual(0.7);
  }, 120_000);
});

describe("fallbacks", () => {
  it("prose is plaintext, with confidence 0", async () => {
    const d = await detectLanguage("Hello team, please find attached the quarterly report. Let me know if you have any questions about the numbers.");
    expect(d).toMatchObject({ language: "plaintext", confidence: 0, method: "fallback" });
  });

  it("snippets too short for the model use the syntax markers", async () => {
    expect(await detectLanguage("<?php echo 1;")).toMatchObject({ language: "php", method: "heuristics" });
    expect(await detectLanguage("#!/bin/bash\nls")).toMatchObject({ language: "shellscript", method: "heuristics" });
    expect((await detectLanguage("x")).language).toBe("plaintext");
  });

  it("TypeScript needs TypeScript syntax; otherwise it is JavaScript", async () => {
    const js = "export async function load(url) {\n  const res = await fetch(url);\n  return res.json();\n}\n";
    const ts = "export async function load(url: string): Promise<unknown> {\n  const res = await fetch(url);\n  return res.json();\n}\n";
    expect((await detectLanguage(js)).language).toBe("javascript");
    expect((await detectLanguage(ts)).language).toBe("typescript");
  });

  it("caller-named languages are normalised", () => {
    expect(callerLanguage("C#").language).toBe("csharp");
    expect(callerLanguage("bash").language).toBe("shellscript");
    expect(callerLanguage("Elm").language).toBe("elm");
  });
});
