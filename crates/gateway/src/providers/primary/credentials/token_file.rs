//! `$DATA_DIR/tokens.json`: the proxy-mode credential file (spec 5.9,
//! interfaces.md 3). The primary provider's credentials are the top-level keys
//! `refresh_token`, `client_id`, `client_secret`, with optional `region`,
//! `sso_region`, `start_url`, `client_secret_expires_at`, `profile_arn`.
//! Every other key (other providers' entries) is kept as it is on rewrite.
//!
//! Writes are atomic (temporary file in the same folder, fsync, rename) and
//! the file is created with mode 0600. Read-modify-write cycles are serialized
//! within the process.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::config::Secret;

/// Keys of the primary provider's entry; `clear_primary` removes exactly these.
const PRIMARY_KEYS: [&str; 10] = [
    "refresh_token",
    "client_id",
    "client_secret",
    "client_secret_expires_at",
    "region",
    "sso_region",
    "start_url",
    "profile_arn",
    // Older writers may have cached these; they are dropped on rewrite.
    "access_token",
    "expires_at",
];

/// The primary provider's long-lived credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrimaryCredentials {
    pub refresh_token: Secret,
    pub client_id: String,
    pub client_secret: Secret,
    /// Unix seconds after which the OIDC client registration is void.
    pub client_secret_expires_at: Option<i64>,
    /// API region the credentials were obtained for.
    pub region: Option<String>,
    /// SSO OIDC region the client is registered in.
    pub sso_region: Option<String>,
    /// Start URL of the login (individual or organization).
    pub start_url: Option<String>,
    /// Profile ARN to send to the API, when known.
    pub profile_arn: Option<String>,
}

/// A problem with the file itself.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a JSON object ({detail}); fix or delete the file")]
    Malformed { path: PathBuf, detail: String },
    #[error("token file task failed: {0}")]
    Join(String),
}

/// Handle on the file; clones share the write lock.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl TokenFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TokenFile {
            path: path.into(),
            lock: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole file as a JSON object; `None` when it does not exist.
    pub async fn read_object(&self) -> Result<Option<Map<String, Value>>, TokenFileError> {
        let path = self.path.clone();
        run_blocking(move || read_object_sync(&path)).await
    }

    /// The primary credentials, or `None` when the file or one of the three
    /// required keys is missing.
    pub async fn load_primary(&self) -> Result<Option<PrimaryCredentials>, TokenFileError> {
        Ok(self.read_object().await?.and_then(|obj| primary_from(&obj)))
    }

    /// Write the primary credentials, keeping every other key of the file.
    pub async fn save_primary(&self, creds: &PrimaryCredentials) -> Result<(), TokenFileError> {
        let creds = creds.clone();
        self.update(move |obj| {
            for key in PRIMARY_KEYS {
                obj.remove(key);
            }
            primary_into(&creds, obj);
        })
        .await
    }

    /// Remove the primary credentials (spec 3.6 "cache cleared"), keeping other keys.
    /// The file is deleted when nothing else is left in it.
    pub async fn clear_primary(&self) -> Result<(), TokenFileError> {
        let _guard = self.lock.lock().await;
        let path = self.path.clone();
        run_blocking(move || {
            let Some(mut obj) = read_object_sync(&path)? else {
                return Ok(());
            };
            for key in PRIMARY_KEYS {
                obj.remove(key);
            }
            if obj.is_empty() {
                std::fs::remove_file(&path).map_err(|source| TokenFileError::Io {
                    path: path.clone(),
                    source,
                })
            } else {
                write_object_sync(&path, &obj)
            }
        })
        .await
    }

    /// Read-modify-write the whole object atomically (other providers' entries use this).
    pub async fn update<F>(&self, change: F) -> Result<(), TokenFileError>
    where
        F: FnOnce(&mut Map<String, Value>) + Send + 'static,
    {
        let _guard = self.lock.lock().await;
        let path = self.path.clone();
        run_blocking(move || {
            let mut obj = read_object_sync(&path)?.unwrap_or_default();
            change(&mut obj);
            write_object_sync(&path, &obj)
        })
        .await
    }
}

async fn run_blocking<T, F>(f: F) -> Result<T, TokenFileError>
where
    F: FnOnce() -> Result<T, TokenFileError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| TokenFileError::Join(e.to_string()))?
}

fn read_object_sync(path: &Path) -> Result<Option<Map<String, Value>>, TokenFileError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(TokenFileError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(obj)) => Ok(Some(obj)),
        Ok(_) => Err(TokenFileError::Malformed {
            path: path.to_owned(),
            detail: "the top level is not an object".into(),
        }),
        Err(e) => Err(TokenFileError::Malformed {
            path: path.to_owned(),
            detail: format!("line {} column {}", e.line(), e.column()),
        }),
    }
}

/// Temporary file in the same folder (so `rename` is atomic), mode 0600,
/// fsync, rename over the target, fsync the folder.
fn write_object_sync(path: &Path, obj: &Map<String, Value>) -> Result<(), TokenFileError> {
    let io_err = |source| TokenFileError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io_err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tokens.json".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", crate::ids::fast_uuid().simple()));
    let mut text = serde_json::to_vec_pretty(obj).map_err(|e| io_err(e.into()))?;
    text.push(b'\n');

    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(e));
    }
    // Make the rename itself durable; not every platform allows opening a folder.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn primary_from(obj: &Map<String, Value>) -> Option<PrimaryCredentials> {
    let text = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some(PrimaryCredentials {
        refresh_token: Secret::new(text("refresh_token")?),
        client_id: text("client_id")?,
        client_secret: Secret::new(text("client_secret")?),
        client_secret_expires_at: obj.get("client_secret_expires_at").and_then(Value::as_i64),
        region: text("region"),
        sso_region: text("sso_region"),
        start_url: text("start_url"),
        profile_arn: text("profile_arn"),
    })
}

