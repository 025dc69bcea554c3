//! Password sign-in over HTTP (spec 3.3, 5.4, 5.7; interfaces.md 6): both
//! steps, the restricted session of an account without 2FA, recovery codes,
//! reused codes, the pending token's life, and the lockout with its reset.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{
    admin_env, totp_code, FullEnv, TestDb, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP,
};

/// The first admin through the setup code: a password account without 2FA.
async fn setup_admin(env: &FullEnv) -> UiClient {
    let ui = env.ui();
    let resp = ui
        .post(
            "/_ui/api/setup",
            json!({"setup_code": env.setup_code().await, "email": "root@example.com",
                   "password": "root password 123"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    ui
}

async fn status_of(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// 3.3 row 2: a correct password without TOTP signs in, restricted to 2FA
/// enrollment (and me, logout, status) until it is enabled.
async fn password_without_totp_is_restricted_to_enrollment(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let first = setup_admin(&env).await;
    assert_eq!(
        first.post("/_ui/api/auth/logout", json!({})).await.status(),
        200
    );

    let ui = env.ui();
    let (status, body) = ui.login("ROOT@example.com ", "root password 123").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "user_id": body["user_id"], "email": "root@example.com",
               "role": "Admin", "must_change_password": false, "needs_2fa_setup": true})
    );
    assert!(ui.session_id().is_some() && ui.csrf().is_some());

    for path in ["/_ui/api/users", "/_ui/api/system", "/_ui/api/domains"] {
        let (status, body) = status_of(ui.get(path).await).await;
        assert_eq!(status, 403, "{path}");
        assert_eq!(body["error"]["type"], "forbidden");
        assert!(body["error"]["message"].as_str().unwrap().contains("2fa"));
    }
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            json!({"current_password": "root password 123", "new_password": "another password 1"}),
        )
        .await;
    assert_eq!(resp.status(), 403);
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 200);
    assert_eq!(ui.get("/_ui/api/status").await.status(), 200);

    let (_secret, codes) = ui.enroll_2fa().await;
    assert_eq!(codes.len(), 8);
    assert_eq!(ui.get("/_ui/api/users").await.status(), 200);
    assert_eq!(ui.get("/_ui/api/system").await.status(), 200);
}

/// 3.3 rows 1 and 3: TOTP on -> `{needs_2fa, login_token}` without cookies;
/// the second step signs in; the token is single use.
async fn totp_login_goes_through_the_pending_token(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let ui = env.ui();
    let resp = ui
        .post(
            "/_ui/api/auth/login",
            json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("set-cookie").is_none());
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["needs_2fa"], true);
    assert_eq!(body.as_object().unwrap().len(), 2);
    let token = body["login_token"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&token).is_ok());
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 401);

    let (status, body) = ui.second_factor(&token, &totp_code(ADMIN_TOTP, 0)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["role"], "Admin");
    assert_eq!(body["needs_2fa_setup"], false);
    assert!(ui.session_id().is_some());
    assert_eq!(ui.get("/_ui/api/users").await.status(), 200);

    // Redeemed: the same token again is refused, whatever the code.
    let (status, body) = env
        .ui()
        .second_factor(&token, &totp_code(ADMIN_TOTP, 1))
        .await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["type"], "auth_error");
    let (status, _) = env.ui().second_factor("not-a-uuid", "123456").await;
    assert_eq!(status, 401);
}

/// A TOTP code is accepted once; the next step's code still works.
async fn reused_totp_code_is_refused(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let code = totp_code(ADMIN_TOTP, 0);
    let first = env.ui();
    let (_, body) = first.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let (status, _) = first
        .second_factor(body["login_token"].as_str().unwrap(), &code)
        .await;
    assert_eq!(status, 200);

    let second = env.ui();
    let (_, body) = second.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let token = body["login_token"].as_str().unwrap().to_owned();
    let (status, body) = second.second_factor(&token, &code).await;
    assert_eq!(status, 401, "{body}");
    // The token survives a wrong code.
    let (status, _) = second
        .second_factor(&token, &totp_code(ADMIN_TOTP, 1))
        .await;
    assert_eq!(status, 200);
}

/// 3.3 row 3 with a recovery code, 3.6a: a recovery code signs in once.
async fn recovery_code_signs_in_once(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let user = env.new_user(&admin, "rec@example.com", "User").await;
    let codes = &user.recovery_codes;
    assert_eq!(codes.len(), 8);

    let ui = env.ui();
    let (_, body) = ui
        .login("rec@example.com", crate::common::USER_PASSWORD_2)
        .await;
    let (status, body) = ui
        .second_factor(body["login_token"].as_str().unwrap(), &codes[0])
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["email"], "rec@example.com");

    let ui = env.ui();
    let (_, body) = ui
        .login("rec@example.com", crate::common::USER_PASSWORD_2)
        .await;
    let token = body["login_token"].as_str().unwrap().to_owned();
    let (status, _) = ui.second_factor(&token, &codes[0]).await;
    assert_eq!(status, 401, "a used recovery code is refused");
    // Typed loosely: lower case with a hyphen.
    let loose = format!("{}-{}", &codes[1][..5], &codes[1][5..]).to_lowercase();
    let (status, _) = ui.second_factor(&token, &loose).await;
    assert_eq!(status, 200);
}

