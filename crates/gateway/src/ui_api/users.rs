//! User administration (spec 4.3, 5.6), Admin only:
//!
//! - `GET /_ui/api/users` -> `{users: [user], count}`;
//! - `GET /_ui/api/users/{id}` -> `user`;
//! - `PUT /_ui/api/users/{id}/role {role: "Admin"|"User"}` -> `user`;
//! - `DELETE /_ui/api/users/{id}` -> `{ok: true}`;
//! - `POST /_ui/api/admin/users/create {email, password, role}` ->
//!   `{ok: true, user_id}`: a password account that must change the password
//!   (the admin knows it) and enroll 2FA at its first sign-in;
//! - `POST /_ui/api/admin/users/{id}/reset-password {new_password}` ->
//!   `{ok: true}`: sets `must_change_password`, ends the user's sessions and
//!   clears the user's failed sign-ins.
//!
//! A `user` is `{id, email, role, auth_method, totp_enabled,
//! must_change_password, sso_linked, created_at, last_login_at}`. Demoting
//! or deleting the last admin is 409 `conflict`.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::Admin;
use super::json::UiJson;
use super::reply::{Done, DONE, OK};
use crate::config::Secret;
use crate::crypto::password;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::ids::UserId;
use crate::store::users::{validate_email, AuthMethod, NewUser, Role, RoleChoice, User};

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RoleBody {
    role: Role,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "CreateUserBody"))]
pub(crate) struct CreateBody {
    email: String,
    #[cfg_attr(test, ts(type = "string"))]
    password: Secret,
    role: Role,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ResetPasswordBody"))]
pub(crate) struct ResetBody {
    #[cfg_attr(test, ts(type = "string"))]
    new_password: Secret,
}

/// A user as the API shows one.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "User"))]
pub(crate) struct UserView {
    id: UserId,
    email: String,
    role: Role,
    auth_method: AuthMethod,
    totp_enabled: bool,
    must_change_password: bool,
    sso_linked: bool,
    created_at: String,
    last_login_at: Option<String>,
}

impl From<&User> for UserView {
    fn from(u: &User) -> Self {
        UserView {
            id: u.id,
            email: u.email.clone(),
            role: u.role,
            auth_method: u.auth_method,
            totp_enabled: u.totp_enabled,
            must_change_password: u.must_change_password,
            sso_linked: u.sso_subject.is_some(),
            created_at: rfc3339(u.created_at),
            last_login_at: u.last_login_at.map(rfc3339),
        }
    }
}

/// `GET /_ui/api/users`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct UserList {
    count: usize,
    users: Vec<UserView>,
}

/// `POST /_ui/api/admin/users/create`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct CreatedUser {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    user_id: UserId,
}

pub(crate) fn parse_id(id: &str) -> Result<UserId, GatewayError> {
    id.parse()
        .map_err(|_| GatewayError::NotFound("user not found".into()))
}

/// `GET /_ui/api/users`.
pub(crate) async fn list(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<UserList>, GatewayError> {
    let users: Vec<UserView> = app
        .store()?
        .users()
        .list()
        .await?
        .iter()
        .map(UserView::from)
        .collect();
    Ok(Json(UserList {
        count: users.len(),
        users,
    }))
}

/// `GET /_ui/api/users/{id}`.
pub(crate) async fn detail(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<UserView>, GatewayError> {
    let user = app
        .store()?
        .users()
        .get(parse_id(&id)?)
        .await?
        .ok_or_else(|| GatewayError::NotFound("user not found".into()))?;
    Ok(Json(UserView::from(&user)))
}

/// `PUT /_ui/api/users/{id}/role`.
pub(crate) async fn set_role(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<RoleBody>,
) -> Result<Json<UserView>, GatewayError> {
    let user = app
        .store()?
        .users()
        .set_role(parse_id(&id)?, body.role)
        .await?;
    tracing::info!(by = %admin.user.id, user_id = %user.id, role = user.role.as_str(), "role changed");
    Ok(Json(UserView::from(&user)))
}

/// `DELETE /_ui/api/users/{id}`.
pub(crate) async fn delete(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let id = parse_id(&id)?;
    app.store()?.users().delete(id).await?;
    // The user's keys went with the account: stop them on this replica now
    // (other replicas hear of each deleted key from the store).
    app.key_cache().invalidate_user(id);
    app.user_tokens().invalidate(id);
    tracing::info!(by = %admin.user.id, user_id = %id, "user deleted");
    Ok(Json(DONE))
}

/// `POST /_ui/api/admin/users/create`.
pub(crate) async fn create(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<CreateBody>,
) -> Result<Json<CreatedUser>, GatewayError> {
    let email = validate_email(&body.email).map_err(GatewayError::Validation)?;
    password::check_rules(body.password.expose(), &email).map_err(GatewayError::Validation)?;
    let hash = app
        .passwords()
        .hash(&body.password)
        .await
        .map_err(GatewayError::internal)?;
    let user = app
        .store()?
        .users()
        .create(NewUser {
            email: &email,
            role: RoleChoice::Exactly(body.role),
            auth_method: AuthMethod::Password,
            password_hash: Some(&hash),
            sso_subject: None,
            totp_secret: None,
            must_change_password: true,
        })
        .await?;
    tracing::info!(by = %admin.user.id, user_id = %user.id, role = user.role.as_str(), "user created");
    Ok(Json(CreatedUser {
        ok: OK,
        user_id: user.id,
    }))
}

/// `POST /_ui/api/admin/users/{id}/reset-password`.
pub(crate) async fn reset_password(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<ResetBody>,
) -> Result<Json<Done>, GatewayError> {
    let store = app.store()?;
    let user = store
        .users()
        .get(parse_id(&id)?)
        .await?
        .ok_or_else(|| GatewayError::NotFound("user not found".into()))?;
    password::check_rules(body.new_password.expose(), &user.email)
        .map_err(|m| GatewayError::Validation(format!("new_{m}")))?;
    let hash = app
        .passwords()
        .hash(&body.new_password)
        .await
        .map_err(GatewayError::internal)?;
    store.users().set_password(user.id, &hash, true).await?;
    store.sessions().delete_for_user(user.id, None).await?;
    store.login_failures().clear(&user.email).await?;
    tracing::info!(by = %admin.user.id, user_id = %user.id, "password reset by an admin");
    Ok(Json(DONE))
}
