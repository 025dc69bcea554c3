//! The TypeScript declarations of the `/_ui/api` requests and answers,
//! generated from the Rust structs (ts-rs) into `web/src/api/generated.ts`,
//! which the web console imports. The test fails when the checked-in file
//! is not what the structs generate; to rewrite it:
//!
//! ```text
//! UPDATE_UI_TYPES=1 cargo test -p gateway --lib ui_api::ts_types
//! ```
//!
//! A type added to an answer must be listed in [`declarations`]; the test
//! also fails when a listed type refers to one that is not.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ts_rs::{Config, TS};

use super::{
    account, config, domains, fallbacks, guardrails, keys, limit_fields, login, models,
    provider_signin, providers, rate_limits, reply, status, two_factor, upstream, usage, users,
};
use crate::config::Reload;
use crate::error::{ErrorBody, ErrorDetail};
use crate::store::ids::{ApiKeyId, LoginToken, ProviderAccountId, UserId};
use crate::store::usage::GroupBy;
use crate::store::users::{AuthMethod, Role};

/// One declaration: its TypeScript name, text, and the names it uses.
struct Declaration {
    name: String,
    text: String,
    uses: Vec<String>,
}

fn declare<T: TS + 'static + ?Sized>(cfg: &Config) -> Declaration {
    let docs = T::docs().unwrap_or_default();
    Declaration {
        name: T::name(cfg),
        text: format!("{docs}export {}", T::decl(cfg)),
        uses: T::dependencies(cfg)
            .into_iter()
            .map(|d| d.ts_name)
            .collect(),
    }
}

