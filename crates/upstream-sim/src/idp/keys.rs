//! The simulator's RS256 signing keys and the signing itself.
//!
//! TEST-ONLY KEYS: the two PKCS#8 private keys below are fixed and public (they
//! are in this repository). They exist so that the simulator can start at once
//! (generating 2048-bit RSA keys in a debug build takes seconds) and so that
//! test failures are reproducible. Never use them for anything but the
//! simulator.
//!
//! Signing is RSASSA-PKCS1-v1_5 with SHA-256 (JWS `RS256`, RFC 7518 3.3), done
//! with the `rsa` crate, independently of the library the gateway verifies
//! with, so the two check each other.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey as _;
use rsa::signature::{SignatureEncoding as _, Signer as _};
use rsa::traits::PublicKeyParts as _;
use rsa::RsaPrivateKey;
use serde_json::{json, Value};
use sha2::Sha256;

/// TEST-ONLY key 1 (see the module doc): the key published and used at start.
const KEY_1_PEM: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIIEuwIBADANBgkqhkiG9w0BAQEFAASCBKUwggShAgEAAoIBAQCe5OL5D0YFsyoH\n\
E03fzMAsjFF1Em74/FGFdesgTnsbgWpjfxbIxIWSXIHM8DRWrCjc3Me3GoaIHR9u\n\
HvOiUwXzTsl+Gajr6KDUGVi3tE55rUM45og4mUSBsAdJw9A2W0QrPYtiEpcJnhfA\n\
A+fYSRTymPaI3oVQ4fO8WhD4PZz1Y+NSKJp05oxTd6I8STEguTQ+EJqXaPB/z6S3\n\
eNGEdTZjlgjRqhCknPJkDp+wyuxB1ce38TMs6RvkSfBVBw+4Y7/JsEhIWiN+r5Ul\n\
aOb4htO2mMRB/48Ir6tDJoWHD6jsumpsY17Mh8qTWAtwIw9bv9K3vj3ywQNpn+Su\n\
8M3VpgNtAgMBAAECgf8w2mdSdw76wBlWkumaUguLkdftNfA8w45shCRNQ/3+2hb4\n\
A7QjENb/T97niEW6oe0z+E8rEAAMsh1kEZ4th3TSJ3OrQp2FMx6RIP2D3GwdAQmv\n\
86dxn/Jf0H0iVQW2pOLLdHv3di9Z209zYDDw6TNbnVGPUoyTJwz6rvLY0nSo5fJr\n\
ssYbzmpPAGLcd/3dO7G7EUN7AXNz0bLmIUWQgJqnwnwMjZLj1E1QWOnrHI/pvCpv\n\
kIcATvK9jGZQ6gxXQpIRxlp2cJ0JZ/DSslVhjKGXBLNZNK5TvJgSMPpJYfTVRlRP\n\
6TrlSDKf933OVvPj9vUpf0Ix81eZAMFW/VDAk2sCgYEA39JCPpIsA4y10zcFWEgA\n\
UBhDJXF0U21AZxmgLCiOsxp3aia9JOY3mJMNNE2a49tlLffwF4159m431RTkhhPE\n\
WPJ++PQIFzA1vwX22UqCtyzKKdmci5kRCun1UL6/mFFdCA56nDBQUIu4VuVhuL/W\n\
KYEPWhpbICfXoigcRA14pK8CgYEAtbz7UTrmmRTxxRe3lBz3tONNYVG/HOVl19kp\n\
7VS6sMHaQXProyy6DppppkSXPWsRss4mUnvELKZNFCCQ5y8Zex5KOrvckBbnirSN\n\
cK0rz0cjP1bNjCxWPKHCxf8B9U1MAovLrR0y8d0fv4WkW/CnLgJkGaTpwcRO7jD2\n\
UTqXWKMCgYB+AAHm86bvgKFDfG/32ODENkRmqc4QwSpGYDi5Y0OiND4Rdil4wll9\n\
/Rqr3RxbNcFp9XAl8jE8t6Oawx47FJmucSVlxQtg8nTvSs5CWR3pPL+6e5UTSWI8\n\
wKSnhhqaBwPWa0A++TvdfCqUUKGIvgY0a0FXOgseuQ89bFMtRGAsZQKBgQCUsQ4e\n\
I8bPsKcuznzQnfK8+Mwyt6NZjQaKV49KMmyceb6Mlr9QPiPsFsIh2zSyd4t/c9M+\n\
4SxcK6Qct5hWzd5XMS0iaNnIujSu85JVghm5+UYJaIe8C/pymRa20DFV9ewemSoH\n\
dUBdSsHS/RDAeGEP77zejmMCug6qKz0csIdraQKBgHMxDHvEhSMAoJ6URpQN8oP4\n\
obaX6gHeSUnhby+c/JllOclzU4O+E3oYlNIg0nn7SM3EzMOSh7y7KqNXmis8JRgV\n\
liEkqIbOlAnzU9HCCeVCbBN8fyykM9M+/uOm3FcdmxWNvoRfb9oN+DAomUjNH9Y7\n\
ClhnbEyHEaVzuPFsGbBC\n\
-----END PRIVATE KEY-----\n";

