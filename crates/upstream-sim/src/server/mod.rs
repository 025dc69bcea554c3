//! Starting a simulator: bind both listeners (TCP_NODELAY on every accepted
//! socket), serve the routers behind the recording middleware (the primary
//! API, OIDC under `/oidc`, and each vendor and the guardrail service under
//! its own prefix, each recorded as its own [`Service`]), and hand back a
//! [`SimHandle`] that controls and observes the running instance.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::middleware::from_fn_with_state;
use axum::serve::ListenerExt;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::assistant_vendor::AssistantState;
use crate::completions_vendor::{Keyed, KeyedMount};
use crate::config::{OidcConfig, SimConfig};
use crate::guardrail::{self, GuardrailState};
use crate::idp::{self, Idp, IdpConfig, IdpRequest, IdpUser};
use crate::ids;
use crate::messages_vendor::MessagesState;
use crate::oidc::store::{Now, SeededCredentials};
use crate::oidc::{self, OidcState};
use crate::primary;
use crate::primary::scenario::Scenario;
use crate::primary::state::{ApiSettings, PrimaryState};
use crate::recorder::{record, RecordLayer, RecordedRequest, Recorder, Service};
use crate::state::Switches;

mod guardrail_hooks;
mod vendor_hooks;
use crate::stats::StreamStats;
use crate::vendor_common::state::VendorState;
use crate::vendor_common::Vendor;
use crate::{assistant_vendor, completions_vendor, messages_vendor};

/// Path prefix under which the API listener also serves the OIDC routes.
pub const OIDC_PREFIX: &str = "/oidc";

/// How long [`SimHandle::shutdown`] lets open streams finish before cutting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Every service's state, composed once per simulator.
#[derive(Debug)]
struct Services {
    recorder: Arc<Recorder>,
    switches: Arc<Switches>,
    oidc: Arc<OidcState>,
    primary: Arc<PrimaryState>,
    vendors: Arc<VendorState>,
    messages: Arc<MessagesState>,
    assistant: Arc<AssistantState>,
    guardrail: Arc<GuardrailState>,
}

impl Services {
    fn new(config: &SimConfig) -> Self {
        let switches = Arc::new(Switches::new(config.accept_any_token));
        let oidc = Arc::new(OidcState::new(config.oidc.clone()));
        let api = ApiSettings::new(
            config.models.clone(),
            config.max_input_bytes,
            config.require_profile_arn,
        );
        let primary = PrimaryState::new(
            api,
            config.default_scenario.clone(),
            switches.clone(),
            oidc.clone(),
        );
        let vendors = Arc::new(VendorState::new(&config.vendors, switches.clone()));
        Services {
            recorder: Arc::new(Recorder::new(config.record_limit)),
            switches,
            oidc,
            primary: Arc::new(primary),
            messages: Arc::new(MessagesState::new(vendors.clone())),
            assistant: Arc::new(AssistantState::new(vendors.clone())),
            vendors,
            guardrail: Arc::new(GuardrailState::new(config.guardrail.clone())),
        }
    }

    fn with_recording(&self, router: Router, service: Service) -> Router {
        let layer = RecordLayer {
            service,
            recorder: self.recorder.clone(),
        };
        router.layer(from_fn_with_state(layer, record))
    }

    /// Every vendor's routes and the guardrail's (full paths under their
    /// prefixes), each recorded as its own service.
    fn vendor_routes(&self) -> Router {
        let keyed = |keyed| {
            let vendors = self.vendors.clone();
            completions_vendor::router(Arc::new(KeyedMount { vendors, keyed }))
        };
        let routers = [
            (
                messages_vendor::router(self.messages.clone()),
                Service::MessagesVendor,
            ),
            (
                messages_vendor::oauth::router(self.messages.clone()),
                Service::MessagesVendorOauth,
            ),
            (keyed(Keyed::Completions), Service::CompletionsVendor),
            (keyed(Keyed::Custom), Service::Custom),
            (
                assistant_vendor::code_host_router(self.assistant.clone()),
                Service::AssistantVendorCodeHost,
            ),
            (
                assistant_vendor::api_router(self.assistant.clone()),
                Service::AssistantVendorApi,
            ),
            (
                guardrail::router(self.guardrail.clone()),
                Service::Guardrail,
            ),
        ];
        routers
            .into_iter()
            .fold(Router::new(), |all, (router, service)| {
                all.merge(self.with_recording(router, service))
            })
    }
}

