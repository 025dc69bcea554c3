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
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::Admin;
use super::json::UiJson;
use crate::config::Secret;
use crate::crypto::password;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::ids::UserId;
use crate::store::users::{validate_email, AuthMethod, NewUser, Role, RoleChoice, User};

#[derive(Deserialize)]
pub struct RoleBody {
    role: Role,
}

#[derive(Deserialize)]
pub struct CreateBody {
    email: String,
    password: Secret,
    role: Role,
}

#[derive(Deserialize)]
pub struct ResetBody {
    new_password: Secret,
}

/// The JSON of a user.
pub fn user_json(u: &User) -> Value {
    json!({
        "id": u.id,
        "email": u.email,
        "role": u.role,
        "auth_method": u.auth_method,
        "totp_enabled": u.totp_enabled,
        "must_change_password": u.must_change_password,
        "sso_linked": u.sso_subject.is_some(),
        "created_at": rfc3339(u.created_at),
        "last_login_at": u.last_login_at.map(rfc3339),
    })
}

fn parse_id(id: &str) -> Result<UserId, GatewayError> {
    id.parse()
        .map_err(|_| GatewayError::NotFound("user not found".into()))
}

/// `GET /_ui/api/users`.
pub async fn list(State(app): State<AppState>, _admin: Admin) -> Result<Json<Value>, GatewayError> {
    let users = app.store()?.users().list().await?;
    let list: Vec<Value> = users.iter().map(user_json).collect();
    Ok(Json(json!({"count": list.len(), "users": list})))
}

/// `GET /_ui/api/users/{id}`.
pub async fn detail(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<Value>, GatewayError> {
    let user = app
        .store()?
        .users()
        .get(parse_id(&id)?)
        .await?
        .ok_or_else(|| GatewayError::NotFound("user not found".into()))?;
    Ok(Json(user_json(&user)))
}

/// `PUT /_ui/api/users/{id}/role`.
pub async fn set_role(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<RoleBody>,
) -> Result<Json<Value>, GatewayError> {
    let user = app
        .store()?
        .users()
        .set_role(parse_id(&id)?, body.role)
        .await?;
    tracing::info!(by = %admin.user.id, user_id = %user.id, role = user.role.as_str(), "role changed");
    Ok(Json(user_json(&user)))
}

/// `DELETE /_ui/api/users/{id}`.
pub async fn delete(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<Value>, GatewayError> {
    let id = parse_id(&id)?;
    app.store()?.users().delete(id).await?;
    // The user's keys went with the account: stop them on this replica now
    // (other replicas hear of each deleted key from the store).
    app.key_cache().invalidate_user(id).await;
    app.user_tokens().invalidate(id).await;
    tracing::info!(by = %admin.user.id, user_id = %id, "user deleted");
    Ok(Json(json!({"ok": true})))
}

/// `POST /_ui/api/admin/users/create`.
pub async fn create(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<CreateBody>,
) -> Result<Json<Value>, GatewayError> {
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
    Ok(Json(json!({"ok": true, "user_id": user.id})))
}

/// `POST /_ui/api/admin/users/{id}/reset-password`.
pub async fn reset_password(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<ResetBody>,
) -> Result<Json<Value>, GatewayError> {
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
    Ok(Json(json!({"ok": true})))
}
