//! The `gateway` binary: parse the command line, load the configuration, set
//! up logging, bind, and hand over to `gateway::serve`.
#![expect(
    clippy::print_stderr,
    reason = "a failure before logging is set up can only go to stderr"
)]

use std::process::ExitCode;

use clap::Parser as _;
use gateway::cli::{self, Cli, Command};

/// mimalloc rather than glibc's malloc: a request makes a few hundred small
/// allocations, and glibc spent a quarter of the request's instructions on them
/// (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match build_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gateway: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => runtime.block_on(serve()),
        Command::Login => runtime.block_on(cli::login()),
        Command::Healthcheck => runtime.block_on(cli::healthcheck()),
    }
}

/// Tokio's scheduler for the cores this process may use. On one core (a
/// container limited to one CPU, or a process pinned with `taskset`) the
/// current-thread scheduler: it runs the same tasks without the work-stealing
/// bookkeeping of the multi-thread one, whose single worker would only add
/// cost to every park and wake-up (docs/decisions.md, "One core, one
/// thread"). `TOKIO_WORKER_THREADS`, when set, asks for the multi-thread one.
fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let one_core = std::thread::available_parallelism().is_ok_and(|n| n.get() == 1);
    let mut builder = if one_core && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    builder.enable_all().build()
}

async fn serve() -> ExitCode {
    let config = match cli::load_config() {
        Ok(config) => config,
        Err(code) => return code,
    };
    gateway::logging::init(&config.log);
    let addr = (
        config.runtime.server_host.clone(),
        config.runtime.server_port,
    );
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("cannot listen on {}:{}: {e}", addr.0, addr.1);
            return ExitCode::FAILURE;
        }
    };
    match gateway::serve(config, listener, cli::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("gateway stopped with an error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
