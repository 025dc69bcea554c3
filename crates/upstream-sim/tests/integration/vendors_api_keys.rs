//! Several API keys per key vendor (users' own keys): each vendor accepts
//! its default key and the keys a test added, the records show which key
//! each request carried, and a wrong or revoked key gets the vendor's real
//! 401 on the chat call and on the model listing (the call the gateway
//! makes to check a new key).

use serde_json::Value;
use upstream_sim::{SimHandle, Vendor};

use crate::common::*;
use crate::vendors_support::*;

/// The listing URL of a key vendor and the request carrying `key` there.
fn models_request(sim: &SimHandle, vendor: Vendor, key: &str) -> reqwest::RequestBuilder {
    let req = match vendor {
        Vendor::Messages => client()
            .get(format!("{}/v1/models", sim.messages_vendor_url()))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01"),
        Vendor::Completions => client()
            .get(format!("{}/v1/models", sim.completions_vendor_url()))
            .bearer_auth(key),
        Vendor::Custom | Vendor::Assistant => client()
            .get(format!("{}/models", sim.custom_url()))
            .bearer_auth(key),
    };
    req
}

async fn chat(sim: &SimHandle, vendor: Vendor, key: &str, text: &str) -> (u16, Value) {
    let resp = match vendor {
        Vendor::Messages => client()
            .post(format!("{}/v1/messages", sim.messages_vendor_url()))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01")
            .json(&messages_body(text, false))
            .send()
            .await
            .unwrap(),
        Vendor::Completions => {
            let url = format!("{}/v1/chat/completions", sim.completions_vendor_url());
            post_bearer(&url, Some(key), &openai_body("gpt-4o", text, false)).await
        }
        Vendor::Custom | Vendor::Assistant => {
            let url = format!("{}/chat/completions", sim.custom_url());
            post_bearer(&url, Some(key), &openai_body("llama-3", text, false)).await
        }
    };
    let (status, _, body) = json_of(resp).await;
    (status, body)
}

const KEY_VENDORS: [Vendor; 3] = [Vendor::Messages, Vendor::Completions, Vendor::Custom];

#[tokio::test]
async fn two_users_two_keys_and_the_records_tell_them_apart() {
    let sim = sim().await;
    for vendor in KEY_VENDORS {
        let alice = sim.new_vendor_api_key(vendor).unwrap();
        let bob = "sk-bob-own-key";
        assert!(sim.add_vendor_api_key(vendor, bob));
        sim.clear();
        assert_eq!(
            chat(&sim, vendor, &alice, "from alice").await.0,
            200,
            "{vendor}"
        );
        assert_eq!(chat(&sim, vendor, bob, "from bob").await.0, 200, "{vendor}");
        let carried: Vec<(String, String)> = sim
            .requests()
            .iter()
            .map(|r| {
                let text = r.json().unwrap().to_string();
                let who = if text.contains("from alice") {
                    "alice"
                } else {
                    "bob"
                };
                (who.to_owned(), r.credential().unwrap().to_owned())
            })
            .collect();
        assert_eq!(
            carried,
            [
                ("alice".to_owned(), alice.clone()),
                ("bob".to_owned(), bob.to_owned())
            ],
            "{vendor}"
        );
        // The default key still works.
        let default = match vendor {
            Vendor::Messages => sim.messages_vendor_api_key(),
            Vendor::Completions => sim.completions_vendor_api_key(),
            _ => sim.custom_api_key().unwrap(),
        };
        assert_eq!(chat(&sim, vendor, &default, "hi").await.0, 200);
        // A revoked key is refused.
        assert!(sim.remove_vendor_api_key(vendor, &alice));
        assert_eq!(chat(&sim, vendor, &alice, "again").await.0, 401);
    }
    assert!(sim.new_vendor_api_key(Vendor::Assistant).is_none());
    assert!(!sim.add_vendor_api_key(Vendor::Assistant, "x"));
}

#[tokio::test]
async fn a_wrong_key_gets_the_vendors_401_on_chat_and_listing() {
    let sim = sim().await;
    for vendor in KEY_VENDORS {
        let good = sim.new_vendor_api_key(vendor).unwrap();
        let listed = models_request(&sim, vendor, &good).send().await.unwrap();
        assert_eq!(listed.status(), 200, "{vendor}");
        let listing = models_request(&sim, vendor, "sk-typo-1234")
            .send()
            .await
            .unwrap();
        let (status, _, listing) = json_of(listing).await;
        let (chat_status, chat) = chat(&sim, vendor, "sk-typo-1234", "hi").await;
        assert_eq!((status, chat_status), (401, 401), "{vendor}");
        match vendor {
            Vendor::Messages => {
                for body in [&listing, &chat] {
                    assert_eq!(body["type"], "error");
                    assert_eq!(body["error"]["type"], "authentication_error");
                    assert_eq!(body["error"]["message"], "invalid x-api-key");
                }
            }
            _ => {
                for body in [&listing, &chat] {
                    assert_eq!(body["error"]["code"], "invalid_api_key");
                    assert_eq!(body["error"]["type"], "invalid_request_error");
                    let message = body["error"]["message"].as_str().unwrap();
                    assert!(message.starts_with("Incorrect API key provided: sk-"));
                    assert!(!message.contains("sk-typo-1234"), "the key is masked");
                }
            }
        }
    }
}
