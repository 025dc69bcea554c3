//! The whole flow against the simulated identity provider, below HTTP
//! routing: begin, the provider's redirect, finish.

use std::time::Duration;

use upstream_sim::{Signing, SimConfig, SimHandle};

use super::*;

const REDIRECT: &str = "http://gw.test/_ui/api/auth/google/callback";

async fn sim() -> SimHandle {
    upstream_sim::start(SimConfig::default()).await.unwrap()
}

fn settings(sim: &SimHandle) -> SsoSettings {
    let (id, secret) = sim.idp_client();
    SsoSettings::from_values(Some(&sim.idp_issuer_url()), Some(&id), Some(&secret)).unwrap()
}

async fn service(tuning: SsoTuning) -> Sso {
    let store = crate::store::testing::memory_store().await;
    Sso::new(reqwest::Client::new(), store, tuning)
}

/// Start, let the provider answer `/authorize`, and return the callback.
async fn run_to_callback(sso: &Sso, s: &SsoSettings, purpose: Purpose) -> Callback {
    let started = sso.begin(s, REDIRECT, purpose).await.unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = http.get(&started.authorization_url).send().await.unwrap();
    assert_eq!(resp.status(), 302, "{}", started.authorization_url);
    let location = url::Url::parse(resp.headers()["location"].to_str().unwrap()).unwrap();
    assert!(location.as_str().starts_with(REDIRECT));
    let get = |k: &str| {
        location
            .query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    Callback {
        state: get("state"),
        code: get("code"),
        error: get("error"),
        binding: Some(started.binding),
    }
}

fn jwks_fetches(sim: &SimHandle) -> usize {
    sim.idp_requests()
        .iter()
        .filter(|r| r.path == "/jwks")
        .count()
}

#[tokio::test]
async fn sign_in_verifies_and_the_state_is_spent() {
    let sim = sim().await;
    sim.idp_set_user("ann@corp.example", true);
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    let done = sso.finish(&s, &cb).await.unwrap();
    assert_eq!(done.identity.email, "ann@corp.example");
    assert_eq!(done.purpose, Purpose::SignIn);
    // The token request carried the verifier, the redirect URI and the secret.
    let token_req = sim
        .idp_requests()
        .into_iter()
        .find(|r| r.path == "/token")
        .unwrap();
    assert_eq!(token_req.param("redirect_uri"), Some(REDIRECT));
    assert_eq!(token_req.param("code_verifier").map(str::len), Some(43));
    assert!(token_req.authorization.unwrap().starts_with("Basic "));
    // Replaying the same callback fails: the state was spent.
    assert!(matches!(
        sso.finish(&s, &cb).await,
        Err(SsoError::StateInvalid)
    ));
    // Discovery was fetched once for both calls.
    let discoveries = sim
        .idp_requests()
        .iter()
        .filter(|r| r.path.ends_with("openid-configuration"))
        .count();
    assert_eq!(discoveries, 1);
}

#[tokio::test]
async fn another_browser_cannot_complete_the_attempt() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    let mut cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    cb.binding = Some("someone-elses-cookie".into());
    assert!(matches!(
        sso.finish(&s, &cb).await,
        Err(SsoError::StateInvalid)
    ));
    let mut cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    cb.binding = None;
    assert!(matches!(
        sso.finish(&s, &cb).await,
        Err(SsoError::StateInvalid)
    ));
}

#[tokio::test]
async fn an_expired_attempt_is_refused() {
    let sim = sim().await;
    let s = settings(&sim);
    // The store keeps time in seconds: a zero TTL has expired at once.
    let sso = service(SsoTuning {
        pending_ttl: Duration::ZERO,
        ..SsoTuning::default()
    })
    .await;
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    assert!(matches!(
        sso.finish(&s, &cb).await,
        Err(SsoError::StateInvalid)
    ));
}

