import { describe, expect, it } from 'vitest';
import type { ConfigField } from '../../api/types';
import { changedValues, diffParts, groupFields, valueProblem } from './configModel';

const f = (name: string, type: ConfigField['type'], values?: string[]): ConfigField => ({
  name,
  type,
  default: null,
  description: '',
  reload: 'hot',
  secret: false,
  editable: true,
  values,
});

describe('configuration model', () => {
  it('groups fields and leaves the SSO keys to their page', () => {
    const groups = groupFields([f('http_max_retries', 'integer'), f('server_port', 'integer'), f('sso_client_id', 'string'), f('brand_new', 'string'), f('debug_mode', 'enum')]);
    expect(groups.map((g) => [g.title, g.fields.map((x) => x.name)])).toEqual([
      ['Server', ['server_port']],
      ['Upstream connections', ['http_max_retries']],
      ['Logging and telemetry', ['debug_mode']],
      ['Other', ['brand_new']],
    ]);
  });

  it('checks values by type', () => {
    expect(valueProblem(f('a', 'integer'), '12')).toBeNull();
    expect(valueProblem(f('a', 'integer'), '-1')).toMatch(/whole number/);
    expect(valueProblem(f('a', 'duration'), '30')).toBeNull();
    expect(valueProblem(f('a', 'duration'), '5m')).toBeNull();
    expect(valueProblem(f('a', 'duration'), 'soon')).toMatch(/duration/);
    expect(valueProblem(f('a', 'byte_size'), '10MiB')).toBeNull();
    expect(valueProblem(f('a', 'byte_size'), 'big')).toMatch(/size/);
    expect(valueProblem(f('a', 'enum', ['off', 'all']), 'all')).toBeNull();
    expect(valueProblem(f('a', 'enum', ['off', 'all']), 'some')).toBe('One of: off, all.');
    expect(valueProblem(f('a', 'url'), 'ftp://x')).toMatch(/URL/);
    expect(valueProblem(f('a', 'boolean'), 'true')).toBeNull();
  });

  it('sends only what changed', () => {
    expect(changedValues({ a: '3', b: '30s', c: 'x' }, { a: 3, b: '30s', c: 'y' })).toEqual({ c: 'x' });
  });

  it('diffs a history entry', () => {
    expect(diffParts('300s', '30s')).toEqual({ prefix: '30', removed: '0', added: '', suffix: 's' });
    expect(diffParts('off', 'errors')).toEqual({ prefix: '', removed: 'off', added: 'errors', suffix: '' });
    expect(diffParts('same', 'same')).toEqual({ prefix: 'same', removed: '', added: '', suffix: '' });
  });
});