/// TEST-ONLY key 2 (see the module doc): published after a rotation, and the
/// "foreign" key of forged tokens before that.
const KEY_2_PEM: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQCVn34lM4v2iG/7\n\
SorGArl4pcdwVo5RCkH3jjZ7HnVaFhllnEfkVYaRc0FIQdOGxRw9cSCEQylsbCdL\n\
SASsfwgXU7f+cimKW2NMgtRx7lAcFPGNzfXJo0jY/kVRmYcp8RP+U/J0p+lASmRs\n\
8pOydofB3FlG9yvuyiH0ncbU9r/CehnH1kaJTcgkRdXJzX4R83Xjq3u7GtUFptiX\n\
OF2BDNoRWBIilqDK4LD+JMoK4ZkmJYVHp+zul1LoUl2plzHzn4Kc3PWz9Px0cTO2\n\
7UXV9uS0x7fh/hRQkXjgVyNDVGsrgGH9I/ecIf9PQw//tT+AvCuVZOlU5u27AGZr\n\
nbYVl2KFAgMBAAECgf8Gs3qnzsYZSPFitVClGuQQUqveNGwie6b9G4BVJpm5y9mm\n\
yW8fZVQYvM6DjNkc9rcCCXSKQvNenLc3d17zLqulRVP8q9mjMPkIKSwlp4JQF+97\n\
z+VZ6SbIbdi1waGxm+EYzfBQJeWXe4h/e/Pa2cOb3d0HQ2L2iEMpMX3d8WQg0ZUL\n\
fhrbM6zKidc9acAdjrUuwVVe5hsenSsVs9ARwhfLEBy4/xXXHvBBFyh11vjaoyRk\n\
DRItNiWVCS6srhdqBMHMy4YMxLvRiYe6srlP7H/nP5vJIGKsTsJf4ZhdLo4PygCf\n\
MznW7gcUPiea3d3F8qiHKVsHwSa+eJb5ngJ9VE8CgYEAxmAqZUyqZIYWUyBABgg/\n\
1+7U5hpcCh6BEYNpJaXNVMFC7T5dPpfbluJcgqZkhJRxnixaXsTdLMxsrXmMJKQR\n\
+BG60ajdem622kc5OhYf07Y+FKEzUPfjTFz9RbEA2BHWvuVHhLoWFKrlJHy/5KHy\n\
aYZpBMJEQ9nLJnoxDJ6iFpsCgYEAwRXt1A7oXsTr5ACpBEv4PPmD17mVvQR/+bCu\n\
eWRAIZ1xuOKRl+O75LFFbMFQZO8d2ikVDFoVemce6p+s9OFOb2mibAemKE77UlSp\n\
ivDlqXMIBpTa9gRL+qJ5uUyfTDgX2EgUM6IhXAIIoMOKNRmaAuLixn89NmyGuUEc\n\
KNADbV8CgYAhpO+rzIvdjqw8nuyc2UtSqQvslq3jfXbwbHQp0Wv4ouph6EDSO9kf\n\
Rvbfpa7ImZCHfgg5qHPGhEkuRr4Q/M6bXw5rPpOJjztt28SF6HivZGo0/33/jns7\n\
WU4PQszc2HGuYJ53kUPrb2x7erjk4t6FLSmkh/oh888zkGe/NyxQXwKBgQCo0JZu\n\
KFaLvRoM73LWmeFA1lqqOs0rRIrrcMkqwza67R/nqNfod6joawEq891pUhLEkdSg\n\
RwauTQif09lxBKgCCtaCIzHn3h4nvnO5UaNKQpOKxYynOdyAFpvcIZzJE+XtKB/Z\n\
gPAvtGt8u1nT0T1xNpNVPxvywHIN+Fo5aJ0GewKBgQClFh7IEQ4yzl+u8kh208Rw\n\
PnXsVEis5jn9omFF9GB67t/nMoavISUd3R4eqG8nPHO0+UT70iL1gFgArZeXNdwZ\n\
kMC5esTZsGbM4s3TPSLCHdpkWxUn6V7ekBpy0UBL2j4dF07a1PM1vdil49U38GRC\n\
GzhhQ7Dgf3Ohk+EA7AN5OQ==\n\
-----END PRIVATE KEY-----\n";

