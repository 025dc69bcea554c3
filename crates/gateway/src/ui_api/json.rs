//! `UiJson<T>`: the request body of a `/_ui/api` call, parsed once with the
//! same rules and messages as the `/v1` bodies (JSON content type required,
//! `validation_error` naming the failing field).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};

use crate::error::GatewayError;

/// A JSON request body.
#[derive(Debug, Clone)]
pub(crate) struct UiJson<T>(pub T);

impl<T, S> FromRequest<S> for UiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = GatewayError;

    async fn from_request(request: Request, state: &S) -> Result<Self, GatewayError> {
        let headers = request.headers().clone();
        let body = Bytes::from_request(request, state)
            .await
            .map_err(|e| GatewayError::validation(format!("cannot read the request body: {e}")))?;
        crate::body::parse_json(&headers, &body).map(UiJson)
    }
}

/// For `#[serde(default, deserialize_with = "present")]` on an
/// `Option<Option<T>>` field of a `PATCH` body: a field that is there is
/// `Some` (`Some(None)` for `null`, which clears), an absent one `None`
/// (left as it is).
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}