fn primary_into(creds: &PrimaryCredentials, obj: &mut Map<String, Value>) {
    let mut put = |key: &str, value: Value| {
        obj.insert(key.to_owned(), value);
    };
    put("refresh_token", creds.refresh_token.expose().into());
    put("client_id", creds.client_id.clone().into());
    put("client_secret", creds.client_secret.expose().into());
    if let Some(v) = creds.client_secret_expires_at {
        put("client_secret_expires_at", v.into());
    }
    for (key, value) in [
        ("region", &creds.region),
        ("sso_region", &creds.sso_region),
        ("start_url", &creds.start_url),
        ("profile_arn", &creds.profile_arn),
    ] {
        if let Some(v) = value {
            put(key, v.clone().into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) struct TempDir(PathBuf);
    impl TempDir {
        pub(crate) fn new() -> Self {
            let p = std::env::temp_dir().join(format!("gw-tokens-{}", crate::ids::fast_uuid()));
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn creds() -> PrimaryCredentials {
        PrimaryCredentials {
            refresh_token: Secret::new("rt-1"),
            client_id: "cid".into(),
            client_secret: Secret::new("csec"),
            client_secret_expires_at: Some(1_900_000_000),
            region: Some("us-east-1".into()),
            sso_region: None,
            start_url: Some("https://view.awsapps.com/start".into()),
            profile_arn: None,
        }
    }

    #[tokio::test]
    async fn round_trip_creates_the_folder_and_mode_0600() {
        let dir = TempDir::new();
        let file = TokenFile::new(dir.0.join("nested/tokens.json"));
        assert_eq!(file.load_primary().await.unwrap(), None);
        file.save_primary(&creds()).await.unwrap();
        assert_eq!(file.load_primary().await.unwrap(), Some(creds()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let raw: Value = serde_json::from_slice(&std::fs::read(file.path()).unwrap()).unwrap();
        assert_eq!(raw["refresh_token"], "rt-1");
        assert_eq!(raw["client_id"], "cid");
        assert_eq!(raw["client_secret"], "csec");
        assert!(raw.get("sso_region").is_none());
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(dir.0.join("nested"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["tokens.json"]);
    }

    #[tokio::test]
    async fn unknown_keys_survive_rewrite_and_clear() {
        let dir = TempDir::new();
        std::fs::create_dir_all(&dir.0).unwrap();
        let path = dir.0.join("tokens.json");
        std::fs::write(
            &path,
            r#"{"copilot":{"token":"t","expires_at":5},"refresh_token":"old","client_id":"c","client_secret":"s","access_token":"stale"}"#,
        )
        .unwrap();
        let file = TokenFile::new(&path);
        file.save_primary(&creds()).await.unwrap();
        let obj = file.read_object().await.unwrap().unwrap();
        assert_eq!(
            obj["copilot"],
            serde_json::json!({"token":"t","expires_at":5})
        );
        assert_eq!(obj["refresh_token"], "rt-1");
        assert!(obj.get("access_token").is_none());

        file.clear_primary().await.unwrap();
        let obj = file.read_object().await.unwrap().unwrap();
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["copilot"]);
        assert_eq!(file.load_primary().await.unwrap(), None);
    }

    #[tokio::test]
    async fn clearing_the_only_entry_deletes_the_file() {
        let dir = TempDir::new();
        let file = TokenFile::new(dir.0.join("tokens.json"));
        file.save_primary(&creds()).await.unwrap();
        file.clear_primary().await.unwrap();
        assert!(!file.path().exists());
        // Clearing a missing file is fine.
        file.clear_primary().await.unwrap();
    }

    #[tokio::test]
    async fn incomplete_or_malformed_files() {
        let dir = TempDir::new();
        std::fs::create_dir_all(&dir.0).unwrap();
        let path = dir.0.join("tokens.json");
        std::fs::write(&path, r#"{"refresh_token":"x","client_id":"c"}"#).unwrap();
        assert_eq!(TokenFile::new(&path).load_primary().await.unwrap(), None);
        std::fs::write(&path, "{not json").unwrap();
        let err = TokenFile::new(&path).load_primary().await.unwrap_err();
        assert!(err.to_string().contains("fix or delete"));
        assert!(!err.to_string().contains("not json"));
    }

    #[tokio::test]
    async fn concurrent_updates_do_not_lose_keys() {
        let dir = TempDir::new();
        let file = TokenFile::new(dir.0.join("tokens.json"));
        let mut tasks = Vec::new();
        for i in 0..16 {
            let f = file.clone();
            #[expect(clippy::disallowed_methods, reason = "concurrent writers in a test")]
            tasks.push(tokio::spawn(async move {
                f.update(move |obj| {
                    obj.insert(format!("k{i}"), i.into());
                })
                .await
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(file.read_object().await.unwrap().unwrap().len(), 16);
    }
}
