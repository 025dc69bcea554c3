// PROVISIONAL: the API's shapes, written by hand from interfaces.md 6,
// interfaces-full.md and docs/api.md until the types generated from the Rust
// response structs land in web/src/api/types/ (branch ui-types). This is the
// only hand-written copy; delete this file when the generated ones arrive
// (imports of '../api/types' then resolve to the generated index.ts).

export type Role = 'Admin' | 'User';

export interface Status {
  setup_complete: boolean;
  mode: string;
  version: string;
  auth_google_enabled: boolean;
  auth_password_enabled: boolean;
}

export interface SignedIn {
  ok: true;
  user_id: string;
  email: string;
  role: Role;
  must_change_password: boolean;
  needs_2fa_setup: boolean;
}

export interface NeedsSecondFactor {
  needs_2fa: true;
  login_token: string;
}

export type LoginAnswer = SignedIn | NeedsSecondFactor;

export interface Me {
  user_id: string;
  email: string;
  role: Role;
  auth_method: 'password' | 'sso';
  totp_enabled: boolean;
  must_change_password: boolean;
}

export interface TwoFactorSetup {
  secret: string;
  otpauth_uri: string;
  qr_code_data_url: string;
}

export interface TwoFactorVerified {
  ok: true;
  recovery_codes: string[];
}

export interface Ok {
  ok: true;
}

export interface ApiKey {
  id: string;
  key_prefix: string;
  label: string;
  last_used: string | null;
  created_at: string;
}

export interface ApiKeyList {
  keys: ApiKey[];
  count: number;
}

export interface CreatedKey {
  id: string;
  key: string;
  key_prefix: string;
  label: string;
  created_at: string;
}

export interface UpstreamStatus {
  has_token: boolean;
  expired: boolean;
  sso_start_url?: string;
  sso_region?: string;
  upstream_region?: string;
}

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval: number;
}

export type PollStatus = 'pending' | 'success' | 'expired' | 'denied' | 'slow_down';

export interface PollAnswer {
  status: PollStatus;
  message?: string;
  account_id?: string;
  login?: string;
}

export interface UsageFigures {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  avg_latency_ms: number | null;
}

export interface UsageRow extends UsageFigures {
  group?: string;
  user_id?: string;
  email?: string | null;
}

export interface UsageAnswer {
  rows: UsageRow[];
  count: number;
  totals: UsageFigures;
  from: string;
  to: string | null;
  group_by: string | null;
}

export interface User {
  id: string;
  email: string;
  role: Role;
  auth_method: 'password' | 'sso';
  totp_enabled: boolean;
  must_change_password: boolean;
  sso_linked: boolean;
  created_at: string;
  last_login_at: string | null;
}

export interface UserList {
  users: User[];
  count: number;
}

export interface CreatedUser {
  ok: true;
  user_id: string;
}

export interface Domain {
  domain: string;
  added_by: string | null;
  created_at: string;
}

export interface DomainList {
  domains: Domain[];
  count: number;
}

export interface ConfigAnswer {
  values: Record<string, string | number | boolean | null>;
  sources: Record<string, 'default' | 'environment' | 'database'>;
  pending_restart: Record<string, { configured: string; running: string }>;
  sso_enabled: boolean;
}

export type ConfigFieldType =
  | 'boolean'
  | 'integer'
  | 'duration'
  | 'byte_size'
  | 'string'
  | 'enum'
  | 'url';

export interface ConfigField {
  name: string;
  type: ConfigFieldType;
  default: string | null;
  description: string;
  reload: 'hot' | 'restart';
  secret: boolean;
  editable: boolean;
  values?: string[];
}

export interface ConfigSchema {
  fields: ConfigField[];
}

export interface ConfigHistoryEntry {
  id: string | number;
  key: string;
  old_value: string | null;
  new_value: string | null;
  secret: boolean;
  changed_by: string | null;
  changed_by_email: string | null;
  changed_at: string;
}

export interface ConfigHistory {
  entries: ConfigHistoryEntry[];
  count: number;
}

export interface ConfigUpdate {
  ok: true;
  changed: string[];
  applied: string[];
  pending_restart: string[];
}

export interface SystemInfo {
  version: string;
  mode: string;
  build?: { commit: string | null; built_at: string | null };
  database?: { kind: 'sqlite' | 'postgres'; schema_version: number | null } | string;
  started_at?: string;
  uptime_secs?: number;
  replicas?: { id: string; hostname: string; version: string; last_seen: string }[];
  pending_restart?: string[];
}

export type ProviderId =
  | 'primary'
  | 'messages_vendor'
  | 'completions_vendor'
  | 'assistant_vendor'
  | 'custom';

export type AuthKind = 'device' | 'oauth_pkce' | 'oauth_code_host' | 'api_key';

export interface RegistryProvider {
  id: ProviderId;
  display_name: string;
  auth_kinds: AuthKind[];
  enabled: boolean;
  multi_account: boolean;
}

