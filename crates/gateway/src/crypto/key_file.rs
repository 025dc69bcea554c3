//! Where the encryption key comes from: `CONFIG_ENCRYPTION_KEY` when set,
//! otherwise `$DATA_DIR/encryption.key`, generated on first run.
//!
//! The generated file holds the key as base64 and a newline, mode 0600. It is
//! written to a temporary name and hard-linked into place, so two processes
//! starting together never read a half-written file and never both create
//! one: the loser of the link reads the winner's key.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::{CryptoError, EncryptionKey};
use crate::config::Secret;

/// The key file's name inside `DATA_DIR`.
pub const KEY_FILE: &str = "encryption.key";

/// Where the key in use came from (for the start-up log; never the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `CONFIG_ENCRYPTION_KEY`.
    Environment,
    /// An existing key file.
    File(PathBuf),
    /// A key file created by this process just now.
    Generated(PathBuf),
}

/// The key to use: `configured` when given, else the key file in `data_dir`
/// (created with a new random key when missing).
pub fn resolve(
    configured: Option<&Secret>,
    data_dir: &Path,
) -> Result<(EncryptionKey, KeySource), CryptoError> {
    if let Some(raw) = configured {
        let key = EncryptionKey::parse(raw.expose()).map_err(|_| {
            CryptoError::BadKey(
                "CONFIG_ENCRYPTION_KEY: expected 32 bytes as base64 or as 64 hex characters".into(),
            )
        })?;
        return Ok((key, KeySource::Environment));
    }
    let path = data_dir.join(KEY_FILE);
    if let Some(key) = read_key_file(&path)? {
        return Ok((key, KeySource::File(path)));
    }
    let key = EncryptionKey::generate();
    if create_key_file(&path, &key)? {
        Ok((key, KeySource::Generated(path)))
    } else {
        // Another process created it between our read and our link.
        match read_key_file(&path)? {
            Some(key) => Ok((key, KeySource::File(path))),
            None => Err(CryptoError::BadKey(format!(
                "{} disappeared while starting",
                path.display()
            ))),
        }
    }
}

fn read_key_file(path: &Path) -> Result<Option<EncryptionKey>, CryptoError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            warn_if_readable_by_others(path);
            EncryptionKey::parse(&text).map(Some).map_err(|_| {
                CryptoError::BadKey(format!(
                    "{}: expected 32 bytes as base64 or as 64 hex characters",
                    path.display()
                ))
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CryptoError::Io {
            context: format!("reading {}", path.display()),
            source,
        }),
    }
}

/// Write `key` to `path` unless the file exists; true when this call created it.
fn create_key_file(path: &Path, key: &EncryptionKey) -> Result<bool, CryptoError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| CryptoError::Io {
        context: format!("creating {}", dir.display()),
        source,
    })?;
    let tmp = dir.join(format!(".{KEY_FILE}.{}", crate::ids::fast_uuid().simple()));
    let io = |context: &str, source| CryptoError::Io {
        context: format!("{context} {}", tmp.display()),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = options.open(&tmp).and_then(|mut file| {
        file.write_all(key.to_base64().expose().as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()
    });
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("writing", source));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(CryptoError::Io {
            context: format!("creating {}", path.display()),
            source,
        }),
    }
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "{} is readable by other users; restrict it with chmod 600",
                path.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gw-key-{}", crate::ids::fast_uuid().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn generated_once_then_reused_with_mode_0600() {
        let dir = temp_dir().join("nested");
        let (k1, src1) = resolve(None, &dir).unwrap();
        assert_eq!(src1, KeySource::Generated(dir.join(KEY_FILE)));
        let (k2, src2) = resolve(None, &dir).unwrap();
        assert_eq!(k1, k2);
        assert_eq!(src2, KeySource::File(dir.join(KEY_FILE)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    }

    #[test]
    fn the_environment_wins_and_is_validated() {
        let dir = temp_dir();
        let env = EncryptionKey::generate().to_base64();
        let (k, src) = resolve(Some(&env), &dir).unwrap();
        assert_eq!(src, KeySource::Environment);
        assert_eq!(k.to_base64(), env);
        assert!(!dir.join(KEY_FILE).exists());
        let err = resolve(Some(&Secret::new("short")), &dir).unwrap_err();
        assert!(err.to_string().contains("CONFIG_ENCRYPTION_KEY"));
        assert!(!err.to_string().contains("short"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_corrupt_key_file_is_an_error() {
        let dir = temp_dir();
        std::fs::write(dir.join(KEY_FILE), "not a key").unwrap();
        let err = resolve(None, &dir).unwrap_err();
        assert!(err.to_string().contains(KEY_FILE));
        let _ = std::fs::remove_dir_all(dir);
    }
}
