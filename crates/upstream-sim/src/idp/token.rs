//! Building the ID token of one code exchange: the standard claims of OpenID
//! Connect Core 2 (`iss`, `sub`, `aud`, `exp`, `iat`, `nonce`, `azp`) plus the
//! profile claims, then the configured tweaks, then the signature.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::config::{IdTokenTweaks, IdpUser, NonceClaim, Signing};
use super::keys::{compact_jws, KeyPair};

/// Everything an ID token is made from.
pub(crate) struct TokenInput<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub user: &'a IdpUser,
    /// The nonce sent to `/authorize`, if any.
    pub nonce: Option<&'a str>,
    /// Seconds since the Unix epoch.
    pub now: i64,
    pub tweaks: &'a IdTokenTweaks,
}

/// The claims, tweaks applied.
pub(crate) fn claims(input: &TokenInput<'_>) -> Map<String, Value> {
    let t = input.tweaks;
    let mut c = Map::new();
    c.insert(
        "iss".into(),
        t.issuer.as_deref().unwrap_or(input.issuer).into(),
    );
    c.insert("sub".into(), input.user.subject.clone().into());
    c.insert(
        "aud".into(),
        t.audience.clone().unwrap_or_else(|| input.client_id.into()),
    );
    if let Some(azp) = &t.azp {
        c.insert("azp".into(), azp.clone().into());
    }
    let iat = input.now.saturating_add(t.issued_at_offset_secs);
    c.insert("iat".into(), iat.into());
    c.insert(
        "exp".into(),
        input.now.saturating_add(t.lifetime_secs).into(),
    );
    let nonce = match &t.nonce {
        NonceClaim::Echo => input.nonce.map(str::to_owned),
        NonceClaim::Fixed(v) => Some(v.clone()),
        NonceClaim::Omit => None,
    };
    if let Some(nonce) = nonce {
        c.insert("nonce".into(), nonce.into());
    }
    if let Some(email) = &input.user.email {
        c.insert("email".into(), email.clone().into());
    }
    if let Some(verified) = input.user.email_verified {
        c.insert("email_verified".into(), verified.into());
    }
    if let Some(name) = &input.user.name {
        c.insert("name".into(), name.clone().into());
    }
    for (k, v) in &t.extra_claims {
        if v.is_null() {
            c.remove(k);
        } else {
            c.insert(k.clone(), v.clone());
        }
    }
    c
}

