//! The budget and rate-limit fields shared by the key calls
//! (`POST`/`PATCH /_ui/api/keys`) and the admin's per-user limits
//! (`PATCH /_ui/api/admin/users/:id/limits`): `budget_usd`,
//! `budget_period`, `rpm_limit`, `tpm_limit`; `null` removes one.

use serde::{Deserialize, Serialize};

use crate::error::GatewayError;
use crate::limits::policy::{BudgetPeriod, Limits};
use crate::store::api_keys::{LimitChange, LimitColumns};

/// Largest budget, in USD, and largest per-minute limit.
const BUDGET_MAX: f64 = 1e9;
const PER_MINUTE_MAX: i64 = 1_000_000_000;

/// The fields as a body gives them: absent (unchanged), `null` (removed)
/// or a value.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "LimitFieldsBody"))]
pub(crate) struct LimitFields {
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    pub budget_usd: Option<Option<f64>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "BudgetPeriod | null"))]
    pub budget_period: Option<Option<BudgetPeriod>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    pub rpm_limit: Option<Option<i64>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    pub tpm_limit: Option<Option<i64>>,
}

impl LimitFields {
    /// What is wrong with a value, if anything.
    pub(crate) fn validate(&self) -> Result<(), GatewayError> {
        if let Some(Some(usd)) = self.budget_usd {
            if !usd.is_finite() || !(0.0..=BUDGET_MAX).contains(&usd) {
                return Err(GatewayError::validation(
                    "budget_usd: an amount in USD from 0 to 1e9, or null for no budget",
                ));
            }
        }
        for (name, value) in [("rpm_limit", self.rpm_limit), ("tpm_limit", self.tpm_limit)] {
            if let Some(Some(n)) = value {
                if !(1..=PER_MINUTE_MAX).contains(&n) {
                    return Err(GatewayError::validation(format!(
                        "{name}: a whole number from 1 to 1e9 per minute, or null for no limit"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The change these fields make.
    pub(crate) fn change(&self) -> LimitChange {
        LimitChange {
            budget_usd: self.budget_usd,
            budget_period: self.budget_period.map(|p| p.map(|p| p.as_str().to_owned())),
            rpm_limit: self.rpm_limit,
            tpm_limit: self.tpm_limit,
        }
    }
}

/// The fields as an answer shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "LimitFieldsView"))]
pub(crate) struct LimitView {
    pub budget_usd: Option<f64>,
    pub budget_period: Option<BudgetPeriod>,
    pub rpm_limit: Option<i64>,
    pub tpm_limit: Option<i64>,
}

impl From<&LimitColumns> for LimitView {
    fn from(c: &LimitColumns) -> Self {
        let limits = Limits::of(c);
        LimitView {
            budget_usd: limits.budget.map(|b| b.usd),
            budget_period: limits
                .budget
                .and_then(|b| b.period)
                .or_else(|| c.budget_period.as_deref().and_then(BudgetPeriod::parse)),
            rpm_limit: c.rpm_limit,
            tpm_limit: c.tpm_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> LimitFields {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn absent_null_and_values() {
        let stored = LimitColumns {
            budget_usd: Some(5.0),
            budget_period: Some("daily".into()),
            rpm_limit: Some(10),
            tpm_limit: None,
        };
        let f = parse(r#"{"budget_usd": null, "tpm_limit": 500}"#);
        f.validate().unwrap();
        let mut out = stored.clone();
        f.change().apply(&mut out);
        assert_eq!(out.budget_usd, None);
        assert_eq!(
            out.budget_period.as_deref(),
            Some("daily"),
            "absent: unchanged"
        );
        assert_eq!((out.rpm_limit, out.tpm_limit), (Some(10), Some(500)));
        assert!(parse(r#"{"rpm_limit": 0}"#).validate().is_err());
        assert!(parse(r#"{"budget_usd": -1}"#).validate().is_err());
        assert!(serde_json::from_str::<LimitFields>(r#"{"budget_period": "hourly"}"#).is_err());
        let mut fresh = LimitColumns::default();
        parse(r#"{"budget_period": "weekly"}"#)
            .change()
            .apply(&mut fresh);
        assert_eq!(fresh.budget_period.as_deref(), Some("weekly"));
    }
}
