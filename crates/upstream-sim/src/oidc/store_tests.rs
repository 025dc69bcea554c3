use super::*;

fn store(config: OidcConfig) -> (OidcStore, Registration, Now) {
    let now = Now::current();
    let mut s = OidcStore::new(config);
    let reg = s.register(now);
    (s, reg, now)
}

fn code(r: Result<Tokens, OidcError>) -> OidcErrorCode {
    r.unwrap_err().code
}

#[test]
fn device_flow_pending_then_tokens_then_used() {
    let cfg = OidcConfig {
        approve_after: Some(2),
        ..OidcConfig::default()
    };
    let (mut s, reg, now) = store(cfg);
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    assert_eq!(dev.interval, 1);
    assert_eq!(dev.expires_in, 600);
    let poll = |s: &mut OidcStore| {
        s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now)
    };
    assert_eq!(code(poll(&mut s)), OidcErrorCode::AuthorizationPending);
    assert_eq!(code(poll(&mut s)), OidcErrorCode::AuthorizationPending);
    let tokens = poll(&mut s).unwrap();
    assert!(s.access_token_valid(&tokens.access_token, now.instant));
    assert!(s.refresh_token_live(tokens.refresh_token.as_deref().unwrap()));
    assert_eq!(tokens.expires_in, 3600);
    assert_eq!(code(poll(&mut s)), OidcErrorCode::InvalidGrant);
}

#[test]
fn slow_down_once_comes_first() {
    let cfg = OidcConfig {
        approve_after: Some(0),
        slow_down_once: true,
        ..OidcConfig::default()
    };
    let (mut s, reg, now) = store(cfg);
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    let r = s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now);
    assert_eq!(code(r), OidcErrorCode::SlowDown);
    assert!(s
        .poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now)
        .is_ok());
}

#[test]
fn enforce_interval_answers_slow_down_to_fast_polls() {
    let cfg = OidcConfig {
        approve_after: Some(5),
        enforce_interval: true,
        interval_secs: 5,
        ..OidcConfig::default()
    };
    let (mut s, reg, now) = store(cfg);
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    let at = |secs| now.after(Duration::from_secs(secs));
    let mut poll =
        |t: Now| code(s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, t));
    assert_eq!(poll(at(0)), OidcErrorCode::AuthorizationPending);
    assert_eq!(poll(at(2)), OidcErrorCode::SlowDown);
    assert_eq!(poll(at(8)), OidcErrorCode::AuthorizationPending);
}

#[test]
fn expired_denied_and_manual_decisions() {
    let (mut s, reg, now) = store(OidcConfig {
        approve_after: None,
        ..OidcConfig::default()
    });
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    let later = now.after(Duration::from_secs(601));
    let r = s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, later);
    assert_eq!(code(r), OidcErrorCode::ExpiredToken);

    // Without approve_after the flow waits for a decision.
    for _ in 0..3 {
        let r = s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now);
        assert_eq!(code(r), OidcErrorCode::AuthorizationPending);
    }
    assert!(s.decide(&dev.user_code.to_lowercase(), true));
    assert!(s
        .poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now)
        .is_ok());

    let dev2 = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    assert!(s.decide(&dev2.user_code, false));
    let r = s.poll_device(&reg.client_id, &reg.client_secret, &dev2.device_code, now);
    assert_eq!(code(r), OidcErrorCode::AccessDenied);
    assert!(!s.decide("NOPE-NOPE", true));
}

#[test]
fn deny_config_ends_with_access_denied() {
    let (mut s, reg, now) = store(OidcConfig {
        approve_after: Some(0),
        deny: true,
        ..OidcConfig::default()
    });
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    let r = s.poll_device(&reg.client_id, &reg.client_secret, &dev.device_code, now);
    assert_eq!(code(r), OidcErrorCode::AccessDenied);
}

