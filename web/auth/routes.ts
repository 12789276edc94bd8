/** GET/POST /register, GET/POST /login, POST /logout, and GET / (to the dashboard or the login page). */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { readForm } from "../forms.js";
import { render } from "../views.js";
import { checkCredentials, createUser } from "../accounts/users.js";
import { currentUser, logIn, logOut } from "./session.js";

/** Only same-site relative paths are followed after login (no open redirect). */
export const safeNext = (next: unknown): string =>
  typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/dashboard";

interface FieldErrors { [field: string]: string }

export function registerAuthRoutes(router: Router, deps: WebDeps): void {
  const { sql } = deps.ports;

  router.get("/", (ctx) => ctx.redirect(currentUser(ctx) ? "/dashboard" : "/login"));

  const registerPage = (ctx: Context, values: Record<string, string> = {}, errors: FieldErrors = {}, status = 200) =>
    render(ctx, "auth/register.njk", { title: "Create your account", values, errors }, status);

  router.get("/register", (ctx) => (currentUser(ctx) ? ctx.redirect("/dashboard") : registerPage(ctx)));

  router.post("/register", async (ctx) => {
    const form = await readForm(ctx);
    const values = { email: form.email ?? "", name: form.name ?? "" };
    if ((form.password ?? "") !== (form.password_confirm ?? form.password ?? "")) {
      return registerPage(ctx, values, { password_confirm: "The passwords do not match." }, 422);
    }
    try {
      const user = await createUser(sql, { email: values.email, name: values.name, password: form.password ?? "" });
      await logIn(ctx, user);
      deps.logger.info("user registered", { user_id: user.id });
      ctx.redirect("/settings/api-keys");
    } catch (err) {
      const e = err as { _tag?: string; field?: string; message: string };
      if (e._tag === "ValidationError" || e._tag === "Conflict") {
        return registerPage(ctx, values, { [e.field ?? "form"]: e.message }, e._tag === "Conflict" ? 409 : 422);
      }
      throw err;
    }
  });

  const loginPage = (ctx: Context, values: Record<string, string> = {}, error = "", status = 200) =>
    render(ctx, "auth/login.njk", { title: "Log in", values, error, next: safeNext(values.next ?? ctx.query.next) }, status);

  router.get("/login", (ctx) => (currentUser(ctx) ? ctx.redirect(safeNext(ctx.query.next)) : loginPage(ctx)));

  router.post("/login", async (ctx) => {
    const form = await readForm(ctx);
    const values = { email: form.email ?? "", next: form.next ?? "" };
    if (!values.email.trim() || !form.password) return loginPage(ctx, values, "Enter your email and password.", 422);
    const user = await checkCredentials(sql, values.email, form.password);
    if (!user) return loginPage(ctx, values, "Wrong email or password.", 401);
    await logIn(ctx, user);
    ctx.redirect(safeNext(values.next));
  });

  router.post("/logout", (ctx) => {
    logOut(ctx);
    ctx.redirect("/login");
  });
}
