//! Model lists in the OpenAI shape, `{"object":"list","data":[{"id","object":"model","created","owned_by"}]}`:
//! the completions vendor's (chat, reasoning and a few non-chat models, as the
//! real list mixes them) and the custom endpoint's (a local server's models).

use serde_json::{json, Value};

/// `(id, created, owned_by)` of the completions vendor.
const COMPLETIONS: &[(&str, u64, &str)] = &[
    ("gpt-4o", 1_715_367_049, "system"),
    ("gpt-4o-mini", 1_721_172_741, "system"),
    ("gpt-4.1", 1_744_316_542, "system"),
    ("gpt-4.1-mini", 1_744_318_173, "system"),
    ("gpt-5", 1_754_425_777, "system"),
    ("gpt-5-mini", 1_754_425_928, "system"),
    ("o3", 1_744_225_308, "system"),
    ("o4-mini", 1_744_225_351, "system"),
    ("chatgpt-4o-latest", 1_723_515_131, "system"),
    ("text-embedding-3-small", 1_705_948_997, "system"),
    ("whisper-1", 1_677_532_384, "openai-internal"),
];

/// `(id, created, owned_by)` of the custom endpoint.
const CUSTOM: &[(&str, u64, &str)] = &[
    ("llama3.1:8b", 1_721_692_800, "library"),
    ("qwen2.5-coder:7b", 1_726_790_400, "library"),
    ("mistral-small", 1_737_936_000, "library"),
];

fn list(models: &[(&str, u64, &str)]) -> Value {
    json!({
        "object": "list",
        "data": models.iter().map(|(id, created, owner)| json!({
            "id": id, "object": "model", "created": created, "owned_by": owner,
        })).collect::<Vec<_>>(),
    })
}

/// The completions vendor's list.
pub fn completions_list() -> Value {
    list(COMPLETIONS)
}

/// The custom endpoint's list.
pub fn custom_list() -> Value {
    list(CUSTOM)
}

/// Whether the completions vendor serves `model` (strict models).
pub fn completions_known(model: &str) -> bool {
    COMPLETIONS.iter().any(|m| m.0 == model)
        // Dated snapshots such as `gpt-4o-2024-08-06` belong to their family.
        || COMPLETIONS.iter().any(|m| {
            model
                .strip_prefix(m.0)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|date| date.len() == 10 && date.as_bytes()[4] == b'-')
        })
}

/// Whether the custom endpoint serves `model` (strict models).
pub fn custom_known(model: &str) -> bool {
    CUSTOM.iter().any(|m| m.0 == model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_membership() {
        let l = completions_list();
        assert_eq!(l["object"], "list");
        assert_eq!(l["data"][0]["object"], "model");
        assert!(l["data"][0]["created"].is_u64());
        assert_eq!(custom_list()["data"][0]["owned_by"], "library");
        assert!(completions_known("gpt-4o"));
        assert!(completions_known("gpt-4o-2024-08-06"));
        assert!(!completions_known("gpt-4o-x"));
        assert!(custom_known("llama3.1:8b"));
        assert!(!custom_known("gpt-4o"));
    }
}