#[test]
fn client_authentication() {
    let (mut s, reg, now) = store(OidcConfig::default());
    let bad = s.start_device(&reg.client_id, "wrong", now).unwrap_err();
    assert_eq!(bad.code, OidcErrorCode::InvalidClient);
    let unknown = s
        .start_device("nobody", &reg.client_secret, now)
        .unwrap_err();
    assert_eq!(unknown.code, OidcErrorCode::InvalidClient);
    let late = now.after(Duration::from_secs(91 * 24 * 3600));
    let expired = s
        .start_device(&reg.client_id, &reg.client_secret, late)
        .unwrap_err();
    assert_eq!(expired.code, OidcErrorCode::InvalidClient);
    // A device code belongs to the client that started it.
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    let other = s.register(now);
    let r = s.poll_device(
        &other.client_id,
        &other.client_secret,
        &dev.device_code,
        now,
    );
    assert_eq!(code(r), OidcErrorCode::InvalidGrant);
}

fn seeded(config: OidcConfig) -> (OidcStore, SeededCredentials, Now) {
    let now = Now::current();
    let mut s = OidcStore::new(config);
    let creds = SeededCredentials {
        client_id: "cid".into(),
        client_secret: "secret".into(),
        refresh_token: "rt-1".into(),
    };
    s.seed(&creds, now);
    (s, creds, now)
}

#[test]
fn refresh_without_rotation_keeps_the_refresh_token() {
    let (mut s, c, now) = seeded(OidcConfig {
        access_token_ttl: Duration::from_secs(30),
        ..OidcConfig::default()
    });
    let t = s
        .refresh(&c.client_id, &c.client_secret, &c.refresh_token, now)
        .unwrap();
    assert_eq!(t.refresh_token, None);
    assert_eq!(t.expires_in, 30);
    assert!(s.access_token_valid(&t.access_token, now.instant));
    assert!(!s.access_token_valid(&t.access_token, now.instant + Duration::from_secs(30)));
    assert!(s
        .refresh(&c.client_id, &c.client_secret, &c.refresh_token, now)
        .is_ok());
}

#[test]
fn refresh_with_rotation_retires_the_old_token() {
    let (mut s, c, now) = seeded(OidcConfig {
        rotate_refresh_tokens: true,
        ..OidcConfig::default()
    });
    let t = s
        .refresh(&c.client_id, &c.client_secret, &c.refresh_token, now)
        .unwrap();
    let fresh = t.refresh_token.unwrap();
    assert_ne!(fresh, c.refresh_token);
    let old = s.refresh(&c.client_id, &c.client_secret, &c.refresh_token, now);
    assert_eq!(code(old), OidcErrorCode::InvalidGrant);
    assert!(s
        .refresh(&c.client_id, &c.client_secret, &fresh, now)
        .is_ok());
}

#[test]
fn refresh_rejections() {
    let (mut s, c, now) = seeded(OidcConfig::default());
    let r = s.refresh(&c.client_id, &c.client_secret, "unknown", now);
    assert_eq!(code(r), OidcErrorCode::InvalidGrant);
    let r = s.refresh(&c.client_id, "bad", &c.refresh_token, now);
    assert_eq!(code(r), OidcErrorCode::InvalidClient);
    s.config.reject_refresh = true;
    let r = s.refresh(&c.client_id, &c.client_secret, &c.refresh_token, now);
    assert_eq!(code(r), OidcErrorCode::InvalidGrant);
}

#[test]
fn revoke_and_expire_access_tokens() {
    let (mut s, _, now) = seeded(OidcConfig::default());
    let a = s.issue_access_token(now);
    s.revoke_access_tokens();
    assert!(!s.access_token_valid(&a, now.instant));
    let b = s.issue_access_token(now);
    assert!(s.access_token_valid(&b, now.instant));
    s.expire_access_tokens(now.instant);
    assert!(!s.access_token_valid(&b, now.instant));
    let c = s.issue_access_token(now);
    assert!(s.access_token_valid(&c, now.instant));
    assert!(!s.access_token_valid("never-issued", now.instant));
}

#[test]
fn absurd_lifetimes_do_not_overflow() {
    let (mut s, reg, now) = store(OidcConfig {
        access_token_ttl: Duration::MAX,
        device_code_ttl: Duration::MAX,
        client_secret_ttl: Duration::MAX,
        ..OidcConfig::default()
    });
    let t = s.issue_access_token(now);
    assert!(s.access_token_valid(&t, now.instant));
    let dev = s
        .start_device(&reg.client_id, &reg.client_secret, now)
        .unwrap();
    assert_eq!(dev.expires_in, u64::MAX);
    let fresh = s.register(now);
    assert_eq!(fresh.secret_expires_at, u64::MAX);
}
