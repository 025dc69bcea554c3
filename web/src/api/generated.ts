// Generated from the Rust structs of the /_ui/api answers and requests
// (crates/gateway/src/ui_api/ts_types.rs); do not edit. To regenerate:
// UPDATE_UI_TYPES=1 cargo test -p gateway --lib ui_api::ts_types

/**
 * The body of an error answer (OpenAI's error shape; `/v1/messages`
 * writes Anthropic's own).
 */
export type ApiError = { error: ErrorDetail, 
/**
 * A locked account: seconds until it may sign in again.
 */
retry_after_secs?: number, };

/**
 * What went wrong: a message for people, a type for programs.
 */
export type ErrorDetail = { message: string, type: string, 
/**
 * A guardrail block: `input` or `output`.
 */
stage?: string, 
/**
 * A guardrail block: what the service found.
 */
violations?: Array<Violation>, };

/**
 * `{ok: true}`: the call did what it was asked.
 */
export type Ok = { ok: true, };

/**
 * A user (`users.id`).
 */
export type UserId = string;

/**
 * An API key (`api_keys.id`).
 */
export type ApiKeyId = string;

/**
 * A pending 2FA login (`pending_2fa_logins.token`, the `login_token`).
 */
export type LoginToken = string;

/**
 * A user's role (spec 5.6).
 */
export type Role = "Admin" | "User";

/**
 * How a person signs in: by password (+ TOTP) or by SSO.
 */
export type AuthMethod = "password" | "sso";

/**
 * `GET /_ui/api/status`.
 */
export type Status = { setup_complete: boolean, 
/**
 * `full` or `proxy`.
 */
mode: string, version: string, auth_google_enabled: boolean, auth_password_enabled: boolean, };

/**
 * `GET /_ui/api/system`: `version` and `mode` for everyone signed in,
 * the rest for admins.
 */
export type SystemInfo = { version: string, mode: string, };

/**
 * How this replica counts rate limits and budgets (issue 21).
 */
export type LimitsInfo = { 
/**
 * `redis` (shared by replicas, `REDIS_URL`) or `process`.
 */
counted_in: string, 
/**
 * Admissions that asked Redis since start (the others used a lease).
 */
redis_round_trips: number, 
/**
 * Counter operations that failed since start; the requests went
 * through unlimited (fail open).
 */
failures: number, };

/**
 * What only admins see of `/system`.
 */
export type AdminSystemInfo = { build: BuildInfo, database: DatabaseInfo, started_at: string, uptime_secs: number, 
/**
 * The replicas seen within a minute, most recently started first.
 */
replicas: Array<ReplicaInfo>, 
/**
 * Restart fields whose configured value is not the running one.
 */
pending_restart: Array<string>, 
/**
 * Where this replica counts rate limits and budgets.
 */
limits: LimitsInfo, 
/**
 * What this replica's guardrails did since start.
 */
guardrails: GuardrailsInfo, };

/**
 * What was built: the commit and its time (`null` outside a checkout).
 */
export type BuildInfo = { commit: string | null, built_at: string | null, };

export type DatabaseInfo = { kind: "sqlite" | "postgres", 
/**
 * The last migration applied.
 */
schema_version: number, };

/**
 * One replica as its heartbeat describes it.
 */
export type ReplicaInfo = { id: string, hostname: string, version: string, last_seen: string, };

export type LoginBody = { email: string, password: string, };

export type SecondFactorBody = { login_token: string, code: string, };

export type SetupBody = { setup_code: string, email: string, password: string, };

/**
 * Signed in: the session's cookies come with it.
 */
export type SignedIn = { ok: true, user_id: UserId, email: string, role: Role, must_change_password: boolean, 
/**
 * The session can reach only 2FA enrollment, me, logout and status
 * until TOTP is enabled.
 */
needs_2fa_setup: boolean, };

/**
 * The password was right; the second factor is next.
 */
export type NeedsSecondFactor = { needs_2fa: true, login_token: LoginToken, };

/**
 * `GET /_ui/api/auth/me`.
 */
export type Me = { user_id: UserId, email: string, role: Role, 
/**
 * How this session signed in.
 */
auth_method: AuthMethod, totp_enabled: boolean, must_change_password: boolean, };

