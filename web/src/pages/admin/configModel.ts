// The configuration page's logic apart from React: grouping the schema's
// fields, checking an edited value against its type, the PUT body of the
// edits, and a small diff for history entries.

import type { ConfigField } from '../../api/types';

export const SSO_PREFIX = 'sso_';

const GROUPS: { title: string; match: (name: string) => boolean }[] = [
  { title: 'Server', match: (n) => /^(server_|public_url|shutdown_|max_request_body|cors_)/.test(n) },
  { title: 'Upstream connections', match: (n) => /^(upstream_|http_|first_token_|model_cache|custom_)/.test(n) },
  { title: 'Answers', match: (n) => /^(truncation_|fake_reasoning|tool_description)/.test(n) },
  { title: 'Guardrails', match: (n) => n.startsWith('guardrail') },
  { title: 'Logging and telemetry', match: (n) => /^(debug_|log_|otel_|metrics_)/.test(n) },
];

/** Fields grouped for display, in schema order within each group (SSO keys left out). */
export function groupFields(fields: ConfigField[]): { title: string; fields: ConfigField[] }[] {
  const out = new Map<string, ConfigField[]>();
  for (const f of fields) {
    if (f.name.startsWith(SSO_PREFIX)) continue;
    const title = GROUPS.find((g) => g.match(f.name))?.title ?? 'Other';
    out.set(title, [...(out.get(title) ?? []), f]);
  }
  const order = [...GROUPS.map((g) => g.title), 'Other'];
  return order.filter((t) => out.has(t)).map((t) => ({ title: t, fields: out.get(t)! }));
}

/** What is wrong with `value` for `field`, or null (the server checks ranges). */
export function valueProblem(field: ConfigField, value: string): string | null {
  const v = value.trim();
  switch (field.type) {
    case 'boolean':
      return v === 'true' || v === 'false' ? null : 'true or false';
    case 'integer':
      return /^\d+$/.test(v) ? null : 'A whole number, 0 or more.';
    case 'duration':
      return /^\d+(\.\d+)?\s*(ms|s|m|min|h|d)?$/i.test(v) ? null : 'A duration: seconds (30) or with a unit (30s, 5m, 1h).';
    case 'byte_size':
      return /^\d+(\.\d+)?\s*(b|kb|kib|mb|mib|gb|gib)?$/i.test(v) ? null : 'A size: bytes or with a unit (512KiB, 10MiB).';
    case 'enum':
      return field.values && !field.values.includes(v) ? `One of: ${field.values.join(', ')}.` : null;
    case 'url':
      return v === '' || /^https?:\/\/\S+$/.test(v) ? null : 'A URL starting with http:// or https://.';
    default:
      return null;
  }
}

/** The PUT body: only values that differ from what is configured. */
export function changedValues(
  edits: Record<string, string>,
  current: Record<string, unknown>,
): Record<string, string> {
  const body: Record<string, string> = {};
  for (const [k, v] of Object.entries(edits)) {
    if (String(current[k] ?? '') !== v) body[k] = v;
  }
  return body;
}

/** The common start and end of two values, and what differs in between. */
export function diffParts(before: string, after: string): { prefix: string; removed: string; added: string; suffix: string } {
  let p = 0;
  while (p < before.length && p < after.length && before[p] === after[p]) p++;
  let s = 0;
  while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
  return {
    prefix: before.slice(0, p),
    removed: before.slice(p, before.length - s),
    added: after.slice(p, after.length - s),
    suffix: before.slice(before.length - s),
  };
}
