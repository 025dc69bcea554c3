use super::*;

#[test]
fn refresh_rotates_and_retires() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let first = store.issue(Duration::from_secs(60), now);
    assert_eq!(
        store.access_state(&first.access_token, now),
        TokenState::Valid
    );
    let config = MessagesOAuthConfig::default();
    let second = store.refresh(&first.refresh_token, &config, now).unwrap();
    assert_ne!(second.refresh_token, first.refresh_token);
    assert!(!store.refresh_live(&first.refresh_token));
    assert!(store.refresh_live(&second.refresh_token));
    assert!(store.refresh(&first.refresh_token, &config, now).is_none());
    assert_eq!(second.expires_in, 8 * 3600);
    assert_eq!(store.refreshes(), 1);
}

#[test]
fn refresh_without_rotation_keeps_the_token() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let first = store.issue(Duration::from_secs(60), now);
    let config = MessagesOAuthConfig {
        rotate_refresh_tokens: false,
        ..MessagesOAuthConfig::default()
    };
    let second = store.refresh(&first.refresh_token, &config, now).unwrap();
    assert_eq!(second.refresh_token, first.refresh_token);
    assert!(store.refresh_live(&first.refresh_token));
    assert_eq!(store.refresh.len(), 1);
}

#[test]
fn expiry_and_unknown_tokens() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let t = store.issue(Duration::from_secs(60), now);
    assert_eq!(
        store.access_state(&t.access_token, now + Duration::from_secs(61)),
        TokenState::Expired
    );
    store.expire_all(now);
    assert_eq!(
        store.access_state(&t.access_token, now),
        TokenState::Expired
    );
    assert_eq!(store.access_state("nope", now), TokenState::Unknown);
    let seeded = OAuthTokens {
        access_token: "a".into(),
        refresh_token: "r".into(),
        expires_in: 10,
    };
    store.seed(&seeded, now);
    assert_eq!(store.access_state("a", now), TokenState::Valid);
    assert!(store.refresh_live("r"));
}

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "http://localhost:54545/callback";

fn approval() -> Approval {
    Approval {
        client_id: "client".into(),
        redirect_uri: REDIRECT.into(),
        code_challenge: pkce::s256(VERIFIER),
        scope: "user:inference".into(),
    }
}

fn redemption(code: &str) -> Redemption<'_> {
    Redemption {
        code,
        client_id: "client",
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
    }
}

const TTL: Duration = Duration::from_secs(600);

/// Spoils one field of a redemption.
type Spoil = fn(&mut Redemption<'_>);

#[test]
fn a_code_gives_tokens_of_a_new_account_once() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let code = store.approve(approval(), TTL, now);
    let other = store.approve(approval(), TTL, now);
    let grant = store
        .redeem(redemption(&format!("{code}#the-state")), TTL, now)
        .unwrap();
    assert_eq!(grant.scope, "user:inference");
    assert_eq!(grant.account.email_address, "sim-user-1@example.com");
    assert_eq!(
        store.access_state(&grant.tokens.access_token, now),
        TokenState::Valid
    );
    assert_eq!(
        store.account_of(&grant.tokens.refresh_token),
        Some(grant.account.clone())
    );
    let second = store.redeem(redemption(&other), TTL, now).unwrap();
    assert_ne!(
        second.account, grant.account,
        "each authorization is its own account"
    );
    assert_eq!(store.exchanges(), 2);
    // Presented again: refused, and the tokens of the first exchange are revoked.
    assert_eq!(
        store.redeem(redemption(&code), TTL, now),
        Err(CodeRefusal::Used)
    );
    assert_eq!(
        store.access_state(&grant.tokens.access_token, now),
        TokenState::Unknown
    );
    assert!(!store.refresh_live(&grant.tokens.refresh_token));
    assert_eq!(
        store.redeem(redemption(&code), TTL, now),
        Err(CodeRefusal::Used)
    );
}

#[test]
fn a_code_is_refused_for_each_mismatch_and_used_up() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let cases: [(Spoil, CodeRefusal); 3] = [
        (|r| r.client_id = "other", CodeRefusal::OtherClient),
        (
            |r| r.redirect_uri = "http://localhost:1/cb",
            CodeRefusal::OtherRedirect,
        ),
        (
            |r| r.code_verifier = "Wrong-verifier-0123456789012345678901234567",
            CodeRefusal::Verifier,
        ),
    ];
    for (spoil, refusal) in cases {
        let code = store.approve(approval(), TTL, now);
        let mut r = redemption(&code);
        spoil(&mut r);
        assert_eq!(store.redeem(r, TTL, now), Err(refusal));
        assert_eq!(
            store.redeem(redemption(&code), TTL, now),
            Err(CodeRefusal::Used)
        );
    }
    assert_eq!(
        store.redeem(redemption("nope"), TTL, now),
        Err(CodeRefusal::Unknown)
    );
    let code = store.approve(approval(), TTL, now);
    assert_eq!(
        store.redeem(redemption(&code), TTL, now + TTL),
        Err(CodeRefusal::Expired)
    );
    let code = store.approve(approval(), TTL, now);
    store.expire_codes(now);
    assert_eq!(
        store.redeem(redemption(&code), TTL, now),
        Err(CodeRefusal::Expired)
    );
    assert_eq!(store.exchanges(), 0);
}

#[test]
fn refresh_keeps_the_account_and_scope() {
    let mut store = OAuthStore::default();
    let now = Instant::now();
    let code = store.approve(approval(), TTL, now);
    let grant = store.redeem(redemption(&code), TTL, now).unwrap();
    let config = MessagesOAuthConfig::default();
    let refreshed = store
        .refresh_grant(&grant.tokens.refresh_token, &config, now)
        .unwrap();
    assert_eq!(refreshed.account, grant.account);
    assert_eq!(refreshed.scope, "user:inference");
    let seeded = store.issue(TTL, now);
    assert_eq!(
        store
            .account_of(&seeded.access_token)
            .unwrap()
            .email_address,
        "sim-user@example.com"
    );
}
