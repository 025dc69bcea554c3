// Admin actions on one user, shared by the users list and the detail page:
// role change, password reset, delete (each confirmed).

import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { Role, User } from '../../api/types';
import { Button, ConfirmButton, Dialog, Notice, SelectField, TextField } from '../../components/ui';
import { passwordProblem, PASSWORD_MIN, emailProblem } from '../../lib/validate';

export const usersKey = ['users'] as const;

export function RoleSelect({ user, selfId }: { user: User; selfId?: string }) {
  const queryClient = useQueryClient();
  const [pending, setPending] = useState<Role | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const apply = async () => {
    if (!pending) return;
    setBusy(true);
    try {
      await api<User>(`/users/${user.id}/role`, { method: 'PUT', body: { role: pending } });
      await queryClient.invalidateQueries({ queryKey: usersKey });
      await queryClient.invalidateQueries({ queryKey: ['user', user.id] });
      if (user.id === selfId) await queryClient.invalidateQueries({ queryKey: ['me'] });
      setPending(null);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <select
        aria-label={`Role of ${user.email}`}
        value={user.role}
        onChange={(e) => setPending(e.target.value as Role)}
        className="select-compact"
      >
        <option value="User">User</option>
        <option value="Admin">Admin</option>
      </select>
      {pending && (
        <Dialog
          title="Change the role?"
          onClose={() => {
            setPending(null);
            setError(null);
          }}
          footer={
            <>
              <Button onClick={() => setPending(null)}>Cancel</Button>
              <Button variant="primary" busy={busy} onClick={() => void apply()}>
                Make {pending}
              </Button>
            </>
          }
        >
          <p>
            {user.email} becomes <strong>{pending}</strong>.{' '}
            {pending === 'Admin'
              ? 'Admins manage users, configuration, providers and guardrails.'
              : user.id === selfId
                ? 'You will lose access to the administration pages.'
                : 'They lose access to the administration pages.'}
          </p>
          {error && <Notice tone="error">{error}</Notice>}
        </Dialog>
      )}
    </>
  );
}

export function ResetPasswordButton({ user }: { user: User }) {
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const queryClient = useQueryClient();
  const close = () => {
    setOpen(false);
    setPassword('');
    setFieldError(null);
    setError(null);
    setDone(false);
  };
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const p = passwordProblem(password, user.email);
    setFieldError(p);
    if (p) return;
    setBusy(true);
    try {
      await api(`/admin/users/${user.id}/reset-password`, { method: 'POST', body: { new_password: password } });
      await queryClient.invalidateQueries({ queryKey: usersKey });
      setDone(true);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  if (user.auth_method !== 'password') return null;
  return (
    <>
      <Button small onClick={() => setOpen(true)} aria-label={`Reset the password of ${user.email}`}>
        Reset password
      </Button>
      {open && (
        <Dialog title={`Reset the password of ${user.email}`} onClose={close}>
          {done ? (
            <div className="stack">
              <Notice tone="success">
                Password reset. Their sessions were ended; they must choose a new password at their next sign-in.
                Give them the temporary password by a safe channel.
              </Notice>
              <Button variant="primary" onClick={close}>
                Close
              </Button>
            </div>
          ) : (
            <form onSubmit={submit} noValidate className="stack">
              <p>Set a temporary password. Their sessions end now, and they must change it when they next sign in.</p>
              {error && <Notice tone="error">{error}</Notice>}
              <TextField
                label="Temporary password"
                type="text"
                autoComplete="off"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                hint={`At least ${PASSWORD_MIN} characters.`}
                error={fieldError}
              />
              <div className="dialog-foot">
                <Button onClick={close}>Cancel</Button>
                <Button type="submit" variant="danger" busy={busy}>
                  Reset password
                </Button>
              </div>
            </form>
          )}
        </Dialog>
      )}
    </>
  );
}

export function DeleteUserButton({ user, selfId, onDeleted }: { user: User; selfId?: string; onDeleted?: () => void }) {
  const queryClient = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      aria-label={`Delete ${user.email}`}
      disabled={user.id === selfId}
      title={`Delete ${user.email}?`}
      message={
        <p>
          The account, its API keys and its provider credentials are deleted; its keys stop working at once. Its usage
          records are kept. This cannot be undone.
        </p>
      }
      confirmLabel="Delete user"
      onConfirm={async () => {
        await api(`/users/${user.id}`, { method: 'DELETE' });
        await queryClient.invalidateQueries({ queryKey: usersKey });
        onDeleted?.();
      }}
    />
  );
}

export function validateNewUser(v: { email: string; password: string }) {
  const e: { email?: string; password?: string } = {};
  const em = emailProblem(v.email);
  if (em) e.email = em;
  const pw = passwordProblem(v.password, v.email);
  if (pw) e.password = pw;
  return e;
}

export function CreateUserButton() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('User');
  const [errors, setErrors] = useState<{ email?: string; password?: string }>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => {
    setOpen(false);
    setEmail('');
    setPassword('');
    setRole('User');
    setErrors({});
    setError(null);
  };
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e = validateNewUser({ email, password });
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setError(null);
    try {
      await api('/admin/users/create', { method: 'POST', body: { email: email.trim(), password, role } });
      await queryClient.invalidateQueries({ queryKey: usersKey });
      close();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Create user
      </Button>
      {open && (
        <Dialog title="Create a user" onClose={close}>
          <form onSubmit={submit} noValidate className="stack">
            <p className="muted">
              A password account. At the first sign-in the user must change this password and set up two-factor
              authentication.
            </p>
            {error && <Notice tone="error">{error}</Notice>}
            <TextField label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={errors.email} autoComplete="off" />
            <TextField
              label="Temporary password"
              type="text"
              autoComplete="off"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              error={errors.password}
              hint={`At least ${PASSWORD_MIN} characters.`}
            />
            <SelectField label="Role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              <option value="User">User</option>
              <option value="Admin">Admin</option>
            </SelectField>
            <div className="dialog-foot">
              <Button onClick={close}>Cancel</Button>
              <Button type="submit" variant="primary" busy={busy}>
                Create user
              </Button>
            </div>
          </form>
        </Dialog>
      )}
    </>
  );
}
