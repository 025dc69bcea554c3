// The signed-in person and the deployment's state, shared by every page.

import { useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { Me, Status } from './types';

export const statusKey = ['status'] as const;
export const meKey = ['me'] as const;

export function useStatus() {
  return useQuery({
    queryKey: statusKey,
    queryFn: () => api<Status>('/status', { allow401: true }),
    staleTime: 60_000,
  });
}

/** The current user; a 401 is an answer here (the gate sends to sign-in). */
export function useMe() {
  return useQuery({
    queryKey: meKey,
    queryFn: () => api<Me>('/auth/me', { allow401: true }),
    staleTime: 60_000,
    retry: false,
  });
}

export function isAdmin(me: Me | undefined): boolean {
  return me?.role === 'Admin';
}

/** Which step a signed-in session must take before anything else, if any. */
export function requiredStep(me: Me): '/change-password' | '/setup-2fa' | null {
  if (me.must_change_password) return '/change-password';
  if (me.auth_method === 'password' && !me.totp_enabled) return '/setup-2fa';
  return null;
}

/** A return path from `?next=` that stays inside the console. */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/login') || next.startsWith('/setup')) return '/';
  return next;
}