export interface ProviderRegistry {
  providers: RegistryProvider[];
}

export interface ProviderState {
  id: ProviderId;
  enabled: boolean;
  connected: boolean;
  accounts: number;
  pool_available: boolean;
  expires_at: string | null;
}

export interface ProviderStatusList {
  providers: ProviderState[];
}

export interface ConnectField {
  name: string;
  label: string;
  secret: boolean;
  required: boolean;
}

export type ConnectInfo =
  | { provider: ProviderId; auth_kind: 'oauth_pkce'; auth_url: string; relay_script_url: string }
  | { provider: ProviderId; auth_kind: 'oauth_code_host'; auth_url: string | null; device_code_url: string }
  | { provider: ProviderId; auth_kind: 'api_key'; fields: ConnectField[] }
  | { provider: ProviderId; auth_kind: 'device'; setup_url: string };

export type AccountStatus = 'active' | 'expired' | 'cooldown' | 'error';

export interface Account {
  id: string;
  provider: ProviderId;
  label: string;
  priority: number;
  base_url: string | null;
  auth_kind: AuthKind;
  status: AccountStatus;
  expires_at: string | null;
  cooldown_until: string | null;
  last_error: string | null;
  last_used: string | null;
  created_at: string;
  source: 'user' | 'pool';
  enabled?: boolean;
}

export interface AccountList {
  accounts: Account[];
}

export interface ProviderOrder {
  order: ProviderId[];
}

export interface RateLimitInfo {
  provider: ProviderId;
  account_id: string;
  source: 'user' | 'pool';
  limit_requests: number | null;
  remaining_requests: number | null;
  reset_requests_at: string | null;
  limit_tokens: number | null;
  remaining_tokens: number | null;
  reset_tokens_at: string | null;
  cooldown_until: string | null;
  recent_429: number | null;
}

export interface RateLimitList {
  accounts: RateLimitInfo[];
}

export interface MessagesVendorAuth {
  auth_url: string;
  state: string;
  relay_script_url: string;
}

export interface AssistantStatus {
  connected: boolean;
  login: string | null;
  expires_at: string | null;
  base_url: string | null;
}

export interface AdminProviderSwitch {
  id: ProviderId;
  enabled: boolean;
}

export interface AdminProviderList {
  providers: AdminProviderSwitch[];
}

export interface CallableModel {
  id: string;
  provider: ProviderId;
  display_name: string | null;
  context_window: number | null;
  max_output_tokens: number | null;
}

export interface CallableModelList {
  models: CallableModel[];
}

export interface RegistryModel {
  id: string;
  provider: ProviderId;
  model_id: string;
  display_name: string | null;
  enabled: boolean;
  source: 'listing' | 'static' | 'manual';
  context_window: number | null;
  max_output_tokens: number | null;
  input_price_per_mtok: number | null;
  output_price_per_mtok: number | null;
  cache_read_price_per_mtok: number | null;
  cache_write_price_per_mtok: number | null;
  created_at: string;
  updated_at: string;
}

export interface RegistryModelList {
  models: RegistryModel[];
}

export interface PopulateResult {
  providers: {
    provider: ProviderId;
    source: 'listing' | 'static' | 'error';
    added: number;
    updated: number;
    error?: string;
  }[];
}

export interface VisibilityDefault {
  provider: ProviderId;
  enabled_models: string[];
  updated_at: string;
}

export interface VisibilityDefaultList {
  defaults: VisibilityDefault[];
}

export interface ApplyResult {
  provider: ProviderId;
  enabled: number;
  disabled: number;
}

export interface ApplyAllResult {
  providers: ApplyResult[];
}

export interface GuardrailProfile {
  id: string;
  name: string;
  guardrail_id: string;
  guardrail_version: string;
  region: string;
  access_key_id: string;
  has_secret: boolean;
  enabled: boolean;
  rule_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface GuardrailProfileList {
  profiles: GuardrailProfile[];
}

export type ApplyTo = 'Input' | 'Output' | 'Both';

export interface GuardrailRule {
  id: string;
  name: string;
  description: string | null;
  cel_expression: string;
  apply_to: ApplyTo;
  sampling_rate: number;
  enabled: boolean;
  profile_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface GuardrailRuleList {
  rules: GuardrailRule[];
}

export interface Violation {
  kind: 'content_policy' | 'topic_policy' | 'word_policy' | 'pii';
  name: string;
  action: string;
  detail: string | null;
}

export interface GuardrailTestResult {
  action: 'None' | 'Intervened' | 'Redacted';
  violations: Violation[];
  output: string | null;
  latency_ms: number;
}

export type CelValidation =
  | { valid: true }
  | { valid: false; error: { message: string; line: number; column: number } };

export interface LogEvent {
  timestamp: string;
  level: string;
  target: string;
  message: string;
  request_id: string | null;
  fields: Record<string, unknown>;
  replayed: boolean;
}
