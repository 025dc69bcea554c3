//! SSO sign-ins that must fail, each with its error code on the login page,
//! no session and no account: forged, tampered, unsigned, expired and
//! otherwise wrong ID tokens, unverified emails, a domain off the allowlist,
//! provider errors, and an attempt older than the pending-state TTL; the
//! pending attempts' bound, also under concurrent sign-ins.

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::{IdTokenTweaks, IdpConfig, NonceClaim, OAuthError, Signing};

use crate::both_stores;
use crate::common::TestDb;
use crate::sso_support::{me, open_callback, sign_in_as, to_callback, SsoEnv};

struct Case {
    name: &'static str,
    email: &'static str,
    verified: bool,
    change: fn(&mut IdpConfig),
    code: &'static str,
}

/// The provider's defaults, keeping its registered client.
fn fresh_idp(client: &(String, String)) -> IdpConfig {
    IdpConfig {
        client_id: client.0.clone(),
        client_secret: client.1.clone(),
        ..IdpConfig::default()
    }
}

fn tweak(c: &mut IdpConfig, f: impl FnOnce(&mut IdTokenTweaks)) {
    f(&mut c.tweaks)
}

const CASES: &[Case] = &[
    Case {
        name: "forged signature (another key, published kid)",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.signing = Signing::ForeignKey),
        code: "sso_token_invalid",
    },
    Case {
        name: "claims changed after signing",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.signing = Signing::Tampered),
        code: "sso_token_invalid",
    },
    Case {
        name: "alg none",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.signing = Signing::NoneAlg),
        code: "sso_token_invalid",
    },
    Case {
        name: "alg HS256",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.signing = Signing::Hs256),
        code: "sso_token_invalid",
    },
    Case {
        name: "key id the provider does not publish",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.signing = Signing::UnknownKid),
        code: "sso_token_invalid",
    },
    Case {
        name: "expired",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.lifetime_secs = -600),
        code: "sso_token_invalid",
    },
    Case {
        name: "issued in the future",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.issued_at_offset_secs = 3600),
        code: "sso_token_invalid",
    },
    Case {
        name: "wrong nonce",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.nonce = NonceClaim::Fixed("replayed-nonce".into())),
        code: "sso_token_invalid",
    },
    Case {
        name: "no nonce",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.nonce = NonceClaim::Omit),
        code: "sso_token_invalid",
    },
    Case {
        name: "wrong audience",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.audience = Some(json!("another-client"))),
        code: "sso_token_invalid",
    },
    Case {
        name: "several audiences without azp",
        email: "a@corp.example",
        verified: true,
        change: |c| {
            let ours = c.client_id.clone();
            tweak(c, |t| t.audience = Some(json!([ours, "another-client"])))
        },
        code: "sso_token_invalid",
    },
    Case {
        name: "azp of another client",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.azp = Some("another-client".into())),
        code: "sso_token_invalid",
    },
    Case {
        name: "wrong issuer",
        email: "a@corp.example",
        verified: true,
        change: |c| tweak(c, |t| t.issuer = Some("https://evil.example".into())),
        code: "sso_token_invalid",
    },
    Case {
        name: "email not verified",
        email: "a@corp.example",
        verified: false,
        change: |_| {},
        code: "sso_email_unverified",
    },
    Case {
        name: "no email claim",
        email: "a@corp.example",
        verified: true,
        change: |c| {
            tweak(c, |t| {
                t.extra_claims.insert("email".into(), Value::Null);
            })
        },
        code: "sso_email_unverified",
    },
    Case {
        name: "domain not on the allowlist",
        email: "a@elsewhere.example",
        verified: true,
        change: |_| {},
        code: "sso_domain_not_allowed",
    },
    Case {
        name: "the person refused at the provider",
        email: "a@corp.example",
        verified: true,
        change: |c| c.authorize_error = Some(OAuthError::new("access_denied", "no")),
        code: "sso_denied",
    },
    Case {
        name: "the token endpoint refuses the code",
        email: "a@corp.example",
        verified: true,
        change: |c| c.token_error = Some(OAuthError::new("invalid_grant", "bad code")),
        code: "sso_exchange_failed",
    },
    Case {
        name: "the provider is down",
        email: "a@corp.example",
        verified: true,
        change: |c| c.unavailable = true,
        code: "sso_unavailable",
    },
];

both_stores!(
    every_refusal_has_its_code_and_creates_nothing,
    pending_attempts_are_bounded_even_when_started_at_once
);

