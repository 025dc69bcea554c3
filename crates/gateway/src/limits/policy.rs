//! What a key or a user may spend and how fast it may go: a budget in USD
//! over a period, requests and tokens per minute. Periods are calendar
//! periods in UTC: a day from midnight, a week from Monday midnight, a
//! month from the first at midnight; a budget without a period never resets.

use time::{Date, Month, OffsetDateTime, Time};

use crate::store::api_keys::LimitColumns;

/// How often a budget starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum BudgetPeriod {
    Daily,
    Weekly,
    Monthly,
}

impl BudgetPeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetPeriod::Daily => "daily",
            BudgetPeriod::Weekly => "weekly",
            BudgetPeriod::Monthly => "monthly",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "daily" => Some(BudgetPeriod::Daily),
            "weekly" => Some(BudgetPeriod::Weekly),
            "monthly" => Some(BudgetPeriod::Monthly),
            _ => None,
        }
    }

    /// The period holding `now` (Unix seconds): `[start, end)`.
    pub fn window(self, now: i64) -> (i64, i64) {
        const DAY: i64 = 86_400;
        let day = now.div_euclid(DAY);
        match self {
            BudgetPeriod::Daily => (day * DAY, (day + 1) * DAY),
            BudgetPeriod::Weekly => {
                // 1970-01-01 was a Thursday: Monday is 3 days before.
                let monday = day - (day + 3).rem_euclid(7);
                (monday * DAY, (monday + 7) * DAY)
            }
            BudgetPeriod::Monthly => {
                let date = OffsetDateTime::from_unix_timestamp(now)
                    .map_or(Date::MIN, OffsetDateTime::date);
                let first = |year: i32, month: Month| {
                    Date::from_calendar_date(year, month, 1).map_or(0, |d| {
                        d.with_time(Time::MIDNIGHT).assume_utc().unix_timestamp()
                    })
                };
                let (next_year, next_month) = match date.month() {
                    Month::December => (date.year() + 1, Month::January),
                    m => (date.year(), m.next()),
                };
                (
                    first(date.year(), date.month()),
                    first(next_year, next_month),
                )
            }
        }
    }
}

/// A budget: USD per period (`None`: for the whole life of the key or user).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub usd: f64,
    pub period: Option<BudgetPeriod>,
}

impl Budget {
    /// The span counted now: the current period, or all time.
    pub fn window(&self, now: i64) -> (i64, Option<i64>) {
        match self.period {
            Some(p) => {
                let (start, end) = p.window(now);
                (start, Some(end))
            }
            None => (0, None),
        }
    }

    /// The amount in whole micro-dollars, as the counters hold spending.
    pub fn micros(&self) -> i64 {
        usd_to_micros(self.usd)
    }
}

/// USD as whole micro-dollars (counters add integers, exactly).
pub fn usd_to_micros(usd: f64) -> i64 {
    // Saturating float-to-int cast; amounts are validated to be finite and
    // non-negative where they enter.
    #[expect(clippy::cast_possible_truncation, reason = "saturating by design")]
    let micros = (usd * 1_000_000.0).round() as i64;
    micros
}

/// Micro-dollars as USD.
pub fn micros_to_usd(micros: i64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "amounts far below 2^53")]
    let usd = micros as f64 / 1_000_000.0;
    usd
}

/// The limits of one key or one user; all `None`: unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Limits {
    pub budget: Option<Budget>,
    /// Requests per minute.
    pub rpm: Option<u32>,
    /// Tokens (input and output) per minute.
    pub tpm: Option<u32>,
}

impl Limits {
    /// From the stored columns (`budget_period` without `budget_usd` means
    /// nothing; an unknown period is read as none).
    pub fn from_columns(
        budget_usd: Option<f64>,
        budget_period: Option<&str>,
        rpm: Option<i64>,
        tpm: Option<i64>,
    ) -> Self {
        let clamp = |n: Option<i64>| n.map(|n| u32::try_from(n.max(0)).unwrap_or(u32::MAX));
        Limits {
            budget: budget_usd.map(|usd| Budget {
                usd,
                period: budget_period.and_then(BudgetPeriod::parse),
            }),
            rpm: clamp(rpm),
            tpm: clamp(tpm),
        }
    }

    /// A key's or a user's stored limit columns.
    pub fn of(columns: &LimitColumns) -> Self {
        Self::from_columns(
            columns.budget_usd,
            columns.budget_period.as_deref(),
            columns.rpm_limit,
            columns.tpm_limit,
        )
    }

    pub fn is_unlimited(&self) -> bool {
        self.budget.is_none() && self.rpm.is_none() && self.tpm.is_none()
    }

    /// Whether requests or tokens per minute are limited.
    pub fn is_rate_limited(&self) -> bool {
        self.rpm.is_some() || self.tpm.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
            .unwrap()
            .unix_timestamp()
    }

    #[test]
    fn periods_are_utc_calendar_periods() {
        let now = at("2026-11-27T15:30:00Z"); // a Friday
        assert_eq!(
            BudgetPeriod::Daily.window(now),
            (at("2026-11-27T00:00:00Z"), at("2026-11-28T00:00:00Z"))
        );
        assert_eq!(
            BudgetPeriod::Weekly.window(now),
            (at("2026-11-23T00:00:00Z"), at("2026-11-30T00:00:00Z"))
        );
        assert_eq!(
            BudgetPeriod::Monthly.window(now),
            (at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"))
        );
        let december = at("2026-12-31T23:59:59Z");
        assert_eq!(
            BudgetPeriod::Monthly.window(december),
            (at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"))
        );
        // A Monday belongs to the week it starts.
        let monday = at("2026-11-30T00:00:00Z");
        assert_eq!(BudgetPeriod::Weekly.window(monday).0, monday);
        assert_eq!(
            BudgetPeriod::Weekly.window(monday - 1).0,
            at("2026-11-23T00:00:00Z")
        );
    }

    #[test]
    fn columns_and_amounts() {
        let l = Limits::from_columns(Some(2.5), Some("weekly"), Some(5), None);
        assert_eq!(
            l.budget,
            Some(Budget {
                usd: 2.5,
                period: Some(BudgetPeriod::Weekly)
            })
        );
        assert_eq!((l.rpm, l.tpm), (Some(5), None));
        assert!(l.is_rate_limited() && !l.is_unlimited());
        assert!(Limits::from_columns(None, Some("daily"), None, None).is_unlimited());
        assert_eq!(usd_to_micros(0.000_001_4), 1);
        assert_eq!(usd_to_micros(12.345_678), 12_345_678);
        assert!((micros_to_usd(1_500_000) - 1.5).abs() < 1e-12);
        assert_eq!(
            Budget {
                usd: 1.0,
                period: None
            }
            .window(99),
            (0, None)
        );
    }
}
