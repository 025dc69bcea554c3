//! Talking to upstreams: the retry policy around one upstream request ([`http`]).

pub mod http;