export type ChangePasswordBody = { current_password: string, new_password: string, };

/**
 * `GET /_ui/api/auth/2fa/setup`: the secret to enroll.
 */
export type TwoFactorSetup = { secret: string, otpauth_uri: string, qr_code_data_url: string, };

export type TwoFactorVerifyBody = { code: string, };

/**
 * `POST /_ui/api/auth/2fa/verify`: 2FA is on; the recovery codes, shown
 * this once.
 */
export type TwoFactorVerified = { ok: true, recovery_codes: Array<string>, };

export type CreateKeyBody = { label?: string | null, 
/**
 * RFC 3339.
 */
expires_at?: string | null, allowed_models?: Array<string> | null, budget_usd?: number | null, budget_period?: BudgetPeriod | null, rpm_limit?: number | null, tpm_limit?: number | null, };

/**
 * `PATCH /_ui/api/keys/{id}`: each field present replaces the stored one
 * (`null` clears `expires_at` and `allowed_models`).
 */
export type KeyPatchBody = { label?: string, expires_at?: string | null, allowed_models?: Array<string> | null, budget_usd?: number | null, budget_period?: BudgetPeriod | null, rpm_limit?: number | null, tpm_limit?: number | null, };

/**
 * One of the caller's keys, without its secret.
 */
export type ApiKey = { id: ApiKeyId, key_prefix: string, label: string, last_used: string | null, created_at: string, expires_at: string | null, allowed_models: Array<string> | null, 
/**
 * USD spent in the budget's current period (without a periodic
 * budget: since the key was created).
 */
spend_usd: number, 
/**
 * When the budget's period ends (RFC 3339); `null` without one.
 */
budget_resets_at: string | null, budget_usd: number | null, budget_period: BudgetPeriod | null, rpm_limit: number | null, tpm_limit: number | null, };

/**
 * `GET /_ui/api/keys`.
 */
export type ApiKeyList = { count: number, keys: Array<ApiKey>, };

/**
 * `POST /_ui/api/keys`: the new key, its secret shown this once.
 */
export type CreatedKey = { id: ApiKeyId, key: string, key_prefix: string, label: string, created_at: string, expires_at: string | null, allowed_models: Array<string> | null, budget_usd: number | null, budget_period: BudgetPeriod | null, rpm_limit: number | null, tpm_limit: number | null, };

/**
 * How often a budget starts again.
 */
export type BudgetPeriod = "daily" | "weekly" | "monthly";

/**
 * The fields as a body gives them: absent (unchanged), `null` (removed)
 * or a value.
 */
export type LimitFieldsBody = { budget_usd?: number | null, budget_period?: BudgetPeriod | null, rpm_limit?: number | null, tpm_limit?: number | null, };

/**
 * The fields as an answer shows them.
 */
export type LimitFieldsView = { budget_usd: number | null, budget_period: BudgetPeriod | null, rpm_limit: number | null, tpm_limit: number | null, };

/**
 * One chain: a model and the models that stand in for it, in order.
 */
export type FallbackChain = { model: string, fallbacks: Array<string>, };

/**
 * The request and the answer.
 */
export type FallbackChains = { chains: Array<FallbackChain>, };

/**
 * A guardrail profile (`guardrail_profiles.id`).
 */
export type GuardrailProfileId = string;

/**
 * A guardrail rule (`guardrail_rules.id`).
 */
export type GuardrailRuleId = string;

/**
 * The gateway's reading of one check (spec 2.8 `GuardrailAction`).
 */
export type GuardrailAction = "None" | "Intervened" | "Redacted";

/**
 * Kinds of finding (interfaces-full.md section 5).
 */
export type ViolationKind = "content_policy" | "topic_policy" | "word_policy" | "pii";

/**
 * One finding: `name` is the filter, topic, word or PII type; `action`
 * the service's (`BLOCKED`, `ANONYMIZED`).
 */
export type Violation = { kind: ViolationKind, name: string, action: string, detail: string, };

/**
 * Whose text is checked.
 */
export type GuardrailSource = "INPUT" | "OUTPUT";

