//! This replica's heartbeat (issue 18): its row in `replicas` written at
//! start and every [`HEARTBEAT_EVERY`], so `/_ui/api/system` on any replica
//! lists every gateway serving the database. A failed write is logged and
//! tried again at the next beat.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::routes::health::VERSION;
use crate::state::AppState;
use crate::store::replicas::{Replica, HEARTBEAT_EVERY};

/// This process as a replica: a fresh id per start, the host's name.
fn me(app: &AppState) -> Replica {
    let started = app.started_at();
    Replica {
        id: crate::ids::fast_uuid().to_string(),
        hostname: hostname(),
        version: VERSION.to_owned(),
        started_at: started,
        last_seen: started,
    }
}

/// The host's name: the kernel's, else `$HOSTNAME`, else `unknown`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| {
            h.trim()
                .chars()
                .filter(|c| !c.is_control())
                .take(255)
                .collect::<String>()
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Beat until `stop`.
pub(crate) fn spawn(app: AppState, stop: CancellationToken) -> JoinHandle<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits this handle at shutdown"
    )]
    tokio::spawn(async move {
        let me = me(&app);
        let mut tick = tokio::time::interval(HEARTBEAT_EVERY);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Some(store) = app.store_opt() {
                if let Err(e) = store.replicas().heartbeat(&me).await {
                    tracing::warn!("the replica heartbeat could not be written: {e}");
                }
            }
        }
    })
}
