//! Ids as types: a `UserId` is never passed where a `SessionId` belongs.
//!
//! Each is a UUID, stored as `UUID` in PostgreSQL and as hyphenated lower-case
//! `TEXT` in SQLite (readable in the `sqlite3` shell, and what sqlx's own
//! SQLite `Uuid` would not give: it writes 16-byte blobs). JSON and `Display`
//! use the hyphenated form.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgTypeInfo, PgValueRef};
use sqlx::sqlite::{SqliteTypeInfo, SqliteValueRef};
use sqlx::{Database, Decode, Encode, Postgres, Sqlite, Type};
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        #[cfg_attr(test, derive(ts_rs::TS), ts(type = "string"))]
        pub struct $name(pub Uuid);

        /// One 128-bit word: `Uuid`'s own `Hash` writes a length and then
        /// the 16 bytes as a slice, which the maps keyed by ids (the usage
        /// writer's, the rate-limit notes) paid on every request.
        impl std::hash::Hash for $name {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                state.write_u128(self.0.as_u128());
            }
        }

        impl $name {
            /// A new random (v4) id.
            #[expect(
                clippy::disallowed_methods,
                reason = "row ids, session ids among them, must be unguessable: the OS RNG"
            )]
            pub fn new() -> Self {
                $name(Uuid::new_v4())
            }

            pub fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map($name)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&self.0.hyphenated())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Uuid::parse_str(&text)
                    .map($name)
                    .map_err(serde::de::Error::custom)
            }
        }

        impl Type<Sqlite> for $name {
            fn type_info() -> SqliteTypeInfo {
                <String as Type<Sqlite>>::type_info()
            }
            fn compatible(ty: &SqliteTypeInfo) -> bool {
                <String as Type<Sqlite>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Sqlite> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <Sqlite as Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                // The hyphenated text straight into a buffer: through
                // `Display` (`to_string`) it cost about 400 instructions.
                let mut text = Uuid::encode_buffer();
                let text: &str = self.0.hyphenated().encode_lower(&mut text);
                <String as Encode<'q, Sqlite>>::encode(text.to_owned(), buf)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $name {
            fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
                let text = <&str as Decode<'r, Sqlite>>::decode(value)?;
                Ok($name(Uuid::parse_str(text)?))
            }
        }

        impl Type<Postgres> for $name {
            fn type_info() -> PgTypeInfo {
                <Uuid as Type<Postgres>>::type_info()
            }
            fn compatible(ty: &PgTypeInfo) -> bool {
                <Uuid as Type<Postgres>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, Postgres> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <Postgres as Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                <Uuid as Encode<'q, Postgres>>::encode_by_ref(&self.0, buf)
            }
        }

        impl<'r> Decode<'r, Postgres> for $name {
            fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
                <Uuid as Decode<'r, Postgres>>::decode(value).map($name)
            }
        }
    };
}

id_type!(
    /// A user (`users.id`).
    UserId
);
id_type!(
    /// A web UI session (`sessions.id`, the `gw_session` cookie's value).
    SessionId
);
id_type!(
    /// A pending 2FA login (`pending_2fa_logins.token`, the `login_token`).
    LoginToken
);
id_type!(
    /// An API key (`api_keys.id`).
    ApiKeyId
);
id_type!(
    /// A provider account (`user_provider_tokens.id`).
    ProviderAccountId
);
id_type!(
    /// A model registry entry (`model_registry.id`).
    ModelEntryId
);
id_type!(
    /// A guardrail profile (`guardrail_profiles.id`).
    GuardrailProfileId
);
id_type!(
    /// A guardrail rule (`guardrail_rules.id`).
    GuardrailRuleId
);
id_type!(
    /// The id of a row that has no meaning outside its table (recovery codes).
    RowId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms() {
        let id: UserId = "67E55044-10B1-426F-9247-BB680E5FE0C8".parse().unwrap();
        assert_eq!(id.to_string(), "67e55044-10b1-426f-9247-bb680e5fe0c8");
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"67e55044-10b1-426f-9247-bb680e5fe0c8\""
        );
        let back: UserId =
            serde_json::from_str("\"67e55044-10b1-426f-9247-bb680e5fe0c8\"").unwrap();
        assert_eq!(back, id);
        assert!(serde_json::from_str::<UserId>("\"nope\"").is_err());
        assert_ne!(SessionId::new(), SessionId::new());
    }
}