/**
 * Why an expression was refused: the message and where (1-based).
 */
export type ExpressionError = { message: string, line: number, column: number, };

/**
 * The `guardrail_warning` member of a redacted answer (interfaces-full.md 5).
 */
export type GuardrailWarning = { type: string, message: string, violations: Array<Violation>, };

/**
 * Counters since start.
 */
export type GuardrailCounters = { blocked: number, redacted: number, fail_opens: number, };

/**
 * This replica's guardrails (issue 16).
 */
export type GuardrailsInfo = { 
/**
 * `guardrails_enabled`.
 */
enabled: boolean, 
/**
 * Enabled rules with at least one enabled profile.
 */
active_rules: number, blocked: number, redacted: number, fail_opens: number, };

/**
 * A profile as the console shows it (no secret leaves).
 */
export type GuardrailProfile = { id: GuardrailProfileId, name: string, guardrail_id: string, guardrail_version: string, region: string, access_key_id: string, has_secret: boolean, enabled: boolean, rule_ids: Array<GuardrailRuleId>, created_at: string, updated_at: string, };

export type GuardrailProfileList = { profiles: Array<GuardrailProfile>, };

/**
 * `POST` (every field but `session_token` and `enabled` required) and
 * `PUT` (any field) of a profile.
 */
export type GuardrailProfileBody = { name?: string, guardrail_id?: string, guardrail_version?: string, region?: string, access_key_id?: string, secret_access_key?: string, session_token?: string | null, enabled?: boolean, };

/**
 * A rule as the console shows it.
 */
export type GuardrailRule = { id: GuardrailRuleId, name: string, description: string, cel_expression: string, apply_to: "Input" | "Output" | "Both", sampling_rate: number, enabled: boolean, profile_ids: Array<GuardrailProfileId>, created_at: string, updated_at: string, };

export type GuardrailRuleList = { rules: Array<GuardrailRule>, };

/**
 * `POST` (`name`, `cel_expression`, `apply_to`, `sampling_rate` and
 * `profile_ids` required) and `PUT` (any field) of a rule.
 */
export type GuardrailRuleBody = { name?: string, description?: string, cel_expression?: string, apply_to?: "Input" | "Output" | "Both", sampling_rate?: number, enabled?: boolean, profile_ids?: Array<GuardrailProfileId>, };

export type GuardrailValidateBody = { expression: string, };

/**
 * `POST /guardrails/validate`.
 */
export type GuardrailValidation = { valid: boolean, error?: ExpressionError, };

export type GuardrailTestBody = { content: string, source: GuardrailSource, };

/**
 * `POST /guardrails/profiles/{id}/test`.
 */
export type GuardrailTestResult = { action: GuardrailAction, violations: Array<Violation>, 
/**
 * The service's text: the masked content of a redaction, its message
 * for a block, the content itself when nothing was found.
 */
output: string, latency_ms: number, };

/**
 * `GET /_ui/api/upstream/status`: the three places are there only when
 * credentials are stored.
 */
export type UpstreamStatus = { has_token: boolean, expired: boolean, sso_start_url?: string | null, sso_region?: string, upstream_region?: string, };

export type UpstreamSetupBody = { sso_start_url?: string | null, sso_region?: string | null, upstream_region?: string | null, };

/**
 * `POST /_ui/api/upstream/setup`: the device authorization to approve.
 */
export type DeviceAuthorization = { device_code: string, user_code: string, verification_uri: string, verification_uri_complete: string, expires_in: number, interval: number, };

export type UpstreamPollBody = { device_code: string, };

/**
 * Where a device authorization stands.
 */
export type PollStatus = "pending" | "slow_down" | "success" | "expired" | "denied";

/**
 * `POST /_ui/api/upstream/poll`.
 */
export type PollAnswer = { status: PollStatus, message?: string, };

/**
 * One of the registry's providers.
 */
export type ProviderId = "primary" | "messages_vendor" | "completions_vendor" | "assistant_vendor" | "custom";

/**
 * A provider account (`user_provider_tokens.id`).
 */
export type ProviderAccountId = string;

/**
 * How a provider is connected.
 */
export type AuthKind = "device" | "oauth_pkce" | "oauth_code_host" | "api_key";

