//! The model list of `GET /v1/models`.

use serde::{Deserialize, Serialize};

use super::request::null_as_default;

/// `GET /v1/models` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    /// `list`.
    #[serde(default = "list_object")]
    pub object: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: Vec<Model>,
}

impl ModelList {
    pub fn new(data: Vec<Model>) -> Self {
        ModelList {
            object: list_object(),
            data,
        }
    }
}

/// One model of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    /// `model`.
    #[serde(default = "model_object")]
    pub object: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub created: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub owned_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Model {
    pub fn new(id: impl Into<String>, created: u64, owned_by: impl Into<String>) -> Self {
        Model {
            id: id.into(),
            object: model_object(),
            created,
            owned_by: owned_by.into(),
            description: None,
        }
    }
}

fn list_object() -> String {
    "list".to_owned()
}

fn model_object() -> String {
    "model".to_owned()
}
