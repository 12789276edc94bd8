/**
 * Reading the run page's trace view as a reader sees it (web/static/trace/view.js draws only the rows on screen, in
 * any DOM order): the rows drawn, in list order, with their span id, level and text; and the panel.
 */
import type { Page } from "playwright-core";

export interface Row { id: string; level: number; expanded: string | null; selected: boolean; text: string; kind: string; dur: string }

/** The rows drawn now (on screen and a few beyond), in list order; the run's own row has id "". */
export const traceRows = (page: Page): Promise<Row[]> => page.$$eval(".tv-row:not([hidden])", (els) =>
  (els as HTMLElement[])
    .sort((a, b) => Number(a.dataset.row) - Number(b.dataset.row))
    .map((el) => ({
      id: el.dataset.spanId ?? "",
      level: Number(el.getAttribute("aria-level")),
      expanded: el.getAttribute("aria-expanded"),
      selected: el.getAttribute("aria-selected") === "true",
      text: el.textContent!.replace(/\s+/g, " ").trim(),
      kind: el.querySelector(".tv-kind")?.textContent ?? "",
      dur: el.querySelector(".tv-dur")?.textContent ?? "",
    })));

/** The row of a span (by id) as a CSS selector; ids may hold any character. */
export const rowOf = (id: string) => `.tv-row[data-span-id="${id.replace(/["\\]/g, "\\$&")}"]`;

/** Waits until the panel shows span `id` ("" for the run) read whole. */
export async function panelShows(page: Page, id: string, timeout = 10_000): Promise<string> {
  await page.waitForFunction((want) => {
    const p = document.getElementById("trace-panel");
    return p?.dataset.spanId === want && !p.hasAttribute("aria-busy") && !!p.querySelector(".tp-head");
  }, id, { timeout });
  return (await page.textContent("#trace-panel")) ?? "";
}
