pub fn router() -> axum::Router<crate::state::AppState> { axum::Router::new() }
