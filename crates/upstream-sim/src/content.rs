//! Deterministic answer content: generated text of an exact length, chunking
//! on character boundaries, and tool inputs shaped by a tool's JSON schema.

use serde_json::{Map, Value};

const ANSWER: &str = "The upstream simulator streams this answer in small pieces, \
so that every client can check how it joins text deltas, counts usage and ends a turn. ";
const ANSWER_UNICODE: &str = "Ünïcödé answer: 日本語のテキスト, emoji 🙂🚀, café — naïve \
façade; Ελληνικά and русский текст. ";
const THOUGHT: &str = "Let me think about the question step by step before I answer it. ";

/// Which text to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Answer,
    AnswerUnicode,
    Thought,
}

/// Exactly `len` characters of text, repeating a fixed paragraph.
pub fn generate(len: usize, flavor: Flavor) -> String {
    let source = match flavor {
        Flavor::Answer => ANSWER,
        Flavor::AnswerUnicode => ANSWER_UNICODE,
        Flavor::Thought => THOUGHT,
    };
    source.chars().cycle().take(len).collect()
}

/// Split `text` into pieces of `chunk` characters (the last may be shorter).
/// `chunk` 0 is treated as 1; empty text gives no pieces.
pub fn chunks(text: &str, chunk: usize) -> Vec<&str> {
    let chunk = chunk.max(1);
    let mut out = Vec::with_capacity(text.len() / chunk + 1);
    let mut start = 0;
    let mut count = 0;
    for (i, _) in text.char_indices() {
        if count == chunk {
            out.push(&text[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Split `text` into `n` pieces of near-equal character counts (fewer when the
/// text is shorter than `n` characters; never an empty piece).
pub fn fragments(text: &str, n: usize) -> Vec<&str> {
    let total = text.chars().count();
    let n = n.clamp(1, total.max(1));
    let base = total / n;
    let extra = total % n;
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for k in 0..n {
        let size = base + usize::from(k < extra);
        let (Some(&from), Some(&to)) = (bounds.get(at), bounds.get(at + size)) else {
            break;
        };
        if from < to {
            out.push(&text[from..to]);
        }
        at += size;
    }
    out
}

/// A tool input for call number `i`: one value per schema property, typed by
/// the property's `type`; `{"query": "sim-<i>"}` without properties.
pub fn tool_input(schema: Option<&Value>, i: usize) -> Value {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty());
    let Some(props) = props else {
        let mut m = Map::new();
        m.insert("query".into(), Value::String(format!("sim-{i}")));
        return Value::Object(m);
    };
    let mut m = Map::new();
    for (name, prop) in props {
        let kind = prop.get("type").and_then(Value::as_str).unwrap_or("string");
        let value = match kind {
            "integer" | "number" => Value::from(i + 1),
            "boolean" => Value::Bool(true),
            "array" => Value::Array(Vec::new()),
            "object" => Value::Object(Map::new()),
            "null" => Value::Null,
            _ => match prop
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|e| e.first())
            {
                Some(first) => first.clone(),
                None => Value::String(format!("{name}-{i}")),
            },
        };
        m.insert(name.clone(), value);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generate_is_exact_and_deterministic() {
        for flavor in [Flavor::Answer, Flavor::AnswerUnicode, Flavor::Thought] {
            for len in [0, 1, 7, 500] {
                let t = generate(len, flavor);
                assert_eq!(t.chars().count(), len);
                assert_eq!(t, generate(len, flavor));
            }
        }
        assert!(
            generate(200, Flavor::AnswerUnicode).len() > 200,
            "multi-byte"
        );
    }

    #[test]
    fn chunks_respect_char_boundaries() {
        assert_eq!(chunks("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(chunks("日本語テキスト", 2), ["日本", "語テ", "キス", "ト"]);
        assert!(chunks("", 3).is_empty());
        assert_eq!(chunks("ab", 0), ["a", "b"]);
        let text = generate(301, Flavor::AnswerUnicode);
        assert_eq!(chunks(&text, 20).concat(), text);
        assert_eq!(chunks(&text, 20).len(), 16);
    }

    #[test]
    fn fragments_are_near_equal_and_complete() {
        assert_eq!(fragments("abcdefghij", 3), ["abcd", "efg", "hij"]);
        assert_eq!(fragments("ab", 5), ["a", "b"]);
        assert_eq!(fragments("", 3), Vec::<&str>::new());
        assert_eq!(fragments("é🙂x", 2), ["é🙂", "x"]);
        let s = r#"{"path":"README.md"}"#;
        assert_eq!(fragments(s, 4).concat(), s);
        assert_eq!(fragments(s, 4).len(), 4);
    }

    #[test]
    fn tool_inputs_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string"}, "count": {"type": "integer"}, "all": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "slow"]}, "tags": {"type": "array"}}});
        assert_eq!(
            tool_input(Some(&schema), 1),
            json!({"path": "path-1", "count": 2, "all": true, "mode": "fast", "tags": []})
        );
        assert_eq!(tool_input(None, 3), json!({"query": "sim-3"}));
        assert_eq!(
            tool_input(Some(&json!({"type": "object"})), 0),
            json!({"query": "sim-0"})
        );
    }
}
