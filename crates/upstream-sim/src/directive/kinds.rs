//! The answer kinds both chat scenario types have, declared once:
//! [`chat_kinds!`] writes a kind enum (`default`, `text`, `echo`, `tools`,
//! `thinking`, `status`, plus the upstream's own thinking-shaped variants),
//! the scenario's constructors for each kind, and its [`Shaped`] impl (names
//! and keys), from a short declaration of what the upstream adds: its own
//! flag on `tools`, its own keys on `status`, more variants and aliases.
//!
//! [`Shaped`]: super::Shaped

/// Declare a chat scenario's kind enum; see the module docs. The scenario
/// type must have a `new(kind)` constructor.
macro_rules! chat_kinds {
    (
        $(#[$kind_doc:meta])*
        pub enum $kind:ident for $scenario:ident {
            tools: {
                $(#[$tools_doc:meta])*
                $tools_flag:ident
            },
            status: {
                $(
                    $(#[$status_doc:meta])*
                    $status_field:ident: $status_ty:ty = $status_default:expr, $status_key:ident
                ),* $(,)?
            },
            more: {
                $(
                    $(#[$more_doc:meta])*
                    $more:ident $more_name:literal fn $more_ctor:ident
                ),* $(,)?
            },
            aliases: { $($alias:literal => $aliased:literal),* $(,)? } $(,)?
        }
    ) => {
        $(#[$kind_doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $kind {
            /// A short answer that mentions the model.
            Default { chunk: usize },
            /// Generated text of `len` characters, `chunk` characters per
            /// event; `unicode` mixes in multi-byte characters.
            Text {
                len: usize,
                chunk: usize,
                unicode: bool,
            },
            /// The current user message's text, verbatim.
            Echo { chunk: usize },
            /// `n` tool calls, each input split into `fragments` pieces,
            /// after a short text when `preamble`; `name` names every call
            /// (else the request's tools in turn).
            Tools {
                n: usize,
                fragments: usize,
                preamble: bool,
                name: Option<String>,
                $(#[$tools_doc])*
                $tools_flag: bool,
            },
            /// Thinking text, then an answer.
            Thinking {
                thinking_len: usize,
                len: usize,
                chunk: usize,
            },
            $(
                $(#[$more_doc])*
                $more {
                    thinking_len: usize,
                    len: usize,
                    chunk: usize,
                },
            )*
            /// An HTTP error instead of an answer; `retry_after` in seconds.
            Status {
                code: u16,
                retry_after: Option<u32>,
                $(
                    $(#[$status_doc])*
                    $status_field: $status_ty,
                )*
            },
        }

        impl $scenario {
            /// The built-in short answer that mentions the model.
            pub fn default_answer() -> Self {
                let chunk = $crate::directive::defaults::CHUNK;
                $scenario::new($kind::Default { chunk })
            }

            /// Generated text of `len` characters in events of `chunk` characters.
            pub fn text(len: usize, chunk: usize) -> Self {
                let unicode = false;
                $scenario::new($kind::Text { len, chunk, unicode })
            }

            /// The current user message's text.
            pub fn echo() -> Self {
                let chunk = $crate::directive::defaults::CHUNK;
                $scenario::new($kind::Echo { chunk })
            }

            /// `n` tool calls with inputs in `fragments` pieces, after a short preamble.
            pub fn tools(n: usize, fragments: usize) -> Self {
                $scenario::new($kind::Tools {
                    n,
                    fragments,
                    preamble: true,
                    name: None,
                    $tools_flag: false,
                })
            }

            /// Thinking text, then an answer.
            pub fn thinking() -> Self {
                use $crate::directive::defaults::{ANSWER_LEN, CHUNK, THINKING_LEN};
                $scenario::new($kind::Thinking {
                    thinking_len: THINKING_LEN,
                    len: ANSWER_LEN,
                    chunk: CHUNK,
                })
            }

            $(
                $(#[$more_doc])*
                pub fn $more_ctor() -> Self {
                    use $crate::directive::defaults::{ANSWER_LEN, CHUNK, THINKING_LEN};
                    $scenario::new($kind::$more {
                        thinking_len: THINKING_LEN,
                        len: ANSWER_LEN,
                        chunk: CHUNK,
                    })
                }
            )*

            /// An HTTP error with the service's usual body for `code`.
            pub fn status(code: u16) -> Self {
                $scenario::new($kind::Status {
                    code,
                    retry_after: None,
                    $($status_field: $status_default,)*
                })
            }
        }

        impl $crate::directive::Shaped for $scenario {
            fn named(name: &str) -> Result<Self, $crate::directive::ScenarioParseError> {
                use $crate::directive::defaults::{CHUNK, FRAGMENTS, STATUS_CODE, TEXT_LEN};
                let name = match name {
                    $($alias => $aliased,)*
                    other => other,
                };
                Ok(match name {
                    "default" => $scenario::default_answer(),
                    "text" => $scenario::text(TEXT_LEN, CHUNK),
                    "echo" => $scenario::echo(),
                    "tools" => $scenario::tools(1, FRAGMENTS),
                    "thinking" => $scenario::thinking(),
                    $($more_name => $scenario::$more_ctor(),)*
                    "status" => $scenario::status(STATUS_CODE),
                    other => return $crate::directive::err(format!("unknown scenario '{other}'")),
                })
            }

            fn kind_keys(&mut self) -> (&'static str, Vec<$crate::directive::Key<'_>>) {
                use $crate::directive::{shape, Key};
                match &mut self.kind {
                    $kind::Default { chunk } => ("default", vec![Key::chunk(chunk)]),
                    $kind::Echo { chunk } => ("echo", vec![Key::chunk(chunk)]),
                    $kind::Text { len, chunk, unicode } => ("text", shape::text(len, chunk, unicode)),
                    $kind::Tools { n, fragments, preamble, name, $tools_flag } => {
                        let own = Key::flag(stringify!($tools_flag), $tools_flag, false);
                        ("tools", shape::tools(n, fragments, preamble, name, own))
                    }
                    $kind::Thinking { thinking_len, len, chunk } => {
                        ("thinking", shape::thinking(thinking_len, len, chunk))
                    }
                    $(
                        $kind::$more { thinking_len, len, chunk } => {
                            ($more_name, shape::thinking(thinking_len, len, chunk))
                        }
                    )*
                    $kind::Status { code, retry_after, $($status_field),* } => {
                        let own = [$(Key::$status_key(stringify!($status_field), $status_field)),*];
                        ("status", shape::status(code, retry_after, own))
                    }
                }
            }
        }
    };
}
pub(crate) use chat_kinds;

/// The keys of the answer shapes every chat scenario has, in canonical order.
pub(crate) mod shape {
    use crate::directive::defaults::{ANSWER_LEN, FRAGMENTS, TEXT_LEN, THINKING_LEN};
    use crate::directive::Key;

    /// `len`, `chunk`, `unicode`.
    pub(crate) fn text<'a>(
        len: &'a mut usize,
        chunk: &'a mut usize,
        unicode: &'a mut bool,
    ) -> Vec<Key<'a>> {
        vec![
            Key::count("len", len, TEXT_LEN),
            Key::chunk(chunk),
            Key::flag("unicode", unicode, false),
        ]
    }

    /// `n`, `fragments`, `preamble`, `name`, then the upstream's own flag.
    pub(crate) fn tools<'a>(
        n: &'a mut usize,
        fragments: &'a mut usize,
        preamble: &'a mut bool,
        name: &'a mut Option<String>,
        own: Key<'a>,
    ) -> Vec<Key<'a>> {
        vec![
            Key::positive("n", n, 1),
            Key::positive("fragments", fragments, FRAGMENTS),
            Key::flag("preamble", preamble, true),
            Key::word("name", name),
            own,
        ]
    }

    /// `thinking_len`, `len`, `chunk`.
    pub(crate) fn thinking<'a>(
        thinking_len: &'a mut usize,
        len: &'a mut usize,
        chunk: &'a mut usize,
    ) -> Vec<Key<'a>> {
        vec![
            Key::count("thinking_len", thinking_len, THINKING_LEN),
            Key::count("len", len, ANSWER_LEN),
            Key::chunk(chunk),
        ]
    }

    /// `code` (always printed), `retry_after`, then the upstream's own keys.
    pub(crate) fn status<'a>(
        code: &'a mut u16,
        retry_after: &'a mut Option<u32>,
        own: impl IntoIterator<Item = Key<'a>>,
    ) -> Vec<Key<'a>> {
        let mut keys = vec![
            Key::status_code(code),
            Key::seconds("retry_after", retry_after),
        ];
        keys.extend(own);
        keys
    }
}