/**
 * One provider of the registry.
 */
export type RegistryProvider = { id: ProviderId, display_name: string, auth_kinds: Array<AuthKind>, enabled: boolean, multi_account: boolean, };

/**
 * `GET /_ui/api/providers/registry`.
 */
export type ProviderRegistry = { providers: Array<RegistryProvider>, };

/**
 * Where the caller stands with one provider.
 */
export type ProviderState = { id: ProviderId, enabled: boolean, connected: boolean, accounts: number, pool_available: boolean, expires_at: string | null, };

/**
 * `GET /_ui/api/providers/status`.
 */
export type ProviderStatusList = { providers: Array<ProviderState>, };

/**
 * A field of an API-key connection form.
 */
export type ConnectField = { name: string, label: string, secret: boolean, required: boolean, };

/**
 * `GET /_ui/api/providers/{provider}/connect`.
 */
export type ConnectInfo = { "auth_kind": "device", provider: ProviderId, setup_url: string, } | { "auth_kind": "api_key", provider: ProviderId, fields: Array<ConnectField>, } | { "auth_kind": "oauth_pkce", provider: ProviderId, auth_url: string, relay_script_url: string, } | { "auth_kind": "oauth_code_host", provider: ProviderId, auth_url: string | null, device_code_url: string, };

/**
 * Where an account stands.
 */
export type AccountStatus = "active" | "expired" | "cooldown" | "error";

/**
 * Whose an account is.
 */
export type AccountSource = "user" | "pool";

/**
 * One provider account, without its secret.
 */
export type Account = { id: ProviderAccountId, provider: ProviderId, label: string, priority: number, base_url: string | null, auth_kind: AuthKind, status: AccountStatus, expires_at: string | null, cooldown_until: string | null, last_error: string | null, last_used: string | null, created_at: string, source: AccountSource, 
/**
 * A pool account an admin switched off, or a user's (always on).
 */
enabled: boolean, };

/**
 * `GET /_ui/api/providers/{provider}/accounts`.
 */
export type AccountList = { accounts: Array<Account>, };

/**
 * `POST /_ui/api/providers/{provider}/accounts`.
 */
export type NewAccountBody = { api_key: string, base_url?: string | null, label?: string | null, priority?: number | null, };

/**
 * `PATCH /_ui/api/providers/{provider}/accounts/{id}`.
 */
export type AccountPatchBody = { label?: string | null, priority?: number | null, api_key?: string, base_url?: string | null, };

/**
 * `DELETE /_ui/api/providers/{provider}`.
 */
export type Removed = { ok: true, removed: number, };

/**
 * The caller's provider order (`GET`, `POST /_ui/api/providers/priority`).
 */
export type ProviderOrder = { order: Array<ProviderId>, };

/**
 * One provider's switch (`GET /_ui/api/admin/providers`, `PATCH
 * /_ui/api/admin/providers/{provider_id}`).
 */
export type AdminProviderSwitch = { id: ProviderId, enabled: boolean, };

/**
 * `GET /_ui/api/admin/providers`.
 */
export type AdminProviderList = { providers: Array<AdminProviderSwitch>, };

/**
 * `PATCH /_ui/api/admin/providers/{provider_id}`.
 */
export type AdminProviderSwitchBody = { enabled: boolean, };

/**
 * `POST /_ui/api/admin/pool`: a new API-key account, or one of the admin's
 * own accounts moved into the pool.
 */
export type PoolAddBody = { provider?: ProviderId, label?: string | null, api_key?: string, base_url?: string | null, priority?: number | null, enabled?: boolean | null, from_account_id?: string | null, };

/**
 * `PATCH /_ui/api/admin/pool/{id}`.
 */
export type PoolPatchBody = { enabled?: boolean | null, label?: string | null, priority?: number | null, api_key?: string, base_url?: string | null, };

/**
 * One account's windows.
 */
export type RateLimitInfo = { provider: ProviderId, account_id: ProviderAccountId, source: AccountSource, limit_requests: number | null, remaining_requests: number | null, reset_requests_at: string | null, limit_tokens: number | null, remaining_tokens: number | null, reset_tokens_at: string | null, cooldown_until: string | null, recent_429: number, };