/// A recovery code is spent once even when several sign-ins present it at
/// the same moment (ASVS 2.5.6, 2.8.4): exactly one of them gets in.
async fn a_recovery_code_raced_signs_in_once(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let user = env.new_user(&admin, "race@example.com", "User").await;
    let code = user.recovery_codes[0].clone();
    let mut pending = Vec::new();
    for _ in 0..4 {
        let ui = env.ui();
        let (_, body) = ui
            .login("race@example.com", crate::common::USER_PASSWORD_2)
            .await;
        let token = body["login_token"].as_str().unwrap().to_owned();
        pending.push((ui, token));
    }
    let answers = futures::future::join_all(
        pending
            .iter()
            .map(|(ui, token)| ui.second_factor(token, &code)),
    )
    .await;
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 401),
        "{statuses:?}"
    );
}

/// The pending token lives `pending_login_ttl` (5 minutes by default).
async fn pending_login_token_expires(db: TestDb) {
    let env = FullEnv::start_tuned(db, &admin_env(), |c| {
        c.tuning.auth.pending_login_ttl = Duration::from_secs(1);
    })
    .await;
    let ui = env.ui();
    let (_, body) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, _) = ui
        .second_factor(
            body["login_token"].as_str().unwrap(),
            &totp_code(ADMIN_TOTP, 0),
        )
        .await;
    assert_eq!(status, 401);
}

/// Wrong second-step codes count as failed sign-ins: the fifth locks (423).
async fn wrong_codes_count_toward_the_lockout(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let ui = env.ui();
    let (_, body) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let token = body["login_token"].as_str().unwrap().to_owned();
    for _ in 0..4 {
        let (status, _) = ui.second_factor(&token, "000000").await;
        assert_eq!(status, 401);
    }
    let (status, body) = ui.second_factor(&token, "ZZZZZZZZZZ").await;
    assert_eq!(status, 423, "{body}");
    assert_eq!(body["error"]["type"], "account_locked");
    // Locked: even the right password is refused now.
    let (status, _) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!(status, 423);
}

/// 3.3 rows 4 and 5, 5.7: five failures within the window lock the email
/// (423 with retry_after_secs, known and unknown emails alike); a quiet
/// window unlocks it and resets the count.
async fn lockout_and_its_reset(db: TestDb) {
    let env = FullEnv::start_tuned(db, &admin_env(), |c| {
        c.tuning.auth.lockout_window = Duration::from_secs(2);
    })
    .await;
    let ui = env.ui();
    for email in [ADMIN_EMAIL, "nobody@example.com"] {
        for _ in 0..4 {
            let (status, body) = ui.login(email, "wrong password").await;
            assert_eq!(status, 401);
            assert_eq!(body["error"]["message"], "invalid email or password");
        }
        let resp = ui
            .post(
                "/_ui/api/auth/login",
                json!({"email": email, "password": "wrong password"}),
            )
            .await;
        assert_eq!(resp.status(), 423);
        let retry = resp.headers()["retry-after"].to_str().unwrap().to_owned();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["type"], "account_locked");
        let secs = body["retry_after_secs"].as_u64().unwrap();
        assert!((1..=2).contains(&secs), "{secs}");
        assert_eq!(retry, secs.to_string());
    }
    // Locked: the right password is refused too.
    let (status, _) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!(status, 423);

    // After the window without failures: unlocked, the count starts again.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let (status, body) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!((status, &body["needs_2fa"]), (200, &json!(true)));
    for _ in 0..4 {
        assert_eq!(ui.login(ADMIN_EMAIL, "wrong password").await.0, 401);
    }
    tokio::time::sleep(Duration::from_millis(2200)).await;
    // Four old failures expired: one new failure is not a lockout.
    assert_eq!(ui.login(ADMIN_EMAIL, "wrong password").await.0, 401);
    assert_eq!(ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await.0, 200);
}

/// The default window is 15 minutes.
async fn lockout_lasts_fifteen_minutes(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let ui = env.ui();
    for _ in 0..4 {
        ui.login("x@example.com", "wrong").await;
    }
    let (status, body) = ui.login("x@example.com", "wrong").await;
    assert_eq!(status, 423);
    let secs = body["retry_after_secs"].as_u64().unwrap();
    assert!((895..=900).contains(&secs), "{secs}");
}

crate::both_stores!(
    password_without_totp_is_restricted_to_enrollment,
    totp_login_goes_through_the_pending_token,
    reused_totp_code_is_refused,
    recovery_code_signs_in_once,
    a_recovery_code_raced_signs_in_once,
    pending_login_token_expires,
    wrong_codes_count_toward_the_lockout,
    lockout_and_its_reset,
    lockout_lasts_fifteen_minutes,
);
