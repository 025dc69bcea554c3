//! How the simulated guardrail service behaves ([`GuardrailConfig`]): the
//! access keys whose signatures it accepts, and the guardrail's blocked
//! messages.

/// The access key id the guardrail service accepts by default.
pub const DEFAULT_GUARDRAIL_ACCESS_KEY_ID: &str = "AKIDSIMGUARDRAIL";
/// Its secret access key.
pub const DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY: &str = "sim-guardrail-secret-key";
/// The guardrail's message for a blocked input or output.
pub const DEFAULT_BLOCKED_MESSAGE: &str = "Sorry, the model cannot answer this question.";

/// Behaviour of the simulated guardrail service. Can be changed at run time
/// with [`crate::SimHandle::update_guardrail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardrailConfig {
    /// `(access key id, secret access key)` pairs whose SigV4 signatures it accepts.
    pub credentials: Vec<(String, String)>,
    /// Accept any well-formed `Authorization` (key, date and signature
    /// unchecked): benchmarks and manual runs.
    pub accept_any_signature: bool,
    /// `outputs[0].text` of a blocked `INPUT` call.
    pub blocked_input_message: String,
    /// `outputs[0].text` of a blocked `OUTPUT` call.
    pub blocked_output_message: String,
}

impl GuardrailConfig {
    /// The secret of a known access key id.
    pub fn secret_of(&self, access_key_id: &str) -> Option<String> {
        self.credentials
            .iter()
            .find(|(id, _)| id == access_key_id)
            .map(|(_, secret)| secret.clone())
    }
}

impl Default for GuardrailConfig {
    fn default() -> Self {
        GuardrailConfig {
            credentials: vec![(
                DEFAULT_GUARDRAIL_ACCESS_KEY_ID.to_owned(),
                DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY.to_owned(),
            )],
            accept_any_signature: false,
            blocked_input_message: DEFAULT_BLOCKED_MESSAGE.to_owned(),
            blocked_output_message: DEFAULT_BLOCKED_MESSAGE.to_owned(),
        }
    }
}
