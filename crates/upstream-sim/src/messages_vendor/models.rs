//! The messages vendor's model catalogue: `GET /v1/models` (newest first,
//! paged with `limit`, `after_id`, `before_id`), `GET /v1/models/{id}`, and
//! which names chat accepts when models are strict (listed ids, and their
//! undated aliases such as `claude-sonnet-4-5` or `claude-3-7-sonnet-latest`).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::error::MessagesError;

/// `(id, display_name, created_at)`, newest first.
const MODELS: &[(&str, &str, &str)] = &[
    (
        "claude-opus-4-5-20251101",
        "Claude Opus 4.5",
        "2025-11-24T00:00:00Z",
    ),
    (
        "claude-haiku-4-5-20251001",
        "Claude Haiku 4.5",
        "2025-10-15T00:00:00Z",
    ),
    (
        "claude-sonnet-4-5-20250929",
        "Claude Sonnet 4.5",
        "2025-09-29T00:00:00Z",
    ),
    (
        "claude-opus-4-1-20250805",
        "Claude Opus 4.1",
        "2025-08-05T00:00:00Z",
    ),
    (
        "claude-opus-4-20250514",
        "Claude Opus 4",
        "2025-05-22T00:00:00Z",
    ),
    (
        "claude-sonnet-4-20250514",
        "Claude Sonnet 4",
        "2025-05-22T00:00:00Z",
    ),
    (
        "claude-3-7-sonnet-20250219",
        "Claude Sonnet 3.7",
        "2025-02-24T00:00:00Z",
    ),
    (
        "claude-3-5-haiku-20241022",
        "Claude Haiku 3.5",
        "2024-10-22T00:00:00Z",
    ),
];

fn model_json(&(id, name, created): &(&str, &str, &str)) -> Value {
    json!({"type": "model", "id": id, "display_name": name, "created_at": created})
}

/// Whether chat accepts `model` when models are strict.
pub fn known(model: &str) -> bool {
    MODELS.iter().any(|(id, _, _)| {
        if *id == model {
            return true;
        }
        // `<id without its -YYYYMMDD date>` and `<that>-latest` are aliases.
        let undated = id.rsplit_once('-').map_or(*id, |(base, _)| base);
        model == undated || model.strip_suffix("-latest") == Some(undated)
    })
}

/// One model by id.
pub fn get(id: &str) -> Result<Value, MessagesError> {
    MODELS
        .iter()
        .find(|m| m.0 == id)
        .map(model_json)
        .ok_or_else(|| MessagesError::not_found(format!("model: {id}")))
}

/// One page of the list.
pub fn page(query: &HashMap<String, String>) -> Result<Value, MessagesError> {
    let limit =
        match query.get("limit").map(|l| l.parse::<usize>()) {
            None => 20,
            Some(Ok(n)) if (1..=1000).contains(&n) => n,
            Some(_) => return Err(MessagesError::invalid_request(
                "limit: Input should be greater than or equal to 1 and less than or equal to 1000",
            )),
        };
    let position = |id: &str| {
        MODELS
            .iter()
            .position(|m| m.0 == id)
            .ok_or_else(|| MessagesError::invalid_request(format!("Invalid model id: {id}")))
    };
    let (from, to) = match (query.get("after_id"), query.get("before_id")) {
        (Some(after), _) => {
            let start = position(after)? + 1;
            (start, (start + limit).min(MODELS.len()))
        }
        (None, Some(before)) => {
            let end = position(before)?;
            (end.saturating_sub(limit), end)
        }
        (None, None) => (0, limit.min(MODELS.len())),
    };
    let items = &MODELS[from..to];
    let has_more = match (query.get("after_id"), query.get("before_id")) {
        (None, Some(_)) => from > 0,
        _ => to < MODELS.len(),
    };
    Ok(json!({
        "data": items.iter().map(model_json).collect::<Vec<_>>(),
        "has_more": has_more,
        "first_id": items.first().map(|m| m.0),
        "last_id": items.last().map(|m| m.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn full_list_and_shape() {
        let p = page(&q(&[])).unwrap();
        let data = p["data"].as_array().unwrap();
        assert_eq!(data.len(), MODELS.len());
        assert_eq!(data[0]["type"], "model");
        assert_eq!(p["has_more"], false);
        assert_eq!(p["first_id"], "claude-opus-4-5-20251101");
        assert_eq!(p["last_id"], "claude-3-5-haiku-20241022");
    }

    #[test]
    fn paging_both_ways() {
        let p = page(&q(&[("limit", "3")])).unwrap();
        assert_eq!(p["has_more"], true);
        let last = p["last_id"].as_str().unwrap();
        let next = page(&q(&[("limit", "3"), ("after_id", last)])).unwrap();
        assert_eq!(next["first_id"], "claude-opus-4-1-20250805");
        let back = page(&q(&[
            ("limit", "3"),
            ("before_id", "claude-opus-4-1-20250805"),
        ]))
        .unwrap();
        assert_eq!(back["first_id"], p["first_id"]);
        assert_eq!(back["has_more"], false);
        assert!(page(&q(&[("limit", "0")])).is_err());
        assert!(page(&q(&[("after_id", "nope")])).is_err());
    }

    #[test]
    fn aliases_are_known() {
        assert!(known("claude-sonnet-4-5-20250929"));
        assert!(known("claude-sonnet-4-5"));
        assert!(known("claude-3-7-sonnet-latest"));
        assert!(!known("claude-sonnet-9"));
        assert!(get("claude-opus-4-20250514").is_ok());
        assert_eq!(get("x").unwrap_err().status.as_u16(), 404);
    }
}