/// The signed compact token. `active` is the published signing key, `other`
/// the key used for forgeries.
pub(crate) fn sign(
    claims: Map<String, Value>,
    signing: Signing,
    active: &KeyPair,
    other: &KeyPair,
) -> String {
    let rs256 = |kid: &str| json!({"alg": "RS256", "typ": "JWT", "kid": kid});
    let claims = Value::Object(claims);
    match signing {
        Signing::Active => compact_jws(&rs256(active.kid), &claims, Some(active)),
        Signing::ForeignKey => compact_jws(&rs256(active.kid), &claims, Some(other)),
        Signing::UnknownKid => compact_jws(&rs256("sim-key-unknown"), &claims, Some(active)),
        Signing::NoneAlg => compact_jws(&json!({"alg": "none", "typ": "JWT"}), &claims, None),
        Signing::Hs256 => {
            let unsigned = compact_jws(
                &json!({"alg": "HS256", "typ": "JWT", "kid": active.kid}),
                &claims,
                None,
            );
            // A MAC-shaped signature no key produced.
            format!("{unsigned}{}", URL_SAFE_NO_PAD.encode([7u8; 32]))
        }
        Signing::Tampered => {
            let signed = compact_jws(&rs256(active.kid), &claims, Some(active));
            let mut changed = claims;
            if let Some(obj) = changed.as_object_mut() {
                obj.insert("email".into(), "attacker@evil.example".into());
            }
            let mut parts = signed.split('.');
            let header = parts.next().unwrap_or_default();
            let _payload = parts.next();
            let signature = parts.next().unwrap_or_default();
            format!(
                "{header}.{}.{signature}",
                URL_SAFE_NO_PAD.encode(changed.to_string())
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idp::config::IdpUser;
    use crate::idp::keys::Keys;

    fn input<'a>(user: &'a IdpUser, tweaks: &'a IdTokenTweaks) -> TokenInput<'a> {
        TokenInput {
            issuer: "http://127.0.0.1:1/idp",
            client_id: "client-1",
            user,
            nonce: Some("n-123"),
            now: 1_700_000_000,
            tweaks,
        }
    }

    fn decode_part(token: &str, i: usize) -> Value {
        let part = token.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn default_claims() {
        let user = IdpUser::new("a@example.com", true);
        let tweaks = IdTokenTweaks::default();
        let c = Value::Object(claims(&input(&user, &tweaks)));
        assert_eq!(c["iss"], "http://127.0.0.1:1/idp");
        assert_eq!(c["aud"], "client-1");
        assert_eq!(c["sub"], user.subject.as_str());
        assert_eq!(c["iat"], 1_700_000_000);
        assert_eq!(c["exp"], 1_700_003_600);
        assert_eq!(c["nonce"], "n-123");
        assert_eq!(c["email"], "a@example.com");
        assert_eq!(c["email_verified"], true);
        assert!(c.get("azp").is_none());
    }

    #[test]
    fn tweaks_replace_and_remove_claims() {
        let user = IdpUser::new("a@example.com", true);
        let mut tweaks = IdTokenTweaks {
            issuer: Some("https://other".into()),
            audience: Some(json!(["client-1", "client-2"])),
            azp: Some("client-2".into()),
            nonce: NonceClaim::Fixed("wrong".into()),
            lifetime_secs: -60,
            issued_at_offset_secs: -120,
            ..IdTokenTweaks::default()
        };
        tweaks.extra_claims.insert("email".into(), Value::Null);
        tweaks
            .extra_claims
            .insert("hd".into(), "example.com".into());
        let c = Value::Object(claims(&input(&user, &tweaks)));
        assert_eq!(c["iss"], "https://other");
        assert_eq!(c["aud"], json!(["client-1", "client-2"]));
        assert_eq!(c["azp"], "client-2");
        assert_eq!(c["nonce"], "wrong");
        assert_eq!(c["exp"], 1_699_999_940);
        assert_eq!(c["iat"], 1_699_999_880);
        assert!(c.get("email").is_none());
        assert_eq!(c["hd"], "example.com");
        tweaks.nonce = NonceClaim::Omit;
        assert!(claims(&input(&user, &tweaks)).get("nonce").is_none());
    }

    #[test]
    fn signing_variants_have_the_announced_headers() {
        let keys = Keys::load().unwrap();
        let user = IdpUser::new("a@example.com", true);
        let tweaks = IdTokenTweaks::default();
        let c = claims(&input(&user, &tweaks));
        let t = sign(c.clone(), Signing::Active, &keys.first, &keys.second);
        assert_eq!(decode_part(&t, 0)["kid"], "sim-key-1");
        assert_eq!(decode_part(&t, 0)["alg"], "RS256");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(t.split('.').nth(2).unwrap())
                .unwrap()
                .len(),
            256
        );
        let t = sign(c.clone(), Signing::UnknownKid, &keys.first, &keys.second);
        assert_eq!(decode_part(&t, 0)["kid"], "sim-key-unknown");
        let t = sign(c.clone(), Signing::NoneAlg, &keys.first, &keys.second);
        assert_eq!(decode_part(&t, 0)["alg"], "none");
        assert!(t.ends_with('.'));
        let t = sign(c.clone(), Signing::Tampered, &keys.first, &keys.second);
        assert_eq!(decode_part(&t, 1)["email"], "attacker@evil.example");
        let forged = sign(c.clone(), Signing::ForeignKey, &keys.first, &keys.second);
        let genuine = sign(c, Signing::Active, &keys.first, &keys.second);
        let (head_f, sig_f) = forged.rsplit_once('.').unwrap();
        let (head_g, sig_g) = genuine.rsplit_once('.').unwrap();
        assert_eq!(head_f, head_g);
        assert_ne!(sig_f, sig_g);
    }
}
