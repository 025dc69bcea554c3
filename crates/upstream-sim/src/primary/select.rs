//! Chooses the scenario of each chat request.
//!
//! Order: the next queued scenario ([`crate::SimHandle::push_scenario`]), then
//! the `sim:` directive lines of the current user message in order, then the
//! configured default scenario, then the built-in short answer. A scenario
//! with `times=N` is skipped once it has been used N times under its key, so
//! `sim: status code=429 times=1` followed by `sim: text` answers 429 once and
//! then text: a retry of the same request succeeds.

use std::collections::{HashMap, VecDeque};

use super::scenario::{Scenario, ScenarioParseError};

pub use crate::directive::{lines as directives, DIRECTIVE_PREFIX};

/// Parse every directive of `content`; the first bad one is an error.
pub fn parse_directives(content: &str) -> Result<Vec<Scenario>, ScenarioParseError> {
    directives(content).map(str::parse).collect()
}

/// Queued scenarios, the default one, and the `times` counters.
#[derive(Debug, Default)]
pub(crate) struct ScenarioBook {
    queue: VecDeque<Scenario>,
    default: Option<Scenario>,
    counters: HashMap<String, u32>,
}

impl ScenarioBook {
    pub fn new(default: Option<Scenario>) -> Self {
        ScenarioBook {
            default,
            ..ScenarioBook::default()
        }
    }

    pub fn push(&mut self, s: Scenario) {
        self.queue.push_back(s);
    }

    pub fn set_default(&mut self, s: Option<Scenario>) {
        self.default = s;
    }

    /// Forget queued scenarios and `times` counters (the default stays).
    pub fn reset(&mut self) {
        self.queue.clear();
        self.counters.clear();
    }

    /// Count one use of `s` if it is still active.
    fn admit(&mut self, s: &Scenario) -> bool {
        let Some(limit) = s.times else { return true };
        let used = self.counters.entry(s.counter_key()).or_insert(0);
        if *used >= limit {
            return false;
        }
        *used += 1;
        true
    }

    /// The scenario of one request, given its parsed directives.
    pub fn choose(&mut self, directives: Vec<Scenario>) -> Scenario {
        if let Some(s) = self.queue.pop_front() {
            return s;
        }
        for s in directives {
            if self.admit(&s) {
                return s;
            }
        }
        if let Some(d) = self.default.clone() {
            if self.admit(&d) {
                return d;
            }
        }
        Scenario::default_answer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(book: &mut ScenarioBook, content: &str) -> Scenario {
        book.choose(parse_directives(content).unwrap())
    }

    #[test]
    fn finds_directive_lines_only() {
        let content = "hello\n  sim: text len=5\nnot sim: here\nsim:echo";
        let found: Vec<_> = directives(content).collect();
        assert_eq!(found, ["text len=5", "echo"]);
        assert_eq!(directives("no directive").count(), 0);
    }

    #[test]
    fn once_then_next_line_then_default() {
        let mut book = ScenarioBook::new(None);
        let msg = "sim: status code=429 times=1\nsim: text len=10\nhi";
        assert_eq!(choose(&mut book, msg), Scenario::status(429).with_times(1));
        assert_eq!(choose(&mut book, msg), Scenario::text(10, 20));
        assert_eq!(choose(&mut book, "hi"), Scenario::default_answer());
    }

    #[test]
    fn exhausted_once_falls_back_to_default_answer() {
        let mut book = ScenarioBook::new(None);
        let msg = "sim: status code=500 times=2";
        assert!(matches!(
            choose(&mut book, msg).kind,
            super::super::scenario::ScenarioKind::Status { .. }
        ));
        assert!(matches!(
            choose(&mut book, msg).kind,
            super::super::scenario::ScenarioKind::Status { .. }
        ));
        assert_eq!(choose(&mut book, msg), Scenario::default_answer());
        // A different key has its own counter.
        let other = "sim: status code=500 times=2 key=other";
        assert_eq!(choose(&mut book, other).key.as_deref(), Some("other"));
        book.reset();
        assert_eq!(choose(&mut book, msg).times, Some(2));
    }

    #[test]
    fn queue_wins_and_is_consumed() {
        let mut book = ScenarioBook::new(Some(Scenario::echo()));
        book.push(Scenario::status(403));
        book.push(Scenario::text(3, 1));
        assert_eq!(choose(&mut book, "sim: tools"), Scenario::status(403));
        assert_eq!(choose(&mut book, "sim: tools"), Scenario::text(3, 1));
        assert_eq!(choose(&mut book, "sim: tools"), Scenario::tools(1, 3));
        assert_eq!(choose(&mut book, "plain"), Scenario::echo());
        book.set_default(None);
        assert_eq!(choose(&mut book, "plain"), Scenario::default_answer());
    }

    #[test]
    fn default_with_times() {
        let mut book = ScenarioBook::new(Some(Scenario::status(503).with_times(1)));
        assert_eq!(choose(&mut book, "x"), Scenario::status(503).with_times(1));
        assert_eq!(choose(&mut book, "x"), Scenario::default_answer());
    }

    #[test]
    fn bad_directive_is_an_error() {
        assert!(parse_directives("ok\nsim: bogus").is_err());
    }
}
