/**
 * Single sign-on with OpenID Connect (docs/TEAMS.md): the authorization code flow with PKCE, through openid-client.
 * GET /auth/oidc/login sends the browser to the provider with a fresh state, nonce and code verifier kept in the
 * session; GET /auth/oidc/callback checks them, exchanges the code, and logs in the user of the ID token's identity
 * (stores/accounts/identities.ts). The provider's metadata is discovered at the first sign-in and kept.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import * as oidc from "openid-client";
import type { OidcConfig } from "../../core/config.js";
import { signInWithIdentity, UNVERIFIED_ACCOUNT } from "../../stores/accounts/identities.js";
import type { WebDeps } from "../deps.js";
import { statusOf } from "../http-errors.js";
import { render } from "../views.js";
import { currentUser, logIn, requireUser } from "./session.js";
import { safeNext } from "./safe-next.js";

interface Pending { state: string; nonce: string; verifier: string; next: string; redirectUri: string }
type OidcSession = { oidc?: Pending | null } | null | undefined;
const sessionOf = (ctx: Context) => (ctx as unknown as { session: OidcSession }).session;

/** Plain HTTP only to a provider on this machine (a development provider); anything else must be HTTPS. */
const isLoopback = (url: URL) => ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);

/** The provider of the settings, its metadata discovered at the first sign-in and kept (a failed discovery is not). */
interface Provider {
  readonly settings: OidcConfig;
  readonly configuration: () => Promise<oidc.Configuration>;
}

/** What the ID token says of the user (its e-mail and name from the UserInfo answer when the token has no e-mail). */
type Claims = oidc.IDToken & { email?: unknown; email_verified?: unknown; name?: unknown };

function providerOf(settings: OidcConfig): Provider {
  const issuer = new URL(settings.issuer);
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(issuer, settings.clientId, settings.clientSecret || undefined, undefined, {
        execute: issuer.protocol === "http:" && isLoopback(issuer) ? [oidc.allowInsecureRequests] : [],
        timeout: 10,
      })
      .catch((err: unknown) => {
        discovered = undefined; // the next sign-in tries again
        throw err;
      });
    return discovered;
  };
  return { settings, configuration };
}

export function registerOidcRoutes(router: Router, deps: WebDeps, settings: OidcConfig): void {
  const provider = providerOf(settings);
  router.get("/auth/oidc/login", (ctx) => startSignIn(ctx, deps, provider));
  // The way back after the password's login (the refusal below): a page, not a redirect, because a browser refuses to
  // follow the login form's redirects to another origin (the CSP's form-action 'self').
  router.get("/auth/oidc/link", requireUser, (ctx) => linkPage(ctx, settings));
  router.get("/auth/oidc/callback", (ctx) => finishSignIn(ctx, deps, provider));
}

// RUNWATCH_PUBLIC_URL when set (behind a proxy), else the address the browser used; the provider accepts only the
// redirect URIs registered for the client.
const callbackUrl = (ctx: Context, deps: WebDeps) =>
  `${deps.ports.config.publicWebUrlSet ? deps.ports.config.publicWebUrl.replace(/\/+$/, "") : `${ctx.protocol}://${ctx.host}`}/auth/oidc/callback`;

const failed = (ctx: Context, message: string, status: number) =>
  render(ctx, "error.njk", { title: "Single sign-on failed", heading: "Single sign-on failed", message }, status);

/** GET /auth/oidc/login: to the provider, with a fresh state, nonce and code verifier kept in the session. */
async function startSignIn(ctx: Context, deps: WebDeps, provider: Provider): Promise<void> {
  let config: oidc.Configuration;
  try {
    config = await provider.configuration();
  } catch (err) {
    deps.logger.error("OpenID Connect discovery failed", { issuer: provider.settings.issuer, err: (err as Error).message });
    return failed(ctx, `The identity provider (${provider.settings.issuer}) cannot be reached right now. Try again later.`, 503);
  }
  const pending: Pending = {
    state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next: safeNext(ctx.query.next), redirectUri: callbackUrl(ctx, deps),
  };
  const session = sessionOf(ctx);
  if (session) session.oidc = pending;
  ctx.redirect(
    oidc.buildAuthorizationUrl(config, {
      redirect_uri: pending.redirectUri,
      scope: "openid email profile",
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: "S256",
    }).href,
  );
}

