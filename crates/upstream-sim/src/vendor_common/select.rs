//! Chooses the scenario of each vendor request.
//!
//! Order, per vendor: the next scenario queued for that vendor
//! ([`crate::SimHandle::push_vendor_scenario`]), then the `sim:` directive
//! lines of the last user message in order (the same line syntax as the
//! primary simulator, [`crate::primary::select::directives`]), then the
//! configured default, then the built-in short answer. `times=N` counts per
//! vendor and key, so `sim: status code=429 times=1` then `sim: text` answers
//! 429 once and text on the retry, on each vendor separately.

use std::collections::{HashMap, VecDeque};

use super::scenario::{VendorScenario, VendorScenarioParseError};
use super::Vendor;
use crate::directive::lines as directives;

/// Parse every directive line of `text`; the first bad one is an error.
pub fn parse_directives(text: &str) -> Result<Vec<VendorScenario>, VendorScenarioParseError> {
    directives(text).map(str::parse).collect()
}

/// Queues per vendor, the default scenario and the `times` counters.
#[derive(Debug, Default)]
pub(crate) struct VendorBook {
    queues: HashMap<Vendor, VecDeque<VendorScenario>>,
    default: Option<VendorScenario>,
    counters: HashMap<(Vendor, String), u32>,
}

impl VendorBook {
    pub fn new(default: Option<VendorScenario>) -> Self {
        VendorBook {
            default,
            ..VendorBook::default()
        }
    }

    pub fn push(&mut self, vendor: Vendor, s: VendorScenario) {
        self.queues.entry(vendor).or_default().push_back(s);
    }

    pub fn set_default(&mut self, s: Option<VendorScenario>) {
        self.default = s;
    }

    /// Forget queued scenarios and `times` counters (the default stays).
    pub fn reset(&mut self) {
        self.queues.clear();
        self.counters.clear();
    }

    fn admit(&mut self, vendor: Vendor, s: &VendorScenario) -> bool {
        let Some(limit) = s.times else { return true };
        let used = self.counters.entry((vendor, s.counter_key())).or_insert(0);
        if *used >= limit {
            return false;
        }
        *used += 1;
        true
    }

    /// The scenario of one request to `vendor`, given its parsed directives.
    pub fn choose(&mut self, vendor: Vendor, directives: Vec<VendorScenario>) -> VendorScenario {
        if let Some(s) = self.queues.get_mut(&vendor).and_then(VecDeque::pop_front) {
            return s;
        }
        for s in directives {
            if self.admit(vendor, &s) {
                return s;
            }
        }
        if let Some(d) = self.default.clone() {
            if self.admit(vendor, &d) {
                return d;
            }
        }
        VendorScenario::default_answer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(book: &mut VendorBook, vendor: Vendor, text: &str) -> VendorScenario {
        book.choose(vendor, parse_directives(text).unwrap())
    }

    #[test]
    fn once_then_next_line_per_vendor() {
        let mut book = VendorBook::new(None);
        let msg = "sim: status code=429 times=1\nsim: text len=10\nhi";
        let limited = VendorScenario::status(429).with_times(1);
        assert_eq!(choose(&mut book, Vendor::Messages, msg), limited);
        assert_eq!(
            choose(&mut book, Vendor::Messages, msg),
            VendorScenario::text(10, 20)
        );
        // Another vendor has its own counter.
        assert_eq!(choose(&mut book, Vendor::Custom, msg), limited);
        assert_eq!(
            choose(&mut book, Vendor::Custom, "hi"),
            VendorScenario::default_answer()
        );
    }

    #[test]
    fn queues_are_per_vendor_and_win() {
        let mut book = VendorBook::new(Some(VendorScenario::echo()));
        book.push(Vendor::Assistant, VendorScenario::status(401));
        assert_eq!(
            choose(&mut book, Vendor::Completions, "sim: tools"),
            VendorScenario::tools(1, 3)
        );
        assert_eq!(
            choose(&mut book, Vendor::Assistant, "sim: tools"),
            VendorScenario::status(401)
        );
        assert_eq!(
            choose(&mut book, Vendor::Assistant, "plain"),
            VendorScenario::echo()
        );
        book.push(Vendor::Messages, VendorScenario::thinking());
        book.reset();
        book.set_default(None);
        assert_eq!(
            choose(&mut book, Vendor::Messages, "plain"),
            VendorScenario::default_answer()
        );
    }

    #[test]
    fn bad_directive_is_an_error() {
        assert!(parse_directives("ok\nsim: text bogus=1").is_err());
        assert!(parse_directives("no directives").unwrap().is_empty());
    }
}