/// Start a simulator: the primary API and the SSO OIDC service, each on its
/// own listener (ports from `config`, 0 = any free port).
pub async fn start(config: SimConfig) -> anyhow::Result<SimHandle> {
    let api_listener = TcpListener::bind((config.host, config.api_port)).await?;
    let oidc_listener = TcpListener::bind((config.host, config.oidc_port)).await?;
    let api_addr = api_listener.local_addr()?;
    let oidc_addr = oidc_listener.local_addr()?;

    let services = Services::new(&config);
    services.oidc.set_url(format!("http://{oidc_addr}"));
    services.vendors.set_api_base(format!("http://{api_addr}"));
    let (shutdown, signal) = watch::channel(false);

    let idp = services.with_recording(oidc::router(services.oidc.clone()), Service::Oidc);
    // The API listener also serves the OIDC routes under `/oidc`, for setups
    // that want one port (`UPSTREAM_OIDC_ENDPOINT=<base_url>/oidc`). Nested after
    // the API's recording layer, so each request is recorded once, as OIDC.
    let api = services
        .with_recording(
            primary::router(services.primary.clone()),
            Service::PrimaryApi,
        )
        .nest(OIDC_PREFIX, idp.clone());
    // The identity provider lives under `/idp` on the API listener.
    let provider = Arc::new(Idp::new(format!("http://{api_addr}{}", idp::IDP_PREFIX))?);
    let api = api.nest(idp::IDP_PREFIX, idp::router(provider.clone()));
    // Each vendor under its own prefix, recorded as its own service.
    let api = api.merge(services.vendor_routes());
    let tasks = vec![
        spawn_server(api_listener, api, signal.clone()),
        spawn_server(oidc_listener, idp, signal),
    ];
    Ok(SimHandle {
        services,
        api_addr,
        oidc_addr,
        idp: provider,
        shutdown,
        tasks,
    })
}

