import { describe, expect, it } from 'vitest';
import { rowName, usageCsv, usageRequest } from './Usage';

const ROW = { group: 'claude, "x"', requests: 2, errors: 0, input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0, total_tokens: 15, avg_latency_ms: 800, cost_usd: 0.0125 };

describe('usage', () => {
  it('asks the right call for each grouping and scope', () => {
    expect(usageRequest('own', 'day', '2026-01-01', '')).toEqual({ path: '/usage', query: { from: '2026-01-01', group_by: 'day' } });
    expect(usageRequest('all', 'model', '2026-01-01', '2026-01-31')).toEqual({ path: '/admin/usage', query: { from: '2026-01-01', to: '2026-01-31', group_by: 'model' } });
    expect(usageRequest('all', 'user', '2026-01-01', '')).toEqual({ path: '/admin/usage/users', query: { from: '2026-01-01' } });
  });

  it('exports CSV with quoting', () => {
    const csv = usageCsv([ROW], 'model');
    expect(csv.split('\r\n')[0]).toBe('model,requests,errors,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,total_tokens,avg_latency_ms,cost_usd');
    expect(csv.split('\r\n')[1]).toBe('"claude, ""x""",2,0,10,5,0,0,15,800,0.0125');
    expect(usageCsv([{ ...ROW, group: undefined, user_id: 'u1', email: null }], 'user').split('\r\n')[1]).toBe(',u1,2,0,10,5,0,0,15,800,0.0125');
  });

  it('names rows honestly', () => {
    expect(rowName({ ...ROW, group: '' }, 'model')).toBe('(refused before routing)');
    expect(rowName({ ...ROW, email: null, user_id: 'abcdef123' }, 'user')).toBe('deleted user abcdef12');
  });
});