/// Every type the console sees, in the order of the file.
fn declarations(cfg: &Config) -> Vec<Declaration> {
    vec![
        // Shared
        declare::<ErrorBody>(cfg),
        declare::<ErrorDetail>(cfg),
        declare::<reply::Done>(cfg),
        declare::<UserId>(cfg),
        declare::<ApiKeyId>(cfg),
        declare::<LoginToken>(cfg),
        declare::<Role>(cfg),
        declare::<AuthMethod>(cfg),
        // Status and sign-in
        declare::<status::Status>(cfg),
        declare::<status::SystemInfo>(cfg),
        declare::<status::LimitsInfo>(cfg),
        declare::<status::AdminSystemInfo>(cfg),
        declare::<status::BuildInfo>(cfg),
        declare::<status::DatabaseInfo>(cfg),
        declare::<status::ReplicaInfo>(cfg),
        declare::<login::LoginBody>(cfg),
        declare::<login::SecondFactorBody>(cfg),
        declare::<login::SetupBody>(cfg),
        declare::<login::SignedIn>(cfg),
        declare::<login::NeedsSecondFactor>(cfg),
        declare::<account::Me>(cfg),
        declare::<account::ChangePasswordBody>(cfg),
        declare::<two_factor::TwoFactorSetup>(cfg),
        declare::<two_factor::VerifyBody>(cfg),
        declare::<two_factor::TwoFactorVerified>(cfg),
        // API keys
        declare::<keys::CreateBody>(cfg),
        declare::<keys::PatchBody>(cfg),
        declare::<keys::KeyView>(cfg),
        declare::<keys::KeyList>(cfg),
        declare::<keys::CreatedKey>(cfg),
        // Budgets and rate limits (keys and users)
        declare::<crate::limits::policy::BudgetPeriod>(cfg),
        declare::<limit_fields::LimitFields>(cfg),
        declare::<limit_fields::LimitView>(cfg),
        declare::<crate::store::fallbacks::Chain>(cfg),
        declare::<fallbacks::Chains>(cfg),
        // Guardrails
        declare::<crate::store::ids::GuardrailProfileId>(cfg),
        declare::<crate::store::ids::GuardrailRuleId>(cfg),
        declare::<crate::guardrails::service::Action>(cfg),
        declare::<crate::guardrails::service::ViolationKind>(cfg),
        declare::<crate::guardrails::service::Violation>(cfg),
        declare::<crate::guardrails::service::Source>(cfg),
        declare::<crate::guardrails::expression::ExpressionError>(cfg),
        declare::<crate::guardrails::GuardrailWarning>(cfg),
        declare::<crate::guardrails::engine::Counters>(cfg),
        declare::<status::GuardrailsInfo>(cfg),
        declare::<guardrails::ProfileView>(cfg),
        declare::<guardrails::ProfileList>(cfg),
        declare::<guardrails::ProfileBody>(cfg),
        declare::<guardrails::RuleView>(cfg),
        declare::<guardrails::RuleList>(cfg),
        declare::<guardrails::RuleBody>(cfg),
        declare::<guardrails::ValidateBody>(cfg),
        declare::<guardrails::Validation>(cfg),
        declare::<guardrails::TestBody>(cfg),
        declare::<guardrails::TestResult>(cfg),
        // primary's upstream credentials
        declare::<upstream::UpstreamStatus>(cfg),
        declare::<upstream::SetupBody>(cfg),
        declare::<upstream::DeviceAuthorization>(cfg),
        declare::<upstream::PollBody>(cfg),
        declare::<upstream::PollStatus>(cfg),
        declare::<upstream::PollAnswer>(cfg),
        // Providers and accounts
        declare::<crate::providers::id::ProviderId>(cfg),
        declare::<ProviderAccountId>(cfg),
        declare::<providers::AuthKind>(cfg),
        declare::<providers::RegistryProvider>(cfg),
        declare::<providers::ProviderRegistry>(cfg),
        declare::<providers::ProviderState>(cfg),
        declare::<providers::ProviderStatusList>(cfg),
        declare::<providers::ConnectField>(cfg),
        declare::<providers::ConnectInfo>(cfg),
        declare::<providers::AccountStatus>(cfg),
        declare::<providers::AccountSource>(cfg),
        declare::<providers::AccountView>(cfg),
        declare::<providers::AccountList>(cfg),
        declare::<providers::NewAccountBody>(cfg),
        declare::<providers::AccountPatchBody>(cfg),
        declare::<providers::Removed>(cfg),
        declare::<providers::ProviderOrder>(cfg),
        declare::<providers::ProviderSwitch>(cfg),
        declare::<providers::ProviderSwitchList>(cfg),
        declare::<providers::SwitchBody>(cfg),
        declare::<providers::PoolAddBody>(cfg),
        declare::<providers::PoolPatchBody>(cfg),
        declare::<rate_limits::RateLimitView>(cfg),
        declare::<rate_limits::RateLimitList>(cfg),
        // OAuth sign-ins of providers
        declare::<provider_signin::relay::MessagesVendorAuth>(cfg),
        declare::<provider_signin::relay::RelayBody>(cfg),
        declare::<provider_signin::relay::Relayed>(cfg),
        declare::<provider_signin::code_host::AssistantDeviceCode>(cfg),
        declare::<provider_signin::code_host::DevicePollBody>(cfg),
        declare::<provider_signin::code_host::DeviceFlowStatus>(cfg),
        declare::<provider_signin::code_host::AssistantPoll>(cfg),
        declare::<provider_signin::code_host::AssistantStatus>(cfg),
        // Models
        declare::<models::CallableModel>(cfg),
        declare::<models::CallableModelList>(cfg),
        declare::<models::RegistryModel>(cfg),
        declare::<models::RegistryModelList>(cfg),
        declare::<models::EntryPatch>(cfg),
        declare::<models::PopulateBody>(cfg),
        declare::<models::PopulatedProvider>(cfg),
        declare::<models::PopulateResult>(cfg),
        declare::<models::VisibilityDefaultView>(cfg),
        declare::<models::VisibilityDefaultList>(cfg),
        declare::<models::VisibilityDefaultBody>(cfg),
        declare::<models::ApplyResult>(cfg),
        declare::<models::ApplyAllResult>(cfg),
        // Usage
        declare::<GroupBy>(cfg),
        declare::<usage::UsageFigures>(cfg),
        declare::<usage::UsageRowView>(cfg),
        declare::<usage::UsageAnswer>(cfg),
        // Users and domains (Admin)
        declare::<users::UserView>(cfg),
        declare::<users::UserList>(cfg),
        declare::<users::RoleBody>(cfg),
        declare::<users::CreateBody>(cfg),
        declare::<users::CreatedUser>(cfg),
        declare::<users::ResetBody>(cfg),
        declare::<domains::AddBody>(cfg),
        declare::<domains::DomainView>(cfg),
        declare::<domains::DomainList>(cfg),
        declare::<domains::AddedDomain>(cfg),
        // Configuration (Admin)
        declare::<Reload>(cfg),
        declare::<config::ValueSource>(cfg),
        declare::<config::PendingValue>(cfg),
        declare::<config::ConfigAnswer>(cfg),
        declare::<config::ConfigUpdate>(cfg),
        declare::<config::ConfigField>(cfg),
        declare::<config::ConfigSchema>(cfg),
        declare::<config::ConfigHistoryEntry>(cfg),
        declare::<config::ConfigHistory>(cfg),
    ]
}

/// The file's text.
fn generated() -> String {
    // JSON numbers are JavaScript numbers; no count or id here nears 2^53.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust structs of the /_ui/api answers and requests\n\
         // (crates/gateway/src/ui_api/ts_types.rs); do not edit. To regenerate:\n\
         // UPDATE_UI_TYPES=1 cargo test -p gateway --lib ui_api::ts_types\n",
    );
    for d in declarations(&cfg) {
        out.push('\n');
        out.push_str(&d.text);
        out.push('\n');
    }
    out
}

fn checked_in_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/src/api/generated.ts")
}

#[test]
fn every_type_a_declaration_uses_is_declared() {
    let cfg = Config::new().with_large_int("number");
    let all = declarations(&cfg);
    let names: BTreeSet<&str> = all.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names.len(), all.len(), "two declarations share a name");
    for d in &all {
        for used in &d.uses {
            assert!(
                names.contains(used.as_str()),
                "{} uses {used}, which is not in declarations()",
                d.name
            );
        }
    }
}

#[test]
fn the_checked_in_typescript_is_what_the_structs_generate() {
    let want = generated();
    let path = checked_in_path();
    if std::env::var_os("UPDATE_UI_TYPES").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: the /_ui/api structs changed. Regenerate it with \
         `UPDATE_UI_TYPES=1 cargo test -p gateway --lib ui_api::ts_types` and commit it",
        path.display()
    );
}