fn spawn_server(
    listener: TcpListener,
    router: Router,
    mut signal: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let listener = listener.tap_io(|tcp| {
        // Best effort: a socket that refuses NODELAY still works, only slower.
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(listener, router).with_graceful_shutdown(async move {
        // Either a `true` was sent or the handle is gone: stop in both cases.
        let _ = signal.wait_for(|stop| *stop).await;
    });
    tokio::spawn(async move {
        if let Err(e) = server.into_future().await {
            tracing::warn!(error = %e, "upstream-sim listener stopped");
        }
    })
}

/// A running simulator. Dropping it stops the listeners (open streams are cut
/// when the runtime ends); [`SimHandle::shutdown`] stops them and waits.
#[derive(Debug)]
pub struct SimHandle {
    services: Services,
    api_addr: SocketAddr,
    oidc_addr: SocketAddr,
    idp: Arc<Idp>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl SimHandle {
    /// Base URL of the primary API (`UPSTREAM_API_ENDPOINT`), e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.api_addr)
    }

    /// Base URL of the SSO OIDC service (`UPSTREAM_OIDC_ENDPOINT`), on its own
    /// listener like the real separate host. The same routes are also served
    /// at `{base_url}/oidc`.
    pub fn oidc_url(&self) -> String {
        format!("http://{}", self.oidc_addr)
    }

    /// Address of the API listener.
    pub fn api_addr(&self) -> SocketAddr {
        self.api_addr
    }

    /// Address of the OIDC listener.
    pub fn oidc_addr(&self) -> SocketAddr {
        self.oidc_addr
    }

    // ---- scenarios ----

    /// Queue a scenario for the next chat request (queued scenarios are used
    /// in order, one per request, before any directive).
    pub fn push_scenario(&self, scenario: Scenario) {
        self.services.primary.scenarios().push(scenario);
    }

    /// Replace the scenario used when a request names none.
    pub fn set_default_scenario(&self, scenario: Option<Scenario>) {
        self.services.primary.scenarios().set_default(scenario);
    }

    /// Drop queued scenarios and reset every `times` counter (primary,
    /// vendors and guardrail).
    pub fn reset_scenarios(&self) {
        self.services.primary.scenarios().reset();
        self.services.vendors.book().reset();
        self.services.guardrail.reset();
    }

    // ---- recording ----

    /// Every recorded request, oldest first (both services).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.services.recorder.all()
    }

    /// Recorded requests whose path (without query) is exactly `path`.
    pub fn requests_to(&self, path: &str) -> Vec<RecordedRequest> {
        self.services.recorder.to_path(path)
    }

    /// Forget recorded requests, finished-stream counts (vendors' too) and
    /// the guardrail's call counts.
    pub fn clear(&self) {
        self.services.recorder.clear();
        self.services.guardrail.clear_stats();
        self.services.primary.streams.reset();
        for vendor in Vendor::ALL {
            self.services.vendors.streams(vendor).reset();
        }
    }

    /// Counters of the primary API's streamed answers (see
    /// [`SimHandle::vendor_stream_stats`] for the vendors).
    pub fn stream_stats(&self) -> StreamStats {
        self.services.primary.streams.snapshot()
    }

    /// Streams whose body was dropped before its end (the client went away).
    pub fn cancelled_streams(&self) -> u64 {
        self.stream_stats().cancelled
    }

    /// Streams still being sent.
    pub fn in_flight_streams(&self) -> u64 {
        self.stream_stats().in_flight
    }

    // ---- tokens and the OIDC side ----

    /// A fresh access token the API accepts (as if a refresh had just happened).
    pub fn issue_access_token(&self) -> String {
        self.services
            .oidc
            .store()
            .issue_access_token(Now::current())
    }

    /// Register a fresh client and refresh token, as after a device login, for
    /// tests that start the gateway with an existing `tokens.json`.
    pub fn seed_credentials(&self) -> SeededCredentials {
        let creds = SeededCredentials {
            client_id: ids::client_id(),
            client_secret: ids::token("sim-secret-"),
            refresh_token: ids::token("aor-sim-"),
        };
        self.seed_credentials_with(&creds);
        creds
    }

    /// Register the given client and refresh token.
    pub fn seed_credentials_with(&self, creds: &SeededCredentials) {
        self.services.oidc.store().seed(creds, Now::current());
    }

    /// Whether a refresh token is live (issued or seeded, and not rotated away).
    pub fn refresh_token_live(&self, refresh_token: &str) -> bool {
        self.services.oidc.store().refresh_token_live(refresh_token)
    }

    /// Revoke every access token issued so far: the next API call gets the
    /// 403 that makes a client refresh and retry.
    pub fn revoke_access_tokens(&self) {
        self.services.oidc.store().revoke_access_tokens();
    }

    /// Make every access token issued so far expire now.
    pub fn expire_access_tokens(&self) {
        self.services
            .oidc
            .store()
            .expire_access_tokens(Instant::now());
    }

    /// Approve the pending device login with this user code; false if none.
    pub fn approve_device(&self, user_code: &str) -> bool {
        self.services.oidc.store().decide(user_code, true)
    }

    /// Deny the pending device login with this user code; false if none.
    pub fn deny_device(&self, user_code: &str) -> bool {
        self.services.oidc.store().decide(user_code, false)
    }

    /// Change the OIDC behaviour while running.
    pub fn update_oidc(&self, change: impl FnOnce(&mut OidcConfig)) {
        change(&mut self.services.oidc.store().config);
    }

    /// Accept any bearer token on the API side (or stop doing so).
    pub fn set_accept_any_token(&self, accept: bool) {
        self.services.switches.set_accept_any_token(accept);
    }

    // ---- the OpenID Connect identity provider (`idp`) ----

    /// The identity provider's issuer URL (`{base_url}/idp`); its discovery
    /// document is at `{issuer}/.well-known/openid-configuration`.
    pub fn idp_issuer_url(&self) -> String {
        self.idp.issuer().to_owned()
    }

    /// The registered client: `(client_id, client_secret)`.
    pub fn idp_client(&self) -> (String, String) {
        let store = self.idp.store();
        (
            store.config.client_id.clone(),
            store.config.client_secret.clone(),
        )
    }

    /// Who signs in at the next `/authorize`: this email, verified or not
    /// (the subject is derived from the email, the name from its local part).
    pub fn idp_set_user(&self, email: &str, email_verified: bool) {
        self.idp.store().config.user = IdpUser::new(email, email_verified);
    }

    /// Change the identity provider's behaviour while running.
    pub fn update_idp(&self, change: impl FnOnce(&mut IdpConfig)) {
        change(&mut self.idp.store().config);
    }

    /// Sign with the second embedded key from now on; both are published.
    pub fn idp_rotate_keys(&self) {
        self.idp.store().rotate_keys();
    }

    /// Every request the identity provider received, oldest first.
    pub fn idp_requests(&self) -> Vec<IdpRequest> {
        self.idp.store().requests()
    }

    /// A token of these claims signed with the active key (`kid` in the header).
    pub fn idp_sign(&self, claims: serde_json::Map<String, serde_json::Value>) -> String {
        self.idp.store().sign_claims(claims)
    }

    /// Stop both listeners and wait (at most 2 s) for open streams to end.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in std::mem::take(&mut self.tasks) {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}
