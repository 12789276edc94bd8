/**
 * The gate's rules on a prompt's page (docs/PROMPTS.md, The gate on production), as the API sets them
 * (prompt-gate-api.ts) and with the same roles (`edit_prompts`):
 *
 *   POST /prompts/:name/gate/rules          {score_name, max_drop}: add a rule, or change the score's
 *   POST /prompts/:name/gate/rules/remove   {score_name}: remove it
 *
 * A refusal shows the prompt's page again with the form as sent and the message by its field.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { parseGateRule } from "../../stores/experiment-gate.js";
import { removePromptGateRule, setPromptGateRule } from "../../stores/prompt-gate-rules.js";
import { checkPromptName } from "../../stores/prompt-input.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { mountPages } from "../route-table.js";
import { promptPage } from "./prompts-page.js";

export function registerPromptGatePage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    edit_prompts: { "POST /prompts/:name/gate/rules": addRule, "POST /prompts/:name/gate/rules/remove": removeRule },
  });
}

const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;
const promptPath = (name: string) => `/prompts/${encodeURIComponent(name)}`;

async function addRule(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = checkPromptName(ctx.params.name);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "score_name",
    run: async () => {
      const rule = parseGateRule({ score_name: form.score_name, max_drop: form.max_drop });
      await setPromptGateRule(deps.ports.sql, projectOfRequest(ctx).id, name, rule, userOf(ctx));
      redirectAfterPost(ctx, promptPath(name), `Gate rule: ${rule.score_name} mean may drop by at most ${rule.max_drop}`);
    },
    refused: (r) => promptPage(ctx, deps, { gate_values: form, gate_errors: { [r.field]: r.message } }, r.status),
  });
}

async function removeRule(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = checkPromptName(ctx.params.name);
  await formAction({
    refuses: ["ValidationError", "NotFound"],
    field: "score_name",
    run: async () => {
      const { score_name } = parseGateRule({ score_name: form.score_name, max_drop: 0 });
      await removePromptGateRule(deps.ports.sql, projectOfRequest(ctx).id, name, score_name, userOf(ctx));
      redirectAfterPost(ctx, promptPath(name), `Gate rule on ${score_name} removed`);
    },
    refused: (r) => promptPage(ctx, deps, { gate_errors: { [r.field]: r.message } }, r.status),
  });
}