/// Key id of [`KEY_1_PEM`] in the JWKS and in token headers.
pub const KID_1: &str = "sim-key-1";
/// Key id of [`KEY_2_PEM`].
pub const KID_2: &str = "sim-key-2";

/// One signing key and its public JWK.
#[derive(Debug, Clone)]
pub struct KeyPair {
    pub kid: &'static str,
    signer: SigningKey<Sha256>,
    jwk: Value,
}

impl KeyPair {
    fn load(kid: &'static str, pem: &str) -> Result<Self, rsa::pkcs8::Error> {
        let private = RsaPrivateKey::from_pkcs8_pem(pem)?;
        let jwk = json!({
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": kid,
            "n": URL_SAFE_NO_PAD.encode(private.n().to_bytes_be()),
            "e": URL_SAFE_NO_PAD.encode(private.e().to_bytes_be()),
        });
        Ok(KeyPair {
            kid,
            signer: SigningKey::<Sha256>::new(private),
            jwk,
        })
    }

    /// The public key as a JWK (`kty`, `use`, `alg`, `kid`, `n`, `e`).
    pub fn jwk(&self) -> &Value {
        &self.jwk
    }

    /// The RS256 signature of `input`.
    pub fn sign(&self, input: &[u8]) -> Vec<u8> {
        self.signer.sign(input).to_vec()
    }
}

/// The two embedded keys, parsed once per simulator.
#[derive(Debug, Clone)]
pub struct Keys {
    pub first: KeyPair,
    pub second: KeyPair,
}

impl Keys {
    pub fn load() -> Result<Self, rsa::pkcs8::Error> {
        Ok(Keys {
            first: KeyPair::load(KID_1, KEY_1_PEM)?,
            second: KeyPair::load(KID_2, KEY_2_PEM)?,
        })
    }
}

/// A compact JWS: `b64(header).b64(claims).b64(signature)`, signed by `key`
/// unless `signature` replaces the signature bytes.
pub fn compact_jws(header: &Value, claims: &Value, key: Option<&KeyPair>) -> String {
    let mut out = String::with_capacity(1024);
    URL_SAFE_NO_PAD.encode_string(header.to_string(), &mut out);
    out.push('.');
    URL_SAFE_NO_PAD.encode_string(claims.to_string(), &mut out);
    let signature = key.map(|k| k.sign(out.as_bytes())).unwrap_or_default();
    out.push('.');
    URL_SAFE_NO_PAD.encode_string(signature, &mut out);
    out
}