/**
 * `GET /_ui/api/providers/rate-limits`.
 */
export type RateLimitList = { accounts: Array<RateLimitInfo>, };

/**
 * `GET .../messages_vendor/auth` with `Accept: application/json`.
 */
export type MessagesVendorAuth = { auth_url: string, state: string, relay_script_url: string, };

/**
 * `POST .../relay`.
 */
export type RelayBody = { code: string, state: string, };

/**
 * What `POST .../relay` answers.
 */
export type Relayed = { ok: true, provider: ProviderId, account_id: ProviderAccountId, };

/**
 * `POST /_ui/api/assistant/device-code`.
 */
export type AssistantDeviceCode = { device_code: string, user_code: string, verification_uri: string, expires_in: number, interval: number, };

/**
 * `POST /_ui/api/assistant/device-poll`.
 */
export type DevicePollBody = { device_code: string, };

/**
 * Where a device flow stands.
 */
export type DeviceFlowStatus = "pending" | "success" | "expired" | "denied" | "slow_down";

/**
 * What `device-poll` answers.
 */
export type AssistantPoll = { status: DeviceFlowStatus, account_id?: ProviderAccountId, login?: string, };

/**
 * `GET /_ui/api/assistant/status`.
 */
export type AssistantStatus = { connected: boolean, login: string | null, expires_at: string | null, base_url: string | null, };

/**
 * One model the caller can call (`GET /_ui/api/models`).
 */
export type CallableModel = { 
/**
 * The name to send on `/v1`.
 */
id: string, provider: ProviderId, display_name: string, context_window: number | null, max_output_tokens: number | null, };

/**
 * `GET /_ui/api/models`.
 */
export type CallableModelList = { models: Array<CallableModel>, };

/**
 * One registry entry as the API shows it.
 */
export type RegistryModel = { id: string, provider: ProviderId, model_id: string, display_name: string, enabled: boolean, 
/**
 * `listing`, `static` or `manual`.
 */
source: string, context_window: number | null, max_output_tokens: number | null, input_price_per_mtok: number | null, output_price_per_mtok: number | null, cache_read_price_per_mtok: number | null, cache_write_price_per_mtok: number | null, created_at: string, updated_at: string, };

/**
 * `GET /_ui/api/models/registry`.
 */
export type RegistryModelList = { models: Array<RegistryModel>, };

/**
 * `PATCH /_ui/api/models/registry/{id}`: each field present replaces the
 * stored one; `null` clears a price, or the display name (the model id is
 * then its name).
 */
export type RegistryEntryChange = { enabled?: boolean, display_name?: string | null, input_price_per_mtok?: number | null, output_price_per_mtok?: number | null, cache_read_price_per_mtok?: number | null, cache_write_price_per_mtok?: number | null, };

/**
 * `POST /_ui/api/models/registry/populate`.
 */
export type PopulateBody = { providers?: Array<string>, };

/**
 * How one provider was populated.
 */
export type PopulatedProvider = { provider: ProviderId, 
/**
 * `listing`, `static`, or `error` (neither gave a model).
 */
source: "listing" | "static" | "error", added: number, updated: number, 
/**
 * Why the listing was not used.
 */
error?: string, };

/**
 * `POST /_ui/api/models/registry/populate`.
 */
export type PopulateResult = { providers: Array<PopulatedProvider>, };

/**
 * One provider's visibility default.
 */
export type VisibilityDefault = { provider: ProviderId, enabled_models: Array<string>, updated_at: string, };

/**
 * `GET /_ui/api/models/visibility-defaults`.
 */
export type VisibilityDefaultList = { defaults: Array<VisibilityDefault>, };

/**
 * `PUT /_ui/api/models/visibility-defaults/{provider_id}`.
 */
export type VisibilityDefaultBody = { enabled_models: Array<string>, };

/**
 * What applying one provider's default changed.
 */
export type ApplyResult = { provider: ProviderId, 
/**
 * Entries switched on.
 */
enabled: number, 
/**
 * Entries switched off.
 */
disabled: number, };

/**
 * `POST /_ui/api/models/visibility-defaults/apply-all`.
 */
