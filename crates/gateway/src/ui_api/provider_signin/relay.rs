//! `messages_vendor` sign-in relayed through the user's computer (spec 5.10;
//! interfaces-full.md 2.1). The vendor's public client only redirects to
//! `http://localhost:54545/callback`, which the gateway cannot reach, so:
//!
//! 1. `GET /_ui/api/providers/messages_vendor/auth` keeps `{state, PKCE
//!    verifier, user}` for ten minutes and answers the authorize URL (302,
//!    or `{auth_url, state, relay_script_url}` for `Accept: application/json`);
//! 2. `GET /_ui/api/providers/messages_vendor/relay-script?state=` (no
//!    session: the user pipes it to `sh`) is a script that listens on
//!    `127.0.0.1:54545` with `python3`, waits for the browser's redirect,
//!    and posts `{code, state}` to the relay URL with `curl`;
//! 3. `POST /_ui/api/providers/messages_vendor/relay {code, state}` (no
//!    session and no CSRF token: the single-use `state` is the credential)
//!    ends the flow, exchanges the code with the verifier and keeps the
//!    tokens as an account of the user who started it. An unknown, expired
//!    or used `state` is 400 `validation_error` and nothing is stored.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::{
    keep_account, public_base, required_public_base, wants_json, SignedInAccount, PENDING_TTL_SECS,
};
use crate::config::Secret;
use crate::error::GatewayError;
use crate::providers::direct::credentials::oauth::token_url;
use crate::providers::direct::credentials::oauth_signin::{
    authorize_url, bare_code, CodeExchange, CodeGrant, HttpCodeExchange, RELAY_PORT,
};
use crate::providers::id::ProviderId;
use crate::sso::pkce::{random_value, s256_challenge};
use crate::state::AppState;
use crate::store::clock::now;
use crate::store::ids::{ProviderAccountId, UserId};
use crate::store::Store;
use crate::ui_api::json::UiJson;
use crate::ui_api::reply::{redirect, OK};

/// The pending store's name of this flow.
const FLOW: &str = "messages_vendor";
/// Longest code accepted, in bytes.
const CODE_MAX: usize = 2048;

/// `GET .../messages_vendor/auth` with `Accept: application/json`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct MessagesVendorAuth {
    auth_url: String,
    state: String,
    relay_script_url: String,
}

/// `POST .../relay`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RelayBody {
    code: String,
    state: String,
}

/// What `POST .../relay` answers.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct Relayed {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    provider: ProviderId,
    account_id: ProviderAccountId,
}

/// `?state=` of the relay script.
#[derive(Debug, Deserialize)]
pub(crate) struct ScriptQuery {
    state: Option<String>,
}

/// Start a sign-in of `user` (step 1).
pub(super) async fn start(
    app: &AppState,
    user: UserId,
    headers: &HeaderMap,
) -> Result<Response, GatewayError> {
    let verifier = random_value();
    let state = random_value();
    app.store()?
        .provider_oauth_pending()
        .create(
            &state,
            user,
            FLOW,
            &Secret::new(verifier.clone()),
            PENDING_TTL_SECS,
        )
        .await?;
    let auth_url = authorize_url(
        app.config()
            .upstream
            .messages_vendor_oauth_base_url
            .as_deref(),
        &s256_challenge(&verifier),
        &state,
    );
    tracing::info!(user_id = %user, "messages_vendor sign-in started");
    if !wants_json(headers) {
        return Ok(redirect(&auth_url));
    }
    let base = public_base(app, headers).unwrap_or_default();
    let relay_script_url =
        format!("{base}/_ui/api/providers/messages_vendor/relay-script?state={state}");
    Ok(Json(MessagesVendorAuth {
        auth_url,
        state,
        relay_script_url,
    })
    .into_response())
}

/// The only provider whose sign-in is relayed; others are 404 here.
fn relayed(raw: &str) -> Result<ProviderId, GatewayError> {
    match ProviderId::parse(raw) {
        Some(id @ ProviderId::MessagesVendor) => Ok(id),
        _ => Err(GatewayError::NotFound(format!(
            "'{raw}' has no relayed sign-in"
        ))),
    }
}