async fn every_refusal_has_its_code_and_creates_nothing(db: TestDb) {
    let env = SsoEnv::start(db).await;
    // An admin exists and corp.example is allowed, so only each case's
    // change can make its sign-in fail.
    let (landing, admin) = sign_in_as(&env, "boss@corp.example").await;
    assert_eq!(landing.location, "/_ui/");
    let resp = admin
        .post("/_ui/api/domains", json!({"domain": "corp.example"}))
        .await;
    assert_eq!(resp.status(), 200);
    let client = env.sim.idp_client();

    for case in CASES {
        env.sim.update_idp(|c| {
            *c = fresh_idp(&client);
            (case.change)(c);
        });
        env.sim.idp_set_user(case.email, case.verified);
        let ui = env.ui();
        let landing = if case.code == "sso_unavailable" {
            // Discovery is cached: the provider fails at the token endpoint.
            env.sim.update_idp(|c| c.unavailable = false);
            let callback = to_callback(&ui, "/_ui/api/auth/google").await;
            env.sim.update_idp(|c| c.unavailable = true);
            open_callback(&ui, &callback).await
        } else {
            crate::sso_support::walk(&ui, "/_ui/api/auth/google").await
        };
        assert_eq!(landing.status, 302, "{}", case.name);
        assert_eq!(
            landing.error().as_deref(),
            Some(case.code),
            "{}: {landing:?}",
            case.name
        );
        assert!(!landing.sets_session(), "{}", case.name);
        assert_eq!(me(&ui).await.0, 401, "{}", case.name);
    }

    env.sim.update_idp(|c| {
        *c = fresh_idp(&client);
    });
    let store = env.env.db.store().await;
    assert_eq!(
        store.users().count().await.unwrap(),
        1,
        "only the admin exists"
    );
    store.close().await;

    // The same provider and user work again once nothing is bent.
    let (landing, _) = sign_in_as(&env, "a@corp.example").await;
    assert_eq!(landing.location, "/_ui/", "{landing:?}");
}

#[tokio::test]
async fn an_attempt_older_than_the_pending_ttl_is_refused() {
    let env = SsoEnv::start_tuned(TestDb::sqlite(), &[], |c| {
        // The store keeps time in seconds: this attempt lives 1 to 2 s.
        c.tuning.sso_pending_ttl = Duration::from_secs(2);
    })
    .await;
    env.sim.idp_set_user("late@corp.example", true);
    let ui = env.ui();
    let callback = to_callback(&ui, "/_ui/api/auth/google").await;
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let landing = open_callback(&ui, &callback).await;
    assert_eq!(landing.error().as_deref(), Some("sso_state_invalid"));
    assert!(!landing.sets_session());

    // Within the TTL the same flow succeeds.
    let callback = to_callback(&ui, "/_ui/api/auth/google").await;
    assert_eq!(open_callback(&ui, &callback).await.location, "/_ui/");
}

/// Spec 2.5a: at most so many attempts under way; when full the oldest go,
/// also when the sign-ins start at once (on PostgreSQL from many pooled
/// connections, as from several replicas).
async fn pending_attempts_are_bounded_even_when_started_at_once(db: TestDb) {
    use gateway::config::Secret;
    use gateway::store::sso_pending::{NewSsoLogin, SsoPendingLimits};

    let store = db.store().await;
    let limits = SsoPendingLimits {
        ttl_secs: 600,
        capacity: 10,
    };
    let secret = Secret::new("verifier");
    let states: Vec<String> = (0..25).map(|i| format!("state-{i}")).collect();
    let starts = states.iter().map(|state| {
        let pending = store.sso_pending();
        let secret = &secret;
        async move {
            pending
                .create(
                    &NewSsoLogin {
                        state,
                        code_verifier: secret,
                        nonce: secret,
                        binding_digest: "digest",
                        redirect_uri: "http://gw.test/_ui/api/auth/google/callback",
                        issuer: "http://idp.test",
                        client_id: "client",
                        link_user: None,
                    },
                    limits,
                )
                .await
                .unwrap()
        }
    });
    let dropped: u64 = futures::future::join_all(starts).await.into_iter().sum();
    assert_eq!(dropped, 15);
    assert_eq!(store.sso_pending().count().await.unwrap(), 10);
    let mut kept = 0;
    for state in &states {
        if store.sso_pending().take(state).await.unwrap().is_some() {
            kept += 1;
        }
    }
    assert_eq!(kept, 10, "each kept attempt is taken once");
    assert_eq!(store.sso_pending().count().await.unwrap(), 0);
    store.close().await;
}