export type ApplyAllResult = { providers: Array<ApplyResult>, };

/**
 * What rows are grouped by.
 */
export type GroupBy = "day" | "model" | "provider";

/**
 * The counters of a row, or of the whole range.
 */
export type UsageFigures = { requests: number, errors: number, input_tokens: number, output_tokens: number, cache_read_tokens: number, cache_write_tokens: number, total_tokens: number, avg_latency_ms: number, 
/**
 * USD at the registry's prices when each request was recorded
 * (requests of models without a price count 0).
 */
cost_usd: number, };

/**
 * One row: `group` when grouped (`null` for requests without a model or
 * provider), `user_id` and `email` when per user.
 */
export type UsageRow = { group?: string | null, user_id?: string | null, email?: string | null, requests: number, errors: number, input_tokens: number, output_tokens: number, cache_read_tokens: number, cache_write_tokens: number, total_tokens: number, avg_latency_ms: number, 
/**
 * USD at the registry's prices when each request was recorded
 * (requests of models without a price count 0).
 */
cost_usd: number, };

/**
 * A usage report.
 */
export type UsageAnswer = { count: number, rows: Array<UsageRow>, totals: UsageFigures, from: string, to: string | null, group_by: GroupBy | null, };

/**
 * A user as the API shows one.
 */
export type User = { id: UserId, email: string, role: Role, auth_method: AuthMethod, totp_enabled: boolean, must_change_password: boolean, sso_linked: boolean, created_at: string, last_login_at: string | null, };

/**
 * `GET /_ui/api/users`.
 */
export type UserList = { count: number, users: Array<User>, };

export type RoleBody = { role: Role, };

export type CreateUserBody = { email: string, password: string, role: Role, };

/**
 * `POST /_ui/api/admin/users/create`.
 */
export type CreatedUser = { ok: true, user_id: UserId, };

export type ResetPasswordBody = { new_password: string, };

export type AddDomainBody = { domain: string, };

/**
 * One allowlisted domain.
 */
export type Domain = { domain: string, added_by: UserId | null, created_at: string, };

/**
 * `GET /_ui/api/domains`.
 */
export type DomainList = { count: number, domains: Array<Domain>, };

/**
 * `POST /_ui/api/domains`: the domain as stored.
 */
export type AddedDomain = { ok: true, domain: string, };

/**
 * When a changed value takes effect.
 */
export type Reload = "hot" | "restart";

/**
 * Where a configured value comes from.
 */
export type ValueSource = "default" | "environment" | "database";

/**
 * A restart field whose configured value is not the running one.
 */
export type PendingValue = { configured: string, running: string, };

/**
 * `GET /_ui/api/config`: each value as text (`null`: an SSO key not set;
 * a set secret as the mask), where it comes from, what waits for a restart.
 */
export type ConfigAnswer = { values: { [key in string]: string | null }, sources: { [key in string]: ValueSource }, pending_restart: { [key in string]: PendingValue }, sso_enabled: boolean, };

/**
 * `PUT /_ui/api/config`: what changed, what applies now, what waits for a
 * restart.
 */
export type ConfigUpdate = { ok: true, changed: Array<string>, applied: Array<string>, pending_restart: Array<string>, };

/**
 * One field of `GET /_ui/api/config/schema`.
 */
export type ConfigField = { name: string, 
/**
 * `boolean`, `integer`, `duration`, `byte_size`, `string`, `enum` or `url`.
 */
type: string, default: string | null, description: string, reload: Reload, secret: boolean, editable: boolean, 
/**
 * The choices of an `enum` field.
 */
values?: Array<string>, };

/**
 * `GET /_ui/api/config/schema`.
 */
export type ConfigSchema = { fields: Array<ConfigField>, };

/**
 * One change of `GET /_ui/api/config/history` (a secret's values masked).
 */
export type ConfigHistoryEntry = { id: number, key: string, old_value: string | null, new_value: string | null, secret: boolean, changed_by: UserId | null, changed_by_email: string | null, changed_at: string, };

/**
 * `GET /_ui/api/config/history`.
 */
export type ConfigHistory = { count: number, entries: Array<ConfigHistoryEntry>, };