/// Whether `state` is one this gateway could have made (it is embedded in
/// a shell script, so only these characters pass).
fn plausible_state(state: &str) -> bool {
    (16..=128).contains(&state.len())
        && state
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `GET /_ui/api/providers/{provider}/relay-script?state=` (step 2).
pub(crate) async fn script(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    Query(query): Query<ScriptQuery>,
    headers: HeaderMap,
) -> Result<Response, GatewayError> {
    let id = relayed(&raw)?;
    let state = query.state.filter(|s| plausible_state(s)).ok_or_else(|| {
        GatewayError::validation(
            "state: the value from GET /_ui/api/providers/messages_vendor/auth",
        )
    })?;
    let base = required_public_base(&app, &headers)?;
    let relay_url = format!("{base}/_ui/api/providers/{id}/relay");
    let mut response = relay_script(&relay_url, &state).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/x-shellscript; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `POST /_ui/api/providers/{provider}/relay` (step 3).
pub(crate) async fn relay(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    UiJson(body): UiJson<RelayBody>,
) -> Result<Json<Relayed>, GatewayError> {
    let id = relayed(&raw)?;
    let config = app.config();
    let exchange = HttpCodeExchange {
        http: app.http().clone(),
        token_url: token_url(config.upstream.messages_vendor_oauth_base_url.as_deref()),
        timeout: config.tuning.oidc_timeout,
    };
    let (user, account_id) = finish(app.store()?, &exchange, &body.code, &body.state).await?;
    app.accounts().invalidate_user(user);
    tracing::info!(user_id = %user, %account_id, "messages_vendor connected by OAuth");
    Ok(Json(Relayed {
        ok: OK,
        provider: id,
        account_id,
    }))
}

/// End the flow of `state`: exchange `code` and keep the account. The
/// flow is ended first, so a replayed `state` finds nothing even while the
/// first exchange is under way.
async fn finish<E: CodeExchange>(
    store: &Store,
    exchange: &E,
    code: &str,
    state: &str,
) -> Result<(UserId, ProviderAccountId), GatewayError> {
    let code = bare_code(code);
    if code.is_empty() || code.len() > CODE_MAX {
        return Err(GatewayError::validation(
            "code: the code the provider's page gave",
        ));
    }
    if !plausible_state(state) {
        return Err(unknown_state());
    }
    let flow = store
        .provider_oauth_pending()
        .take(state, FLOW)
        .await?
        .ok_or_else(unknown_state)?;
    let signed = exchange
        .exchange(CodeGrant {
            code,
            state,
            verifier: &flow.verifier,
        })
        .await?;
    let expires_at = now().saturating_add(i64::try_from(signed.expires_in).unwrap_or(i64::MAX));
    let account = keep_account(
        store,
        SignedInAccount {
            user: flow.user_id,
            provider: ProviderId::MessagesVendor,
            auth_kind: "oauth_pkce",
            label: signed.email.as_deref().unwrap_or(""),
            access_token: &signed.access_token,
            refresh_token: signed.refresh_token.as_ref(),
            expires_at: Some(expires_at),
            base_url: None,
        },
    )
    .await?;
    Ok((flow.user_id, account.id))
}

fn unknown_state() -> GatewayError {
    GatewayError::validation("state: unknown, expired or already used; start the sign-in again")
}

/// `'text'` for `sh`, whatever `text` holds.
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The relay script for one sign-in: POSIX `sh`, `python3` (standard
/// library) for the one-shot listener, `curl` for the post.
fn relay_script(relay_url: &str, state: &str) -> String {
    format!(
        r#"#!/bin/sh
# Hands a messages_vendor sign-in to the gateway: waits (up to 10 minutes)
# for the browser's redirect on http://localhost:{RELAY_PORT}/callback, then
# posts the code and state to the gateway. Needs python3 and curl.
set -eu
RELAY_URL={relay_url}
STATE={state}
for tool in python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || {{ echo "this script needs $tool" >&2; exit 1; }}
done
echo "Waiting for the sign-in on http://localhost:{RELAY_PORT}/callback (up to 10 minutes)..."
BODY=$(python3 - "$STATE" <<'PY'
import http.server, json, sys, time, urllib.parse

expected = sys.argv[1]
found = {{}}


class Callback(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        code = query.get("code", [""])[0]
        state = query.get("state", [""])[0]
        refused = query.get("error", [""])[0]
        ok = url.path == "/callback" and code != "" and state == expected
        if ok:
            found["code"], found["state"] = code, state
            text = "Signed in: the gateway has the code. You can close this tab."
        elif url.path == "/callback" and refused and state == expected:
            found["error"] = refused
            text = "The sign-in was refused: " + refused
        else:
            text = "This is not the sign-in this script waits for."
        self.send_response(200 if ok else 400)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        page = "<!doctype html><title>Sign-in</title><p>" + text + "</p>"
        self.wfile.write(page.encode("utf-8"))

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", {RELAY_PORT}), Callback)
deadline = time.time() + 600
while not found and time.time() < deadline:
    server.timeout = max(1.0, deadline - time.time())
    server.handle_request()
server.server_close()
if "code" not in found:
    sys.exit("the sign-in " + ("was refused: " + found["error"] if found else "did not arrive in 10 minutes"))
print(json.dumps(found))
PY
)
curl -sS -X POST -H 'Content-Type: application/json' --data "$BODY" "$RELAY_URL"
echo
"#,
        relay_url = sh_quote(relay_url),
        state = sh_quote(state),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::direct::credentials::oauth_signin::SignedIn;

    #[test]
    fn only_plain_states_reach_the_script() {
        assert!(plausible_state(&random_value()));
        assert!(!plausible_state("short"));
        assert!(!plausible_state("abcdefghijklmnop'; rm -rf ~; '"));
        assert!(!plausible_state(&"a".repeat(129)));
    }

    #[test]
    fn the_script_quotes_what_it_embeds() {
        let script = relay_script("https://gw.example/it's/relay", "abcdefghijklmnopqrstuv");
        assert!(script.starts_with("#!/bin/sh\n"));
        assert!(script.contains("RELAY_URL='https://gw.example/it'\\''s/relay'\n"));
        assert!(script.contains("STATE='abcdefghijklmnopqrstuv'\n"));
        assert!(script.contains("(\"127.0.0.1\", 54545)"));
    }

    /// An exchange that must not be reached, or answers fixed tokens.
    struct Fake(Option<&'static str>);

    impl CodeExchange for Fake {
        async fn exchange(&self, grant: CodeGrant<'_>) -> Result<SignedIn, GatewayError> {
            let access = self.0.expect("the exchange must not be called");
            assert_eq!(grant.code, "the-code");
            Ok(SignedIn {
                access_token: Secret::new(access),
                refresh_token: Some(Secret::new("refresh")),
                expires_in: 3600,
                email: Some("someone@example.com".into()),
            })
        }
    }

    async fn store_with_user() -> (Store, UserId) {
        let store = crate::store::testing::memory_store().await;
        let user = crate::store::testing::user(&store, "a@example.com").await;
        (store, user)
    }

    #[tokio::test]
    async fn a_state_ends_one_flow_once_and_a_wrong_one_stores_nothing() {
        let (store, user) = store_with_user().await;
        let state = random_value();
        store
            .provider_oauth_pending()
            .create(&state, user, FLOW, &Secret::new("verifier"), 600)
            .await
            .unwrap();
        let wrong = finish(&store, &Fake(None), "the-code", &random_value()).await;
        assert!(matches!(wrong, Err(GatewayError::Validation(_))));
        let (owner, id) = finish(&store, &Fake(Some("sk-ant-oat-1")), "the-code#x", &state)
            .await
            .unwrap();
        assert_eq!(owner, user);
        let again = finish(&store, &Fake(None), "the-code", &state).await;
        assert!(matches!(again, Err(GatewayError::Validation(_))));
        let accounts = store
            .provider_accounts()
            .list_for_user(user, None)
            .await
            .unwrap();
        assert_eq!(accounts.len(), 1);
        assert_eq!(accounts[0].id, id);
        assert_eq!(accounts[0].auth_kind, "oauth_pkce");
        assert_eq!(accounts[0].label, "someone@example.com");
        assert!(accounts[0].expires_at.is_some());
    }

    #[tokio::test]
    async fn an_expired_flow_is_refused() {
        let (store, user) = store_with_user().await;
        let state = random_value();
        store
            .provider_oauth_pending()
            .create(&state, user, FLOW, &Secret::new("verifier"), -1)
            .await
            .unwrap();
        let late = finish(&store, &Fake(None), "the-code", &state).await;
        assert!(matches!(late, Err(GatewayError::Validation(_))));
        assert!(store
            .provider_accounts()
            .list_for_user(user, None)
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn signing_in_again_renews_the_account() {
        let (store, user) = store_with_user().await;
        let mut ids = Vec::new();
        for token in ["sk-ant-oat-1", "sk-ant-oat-2"] {
            let state = random_value();
            store
                .provider_oauth_pending()
                .create(&state, user, FLOW, &Secret::new("v"), 600)
                .await
                .unwrap();
            ids.push(
                finish(&store, &Fake(Some(token)), "the-code", &state)
                    .await
                    .unwrap()
                    .1,
            );
        }
        assert_eq!(ids[0], ids[1]);
        let usable = store.provider_accounts().usable(user).await.unwrap();
        assert_eq!(usable.len(), 1);
        assert_eq!(usable[0].access_token.expose(), "sk-ant-oat-2");
        assert_eq!(
            usable[0].refresh_token.as_ref().unwrap().expose(),
            "refresh"
        );
    }
}