/** GET /auth/oidc/link: signing in with the provider again links it to the account now logged in. */
const linkPage = (ctx: Context, settings: OidcConfig) =>
  render(ctx, "auth/link-sso.njk", { title: "Link single sign-on", email: (ctx.state.user as { email: string }).email, sso: { label: settings.label }, next: safeNext(ctx.query.next) });

/** GET /auth/oidc/callback: checks the answer against the session's sign-in (once), then logs its user in. */
async function finishSignIn(ctx: Context, deps: WebDeps, provider: Provider): Promise<void> {
  const session = sessionOf(ctx);
  const pending = session?.oidc;
  if (session) session.oidc = null; // one use, whatever happens
  if (!pending) return failed(ctx, "This sign-in was not started here, or it was already used. Start again from the login page.", 400);
  let claims: Claims | undefined;
  try {
    claims = await exchangeCode(ctx, provider, pending);
  } catch (err) {
    deps.logger.warn("OpenID Connect sign-in refused", { err: (err as Error).message });
    return failed(ctx, "The identity provider's answer could not be verified. Start again from the login page.", 400);
  }
  if (!claims) return failed(ctx, "The identity provider sent no ID token.", 400);
  await signInAs(ctx, deps, provider.settings, pending, claims);
}

/** The code of the callback's URL exchanged for the ID token's claims, checked against the pending sign-in. */
async function exchangeCode(ctx: Context, provider: Provider, pending: Pending): Promise<Claims | undefined> {
  const config = await provider.configuration();
  const tokens = await oidc.authorizationCodeGrant(config, new URL(ctx.originalUrl, pending.redirectUri), {
    pkceCodeVerifier: pending.verifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
  const claims: Claims | undefined = tokens.claims();
  // Many providers put the profile in the UserInfo answer only (the ID token then has no e-mail): ask it.
  if (claims && typeof claims.email !== "string") {
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    return { ...claims, email: info.email, email_verified: info.email_verified, name: claims.name ?? info.name };
  }
  return claims;
}

/**
 * Logs in the user of the claims' identity (stores/accounts/identities.ts); an address whose account the provider
 * may not claim, or a refused identity, gets a page that says so.
 */
async function signInAs(ctx: Context, deps: WebDeps, settings: OidcConfig, pending: Pending, claims: Claims): Promise<void> {
  try {
    const user = await signInWithIdentity(
      deps.ports.sql,
      {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof claims.email === "string" ? claims.email : undefined,
        emailVerified: claims.email_verified === true,
        name: typeof claims.name === "string" ? claims.name : undefined,
      },
      { allowedDomains: settings.allowedDomains, defaultProject: settings.defaultProject, defaultRole: settings.defaultRole },
      currentUser(ctx),
    );
    await logIn(ctx, user);
    deps.logger.info("signed in with OpenID Connect", { user_id: user.id, created: user.created, linked: user.linked });
    ctx.redirect(pending.next);
  } catch (err) {
    const e = err as { _tag?: string; code?: string; message: string };
    if (e._tag === "Conflict" && e.code === UNVERIFIED_ACCOUNT) {
      // Logging in with the password, then signing in here again, links the identity to that account.
      const link = `/auth/oidc/link?next=${encodeURIComponent(pending.next)}`;
      const action = deps.ports.config.passwordLogin ? { href: `/login?next=${encodeURIComponent(link)}`, label: "Log in with the password" } : undefined;
      return render(ctx, "error.njk", { title: "Single sign-on failed", heading: "This address has an account already", message: e.message, action }, statusOf(err));
    }
    if (e._tag !== "AuthError") throw err;
    return failed(ctx, e.message, statusOf(err));
  }
}
