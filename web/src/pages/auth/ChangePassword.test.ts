import { describe, expect, it } from 'vitest';
import { validatePasswordChange } from './ChangePassword';

describe('password change form', () => {
  it('checks each rule of the gateway', () => {
    expect(validatePasswordChange({ current: '', next: '', confirm: '' })).toEqual({
      current: 'Enter your current password.',
      next: 'Use at least 12 characters.',
    });
    expect(validatePasswordChange({ current: 'same password 1', next: 'same password 1', confirm: 'same password 1' }).next).toBe(
      'The new password must differ from the current one.',
    );
    expect(validatePasswordChange({ current: 'a', next: 'bob@example.com', confirm: '' }, 'bob@example.com').next).toBe(
      'The password must not be the email address.',
    );
    expect(validatePasswordChange({ current: 'a', next: 'x'.repeat(129), confirm: '' }).next).toBe('Use at most 128 characters.');
    expect(validatePasswordChange({ current: 'a', next: 'a new password', confirm: 'different' }).confirm).toBe('The two passwords differ.');
    expect(validatePasswordChange({ current: 'a', next: 'a new password', confirm: 'a new password' })).toEqual({});
  });
});