#[tokio::test]
async fn provider_errors_and_refusals() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    sim.update_idp(|c| {
        c.authorize_error = Some(upstream_sim::OAuthError::new("access_denied", "no"))
    });
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    assert!(matches!(sso.finish(&s, &cb).await, Err(SsoError::Denied(e)) if e == "access_denied"));
    sim.update_idp(|c| c.authorize_error = None);

    // A wrong client secret: the token endpoint refuses.
    let mut wrong = s.clone();
    wrong.client_secret = crate::config::Secret::new("nope");
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    assert!(matches!(
        sso.finish(&wrong, &cb).await,
        Err(SsoError::StateInvalid) | Err(SsoError::ExchangeRefused(_))
    ));
    let cb = run_to_callback(&sso, &wrong, Purpose::SignIn).await;
    assert!(
        matches!(sso.finish(&wrong, &cb).await, Err(SsoError::ExchangeRefused(e)) if e == "invalid_client")
    );

    // The provider is down: discovery is cached, the token endpoint is not.
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    sim.update_idp(|c| c.unavailable = true);
    assert!(matches!(
        sso.finish(&s, &cb).await,
        Err(SsoError::Unavailable(_))
    ));
}

#[tokio::test]
async fn rotated_keys_are_fetched_and_unknown_kids_refetch_at_most_once() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning {
        // Long enough that the sign-ins below fit inside one interval on a
        // loaded machine (RSA signing in a debug build takes a while).
        jwks_refetch_interval: Duration::from_millis(2000),
        ..SsoTuning::default()
    })
    .await;
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    sso.finish(&s, &cb).await.unwrap();
    assert_eq!(jwks_fetches(&sim), 1);

    sim.idp_rotate_keys();
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    sso.finish(&s, &cb).await.unwrap();
    assert_eq!(jwks_fetches(&sim), 2, "the new kid made one refetch");

    // Within the interval of that refetch, an unknown kid makes none.
    sim.update_idp(|c| c.tweaks.signing = Signing::UnknownKid);
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    assert!(sso.finish(&s, &cb).await.is_err());
    assert_eq!(jwks_fetches(&sim), 2);

    // After it, one refetch for any number of unknown kids.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    for _ in 0..3 {
        let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
        assert!(matches!(
            sso.finish(&s, &cb).await,
            Err(SsoError::InvalidToken(TokenProblem::UnknownKey))
        ));
    }
    assert_eq!(
        jwks_fetches(&sim),
        3,
        "unknown kids refetch once per interval"
    );
}

#[tokio::test]
async fn forged_tokens_of_every_kind_are_refused() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    let cases = [
        (Signing::ForeignKey, TokenProblem::Signature),
        (Signing::Tampered, TokenProblem::Signature),
        (Signing::NoneAlg, TokenProblem::Algorithm),
        (Signing::Hs256, TokenProblem::Algorithm),
    ];
    for (signing, expected) in cases {
        sim.update_idp(|c| c.tweaks.signing = signing);
        let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
        match sso.finish(&s, &cb).await {
            Err(SsoError::InvalidToken(p)) => assert_eq!(p, expected, "{signing:?}"),
            other => panic!("{signing:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn link_purpose_comes_back() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    let user_id = crate::ids::fast_uuid();
    let cb = run_to_callback(&sso, &s, Purpose::Link { user_id }).await;
    let done = sso.finish(&s, &cb).await.unwrap();
    assert_eq!(done.purpose, Purpose::Link { user_id });
}

#[tokio::test]
async fn a_configuration_change_invalidates_pending_attempts() {
    let sim = sim().await;
    let s = settings(&sim);
    let sso = service(SsoTuning::default()).await;
    let cb = run_to_callback(&sso, &s, Purpose::SignIn).await;
    let mut changed = s.clone();
    changed.client_id = "another-client".into();
    assert!(matches!(
        sso.finish(&changed, &cb).await,
        Err(SsoError::StateInvalid)
    ));
}

#[tokio::test]
async fn another_replica_finishes_the_attempt_once() {
    let sim = sim().await;
    sim.idp_set_user("ann@corp.example", true);
    let s = settings(&sim);
    // Two services on one store: what two replicas share.
    let store = crate::store::testing::memory_store().await;
    let one = Sso::new(reqwest::Client::new(), store.clone(), SsoTuning::default());
    let two = Sso::new(reqwest::Client::new(), store, SsoTuning::default());
    let cb = run_to_callback(&one, &s, Purpose::SignIn).await;
    let done = two.finish(&s, &cb).await.unwrap();
    assert_eq!(done.identity.email, "ann@corp.example");
    assert!(matches!(
        one.finish(&s, &cb).await,
        Err(SsoError::StateInvalid)
    ));
}
