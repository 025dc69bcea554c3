//! Where configuration values come from: a snapshot of `.env` overlaid with the
//! process environment (the environment wins). Taking a snapshot, instead of
//! mutating the process environment with the `.env` values, keeps tests free to
//! build a source from a plain map.

use std::collections::HashMap;
use std::path::Path;

/// A snapshot of variables, read once.
#[derive(Debug, Clone, Default)]
pub struct EnvSource {
    vars: HashMap<String, String>,
}

impl EnvSource {
    /// `.env` in the working directory (when present), then the process environment on top.
    ///
    /// A `.env` that exists but cannot be parsed is an error naming the file.
    pub fn from_process() -> Result<Self, String> {
        Self::from_process_with_dotenv(Path::new(".env"))
    }

    /// Like [`EnvSource::from_process`] with an explicit `.env` path.
    pub fn from_process_with_dotenv(dotenv: &Path) -> Result<Self, String> {
        let mut vars = HashMap::new();
        match dotenvy::from_path_iter(dotenv) {
            Ok(iter) => {
                for item in iter {
                    let (key, value) =
                        item.map_err(|e| format!("{}: cannot be parsed: {e}", dotenv.display()))?;
                    vars.insert(key, value);
                }
            }
            Err(e) if e.not_found() => {}
            Err(e) => return Err(format!("{}: cannot be read: {e}", dotenv.display())),
        }
        // Variables whose name or value is not UTF-8 cannot be ours; skip them.
        for (key, value) in std::env::vars_os() {
            if let (Ok(key), Ok(value)) = (key.into_string(), value.into_string()) {
                vars.insert(key, value);
            }
        }
        Ok(EnvSource { vars })
    }

    /// A source holding exactly these pairs (tests, embedding).
    pub fn from_pairs<K, V, I>(pairs: I) -> Self
    where
        K: Into<String>,
        V: Into<String>,
        I: IntoIterator<Item = (K, V)>,
    {
        EnvSource {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Set or replace one variable.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(key.into(), value.into());
    }

    /// The value of `key`, trimmed; an unset or blank variable is `None`, so that
    /// compose files can pass `VAR=${VAR:-}` without changing behaviour.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_values_count_as_unset() {
        let src = EnvSource::from_pairs([("A", "  "), ("B", " x ")]);
        assert_eq!(src.get("A"), None);
        assert_eq!(src.get("B"), Some("x"));
        assert_eq!(src.get("C"), None);
    }

    #[test]
    fn dotenv_is_read_and_the_environment_wins() {
        let dir = std::env::temp_dir().join(format!("gw-env-{}", crate::ids::fast_uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(".env");
        // PATH is always set in the environment, so the file's value must lose.
        std::fs::write(
            &file,
            "GW_TEST_ONLY_IN_DOTENV=from-file\nPATH=/nowhere\n# comment\n",
        )
        .unwrap();
        let src = EnvSource::from_process_with_dotenv(&file).unwrap();
        assert_eq!(src.get("GW_TEST_ONLY_IN_DOTENV"), Some("from-file"));
        assert_ne!(src.get("PATH"), Some("/nowhere"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_dotenv_is_fine() {
        let src = EnvSource::from_process_with_dotenv(Path::new("/nonexistent/.env"));
        assert!(src.is_ok());
    }
}
