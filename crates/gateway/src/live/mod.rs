//! What keeps replicas in step with the store while they run: the runtime
//! configuration's overlay and its sync ([`config`]), and the change
//! notifications that drop cached keys and credentials ([`invalidation`]),
//! and this replica's row in the list of replicas ([`heartbeat`]).
//! Background tasks spawned at start, each stopped by the shutdown token.

pub(crate) mod config;
pub(crate) mod heartbeat;
pub(crate) mod invalidation;
