//! The prices usage is costed at ([`PriceBook`]): the model registry's
//! prices per provider and model, swapped whole whenever the registry's
//! live view is (the writer reads it for each record it takes).

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::store::model_registry::Prices;
use crate::store::usage::UsageRecord;

/// Provider id -> upstream model id -> prices.
pub(crate) type PriceTable = HashMap<String, HashMap<String, Prices>>;

/// The current prices; shared by the registry's view and the usage writer.
#[derive(Debug, Default)]
pub(crate) struct PriceBook {
    table: ArcSwap<PriceTable>,
}

impl PriceBook {
    /// Swap in a new table.
    pub(crate) fn replace(&self, table: PriceTable) {
        self.table.store(Arc::new(table));
    }

    /// The cost of `record` in USD, when its model has a price. A model
    /// sent under its undated name (`claude-sonnet-4-5`) is costed at the
    /// registry's dated entry (`claude-sonnet-4-5-20250929`) when the
    /// registry has no entry of the undated name.
    pub(crate) fn cost(&self, record: &UsageRecord) -> Option<f64> {
        let table = self.table.load();
        let models = table.get(&record.provider)?;
        let prices = models
            .get(&record.model)
            .or_else(|| dated(models, &record.model))?;
        prices.cost(
            record.input_tokens,
            record.output_tokens,
            record.cache_read_tokens,
            record.cache_write_tokens,
        )
    }
}

/// The entry named `model` plus a `-YYYYMMDD` date.
fn dated<'a>(models: &'a HashMap<String, Prices>, model: &str) -> Option<&'a Prices> {
    models.iter().find_map(|(id, prices)| {
        let date = id.strip_prefix(model)?.strip_prefix('-')?;
        (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then_some(prices)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ids::UserId;

    fn record(provider: &str, model: &str) -> UsageRecord {
        UsageRecord {
            user_id: UserId::new(),
            key_id: None,
            provider: provider.into(),
            model: model.into(),
            stream: false,
            status: 200,
            input_tokens: 1_000,
            output_tokens: 2_000,
            cache_read_tokens: 10_000,
            cache_write_tokens: 100,
            latency_ms: 1,
            created_at: 0,
            cost_usd: None,
            requests: 1,
        }
    }

    #[test]
    fn records_are_costed_at_their_model_s_prices() {
        let book = PriceBook::default();
        let sonnet = Prices {
            input: Some(3.0),
            output: Some(15.0),
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        };
        let gpt = Prices {
            input: Some(2.5),
            output: Some(10.0),
            cache_read: None,
            cache_write: None,
        };
        let mut table = PriceTable::new();
        table
            .entry("messages_vendor".into())
            .or_default()
            .insert("claude-sonnet-4-5-20250929".into(), sonnet);
        table
            .entry("completions_vendor".into())
            .or_default()
            .insert("gpt-4o".into(), gpt);
        table
            .entry("primary".into())
            .or_default()
            .insert("auto".into(), Prices::default());
        book.replace(table);
        // 1k in at 3, 2k out at 15, 10k cache read at 0.3, 100 written at 3.75.
        let expected = (3_000.0 + 30_000.0 + 3_000.0 + 375.0) / 1e6;
        let cost = book
            .cost(&record("messages_vendor", "claude-sonnet-4-5-20250929"))
            .unwrap();
        assert!((cost - expected).abs() < 1e-12, "{cost}");
        let undated = book
            .cost(&record("messages_vendor", "claude-sonnet-4-5"))
            .unwrap();
        assert!((undated - expected).abs() < 1e-12);
        // Cache tokens without their own price cost the input price.
        let cost = book.cost(&record("completions_vendor", "gpt-4o")).unwrap();
        assert!((cost - (2_500.0 + 20_000.0 + 25_000.0 + 250.0) / 1e6).abs() < 1e-12);
        assert_eq!(
            book.cost(&record("primary", "auto")),
            None,
            "no price known"
        );
        assert_eq!(book.cost(&record("custom", "llama3")), None);
        assert_eq!(
            book.cost(&record("messages_vendor", "claude-sonnet-4")),
            None
        );
    }
}
