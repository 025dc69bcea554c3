// The API's shapes as the console uses them.
//
// What the gateway serves today is generated from its Rust structs into
// ./generated.ts (crates/gateway/src/ui_api/ts_types.rs; a Rust test fails
// when that file is stale), so the console and the API cannot drift apart.
// The rest of this file is PROVISIONAL: the shapes of calls that open issues
// add, written from interfaces-full.md. Each moves to generated.ts when
// its endpoint lands.

export type {
  AddedDomain,
  ApplyAllResult,
  ApplyResult,
  CallableModel,
  CallableModelList,
  PopulatedProvider,
  PopulateResult,
  RegistryEntryChange,
  RegistryModel,
  RegistryModelList,
  VisibilityDefault,
  VisibilityDefaultList,
  AssistantDeviceCode,
  AssistantPoll,
  AssistantStatus,
  ConnectInfo,
  MessagesVendorAuth,
  Relayed,
  AdminProviderList,
  AdminProviderSwitch,
  AdminProviderSwitchBody,
  Account,
  AccountList,
  AccountStatus,
  ApiError,
  ApiKey,
  ApiKeyList,
  AuthKind,
  AuthMethod,
  BudgetPeriod,
  ConfigAnswer,
  ConnectField,
  ConfigField,
  ConfigHistory,
  ConfigHistoryEntry,
  ConfigSchema,
  ConfigUpdate,
  CreatedKey,
  CreatedUser,
  DeviceAuthorization,
  Domain,
  DomainList,
  FallbackChain,
  FallbackChains,
  GuardrailAction,
  GuardrailCounters,
  GuardrailProfile,
  GuardrailProfileBody,
  GuardrailProfileList,
  GuardrailRule,
  GuardrailRuleBody,
  GuardrailRuleList,
  GuardrailSource,
  GuardrailTestResult,
  GuardrailValidation,
  GuardrailWarning,
  GuardrailsInfo,
  ExpressionError,
  Violation,
  ViolationKind,
  GroupBy,
  LimitFieldsBody,
  LimitFieldsView,
  Me,
  NeedsSecondFactor,
  Ok,
  PendingValue,
  ProviderId,
  ProviderOrder,
  ProviderRegistry,
  ProviderState,
  ProviderStatusList,
  RateLimitInfo,
  RateLimitList,
  RegistryProvider,
  PollStatus,
  Reload,
  Role,
  SignedIn,
  Status,
  TwoFactorSetup,
  TwoFactorVerified,
  UpstreamStatus,
  UsageAnswer,
  UsageFigures,
  UsageRow,
  User,
  UserList,
  ValueSource,
} from './generated';

import type {
  ConfigField,
  GuardrailRule,
  GuardrailValidation,
  NeedsSecondFactor,
  SignedIn,
} from './generated';

export type LoginAnswer = SignedIn | NeedsSecondFactor;

export type ApplyTo = GuardrailRule['apply_to'];

/** `POST /guardrails/validate`: the expression checks, or where it fails. */
export type CelValidation = GuardrailValidation;

export type ConfigFieldType = ConfigField['type'];

// ---- PROVISIONAL (not served yet) ----

import type {
  AssistantPoll,
  PollAnswer as PrimaryPollAnswer,
  SystemInfo as ServedSystemInfo,
  AdminSystemInfo,
} from './generated';

/** A device flow's poll, as `primary`'s and the assistant vendor's flows
 * answer it (the UI's one device-flow component polls both). */
export type PollAnswer = PrimaryPollAnswer & Omit<AssistantPoll, 'status'>;

/** `/system`: `version` and `mode` for everyone, the rest for admins. */
export type SystemInfo = ServedSystemInfo & Partial<AdminSystemInfo>;

/** One `event: log` of `/admin/logs/stream` (written by hand on the
 * server, `ui_api/logs.rs`, so not generated). */
export interface LogEvent {
  timestamp: string;
  level: string;
  target: string;
  message: string;
  request_id: string | null;
  fields: Record<string, unknown>;
  replayed: boolean;
}
