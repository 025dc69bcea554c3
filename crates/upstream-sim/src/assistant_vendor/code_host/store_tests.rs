use super::*;

const CLIENT: &str = "Iv1.b507a08c87ecfe98";

fn config() -> CodeHostConfig {
    CodeHostConfig {
        approve_after: None,
        ..CodeHostConfig::default()
    }
}

#[test]
fn a_device_login_is_pending_then_approved_as_a_new_user() {
    let (mut store, config, now) = (CodeHostStore::default(), config(), Instant::now());
    let dev = store.start_device(CLIENT, "read:user", &config, now);
    assert_eq!(dev.interval, 1);
    assert_eq!(dev.expires_in, 900);
    assert_eq!(dev.device_code.len(), 40);
    let poll = |store: &mut CodeHostStore, secs: u64| {
        store.poll_device(
            &dev.device_code,
            CLIENT,
            &config,
            now + Duration::from_secs(secs),
        )
    };
    assert_eq!(poll(&mut store, 0), Err(DeviceRefusal::Pending));
    assert_eq!(poll(&mut store, 2), Err(DeviceRefusal::Pending));
    // The user code, typed in lower case without the dash.
    let typed = dev.user_code.replace('-', "").to_ascii_lowercase();
    assert!(store.decide(&typed, true));
    let login = poll(&mut store, 4).unwrap();
    assert!(login.access_token.starts_with("gho_"));
    assert_eq!(login.access_token.len(), 40);
    assert_eq!(login.scope, "read:user");
    assert_eq!(login.user.login, "sim-user-1");
    assert_eq!(store.user_of(&login.access_token).unwrap().0, login.user);
    // Used up.
    assert_eq!(poll(&mut store, 6), Err(DeviceRefusal::UnknownCode));
    assert!(!store.decide(&dev.user_code, true));
}

#[test]
fn slow_down_raises_the_interval() {
    let (mut store, config, now) = (CodeHostStore::default(), config(), Instant::now());
    let dev = store.start_device(CLIENT, "read:user", &config, now);
    let at = |ms: u64| now + Duration::from_millis(ms);
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, at(0)),
        Err(DeviceRefusal::Pending)
    );
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, at(500)),
        Err(DeviceRefusal::SlowDown(6))
    );
    // The next poll must wait the new interval.
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, at(2_000)),
        Err(DeviceRefusal::SlowDown(11))
    );
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, at(14_000)),
        Err(DeviceRefusal::Pending)
    );
}

#[test]
fn denied_expired_wrong_client_and_automatic_approval() {
    let (mut store, mut config, now) = (CodeHostStore::default(), config(), Instant::now());
    let dev = store.start_device(CLIENT, "read:user", &config, now);
    assert_eq!(
        store.poll_device(&dev.device_code, "other", &config, now),
        Err(DeviceRefusal::WrongClient)
    );
    assert!(store.decide(&dev.device_code, false));
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, now),
        Err(DeviceRefusal::Denied)
    );

    let dev = store.start_device(CLIENT, "read:user", &config, now);
    assert!(store.expire_device(&dev.user_code, now));
    assert_eq!(
        store.poll_device(&dev.device_code, CLIENT, &config, now),
        Err(DeviceRefusal::Expired)
    );
    assert!(!store.expire_device("NOPE-NOPE", now));

    config.approve_after = Some(2);
    let dev = store.start_device(CLIENT, "read:user", &config, now);
    let poll = |store: &mut CodeHostStore, secs: u64| {
        store.poll_device(
            &dev.device_code,
            CLIENT,
            &config,
            now + Duration::from_secs(secs),
        )
    };
    assert_eq!(poll(&mut store, 0), Err(DeviceRefusal::Pending));
    assert_eq!(poll(&mut store, 1), Err(DeviceRefusal::Pending));
    let login = poll(&mut store, 2).unwrap();
    let other = store.seed_login("read:user");
    assert_ne!(login.user.login, other.user.login);
    assert_ne!(login.user.id, other.user.id);
}

#[test]
fn a_web_code_is_single_use_and_bound_to_client_and_redirect() {
    let (mut store, now) = (CodeHostStore::default(), Instant::now());
    let ttl = Duration::from_secs(600);
    let cb = "http://gw.test/_ui/api/providers/assistant_vendor/callback";
    let code = store.approve_web("app", cb, "read:user", ttl, now);
    assert_eq!(
        store.redeem_web(&code, "other", None, now),
        Err(CodeRefusal::WrongClient)
    );
    assert_eq!(
        store.redeem_web(&code, "app", Some("http://evil.test/cb"), now),
        Err(CodeRefusal::RedirectMismatch)
    );
    let login = store.redeem_web(&code, "app", Some(cb), now).unwrap();
    assert_eq!(login.scope, "read:user");
    assert_eq!(
        store.redeem_web(&code, "app", None, now),
        Err(CodeRefusal::BadCode)
    );
    let late = store.approve_web("app", cb, "", ttl, now);
    assert_eq!(
        store.redeem_web(&late, "app", None, now + ttl),
        Err(CodeRefusal::BadCode)
    );
    assert_eq!(store.default_user().login, "sim-user");
}
