//! What a request's handling learns for its access line and its metrics:
//! the provider and upstream model it was routed to (interfaces.md 5.3),
//! the account that called (full deployment), and whether its usage ticket
//! times the answer.
//!
//! A task-local slot, filled by the pipeline and read by
//! [`super::request_context`] when the response starts. Recording the same
//! on the request span (`Span::record`) made `tracing_subscriber` format the
//! span's fields a second time on every request; the slot costs a few
//! instructions and keeps the access line the one place these fields are
//! written. The account is noted here for the same reason: a `caller`
//! span around the handler cost about 3,000 instructions a request (the
//! span's storage, its fields formatted, entered and left at every poll)
//! for lines that only appear when something goes wrong; those lines carry
//! the request id, which the access line links to the account.

use std::cell::RefCell;
use std::future::Future;

/// The route of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessNote {
    pub provider: Option<&'static str>,
    pub model: Option<String>,
    /// The API key that called, in full deployment.
    pub account: Option<Account>,
    /// A chat call's usage ticket records the answer's duration when the
    /// answer (a stream too) has ended; the middleware does not.
    pub answer_metered: bool,
}

/// A full-deployment caller: the key's owner and the key (the store's ids,
/// as UUIDs: this layer sits below the store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    pub user_id: uuid::Uuid,
    pub key_id: uuid::Uuid,
}

tokio::task_local! {
    static NOTE: RefCell<AccessNote>;
}

/// Run `fut` with an empty note; the note is returned with its output.
pub async fn scoped<F: Future>(fut: F) -> (F::Output, AccessNote) {
    let mut scoped = std::pin::pin!(NOTE.scope(RefCell::new(AccessNote::default()), fut));
    let output = scoped.as_mut().await;
    let note = scoped
        .as_mut()
        .take_value()
        .map(RefCell::into_inner)
        .unwrap_or_default();
    (output, note)
}

/// Note the provider and model of the current request (a no-op outside a
/// request, e.g. in a unit test that calls the pipeline directly).
pub fn note_route(provider: &'static str, model: &str) {
    let _ = NOTE.try_with(|note| {
        let mut note = note.borrow_mut();
        note.provider = Some(provider);
        note.model = Some(model.to_owned());
    });
}

/// Note the account of the current request (a no-op outside a request).
pub fn note_account(account: Account) {
    let _ = NOTE.try_with(|note| note.borrow_mut().account = Some(account));
}

/// Note that the request's usage ticket records its answer's duration (a
/// no-op outside a request).
pub fn note_answer_metered() {
    let _ = NOTE.try_with(|note| note.borrow_mut().answer_metered = true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_note_comes_back_with_the_output() {
        let (out, note) = scoped(async {
            tokio::task::yield_now().await;
            note_route("custom", "llama3");
            note_account(Account {
                user_id: uuid::Uuid::nil(),
                key_id: uuid::Uuid::from_u128(7),
            });
            7
        })
        .await;
        assert_eq!(out, 7);
        assert_eq!(note.provider, Some("custom"));
        assert_eq!(note.model.as_deref(), Some("llama3"));
        assert_eq!(
            note.account.map(|a| a.key_id),
            Some(uuid::Uuid::from_u128(7))
        );
    }

    #[tokio::test]
    async fn nothing_noted_is_an_empty_note() {
        let ((), note) = scoped(async {}).await;
        assert_eq!(note, AccessNote::default());
        note_route("primary", "outside a request");
    }
}