/// The builder methods and trait impls every chat scenario type has
/// (`with_times`, `with_key`, `with_fault`, delays, `counter_key`, `FromStr`,
/// `Display`, `Default`), written once for both.
macro_rules! scenario_common {
    ($scenario:ident, $fault:ty) => {
        impl $scenario {
            /// Active for the first `n` requests with this scenario's key only.
            pub fn with_times(mut self, n: u32) -> Self {
                self.times = Some(n);
                self
            }

            /// Count `times` under this key.
            pub fn with_key(mut self, key: impl Into<String>) -> Self {
                self.key = Some(key.into());
                self
            }

            /// Inject a fault.
            pub fn with_fault(mut self, fault: $fault) -> Self {
                self.fault = Some(fault);
                self
            }

            /// Wait this long before the status line.
            pub fn with_header_delay(mut self, d: std::time::Duration) -> Self {
                self.header_delay = d;
                self
            }

            /// Wait this long before the first body byte (headers already sent).
            pub fn with_first_delay(mut self, d: std::time::Duration) -> Self {
                self.first_delay = d;
                self
            }

            /// Wait this long between events.
            pub fn with_interval(mut self, d: std::time::Duration) -> Self {
                self.interval = d;
                self
            }
        }

        impl Default for $scenario {
            fn default() -> Self {
                $scenario::default_answer()
            }
        }

        impl std::str::FromStr for $scenario {
            type Err = $crate::directive::ScenarioParseError;

            /// Parse the text after `sim:` (see the module docs).
            fn from_str(spec: &str) -> Result<Self, Self::Err> {
                $crate::directive::parse(spec)
            }
        }

        impl std::fmt::Display for $scenario {
            /// The canonical directive text (without `sim:`): only non-default values.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::directive::write(self, f)
            }
        }

        $crate::directive::common_keys!($scenario);
    };
}
pub(crate) use scenario_common;

/// The keys every scenario type has, as fields of the same names
/// (`header_delay`, `first_delay`, `interval`, `times`, `key`): its
/// [`HasCommonKeys`] impl and `counter_key`, for every directive type
/// (chat scenarios through [`scenario_common!`], the guardrail's directly).
///
/// [`HasCommonKeys`]: super::HasCommonKeys
macro_rules! common_keys {
    ($scenario:ident) => {
        impl $scenario {
            /// The key `times` counts under.
            pub fn counter_key(&self) -> String {
                match &self.key {
                    Some(k) => k.clone(),
                    None => self.to_string(),
                }
            }
        }

        impl $crate::directive::HasCommonKeys for $scenario {
            fn common(&mut self) -> $crate::directive::CommonKeys<'_> {
                $crate::directive::CommonKeys {
                    header_delay: &mut self.header_delay,
                    first_delay: &mut self.first_delay,
                    interval: &mut self.interval,
                    times: &mut self.times,
                    key: &mut self.key,
                }
            }
        }
    };
}
pub(crate) use common_keys;
