// The console's small building blocks: page frame, buttons, form fields,
// loading / empty / error states, badges, copy buttons, confirmation dialog.

import {
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react';
import { errorMessage, isNotFound } from '../api/client';
import { copyText } from '../lib/download';

export function Page(props: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
}) {
  useEffect(() => {
    document.title = `${props.title} · Gateway console`;
  }, [props.title]);
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>{props.title}</h1>
          {props.description && <p className="page-desc">{props.description}</p>}
        </div>
        {props.actions && <div className="page-actions">{props.actions}</div>}
      </header>
      {props.children}
    </div>
  );
}

export function Section(props: {
  title?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
  labelledBy?: string;
}) {
  const id = useId();
  return (
    <section className={`card ${props.className ?? ''}`} aria-labelledby={props.title ? id : undefined}>
      {(props.title || props.actions) && (
        <div className="card-head">
          {props.title && <h2 id={id}>{props.title}</h2>}
          {props.actions && <div className="card-actions">{props.actions}</div>}
        </div>
      )}
      {props.children}
    </section>
  );
}

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost';

export function Button({
  variant = 'secondary',
  busy = false,
  small = false,
  className,
  children,
  disabled,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; busy?: boolean; small?: boolean }) {
  return (
    <button
      type="button"
      className={`btn btn-${variant}${small ? ' btn-sm' : ''} ${className ?? ''}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy && <span className="spinner spinner-inline" aria-hidden="true" />}
      {children}
    </button>
  );
}

interface FieldProps {
  label: ReactNode;
  hint?: ReactNode;
  error?: string | null;
  /** Rendered after the label, e.g. a badge. */
  aside?: ReactNode;
}

function FieldFrame(props: FieldProps & { id: string; children: ReactNode; inline?: boolean }) {
  return (
    <div className={`field${props.inline ? ' field-inline' : ''}${props.error ? ' field-invalid' : ''}`}>
      <label htmlFor={props.id}>
        {props.label}
        {props.aside}
      </label>
      {props.children}
      {props.hint && !props.error && (
        <p className="field-hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p className="field-error" id={`${props.id}-error`} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

function describedBy(id: string, p: FieldProps): string | undefined {
  if (p.error) return `${id}-error`;
  if (p.hint) return `${id}-hint`;
  return undefined;
}

export function TextField({
  label,
  hint,
  error,
  aside,
  id: givenId,
  ...input
}: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const auto = useId();
  const id = givenId ?? auto;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} aside={aside}>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, { label, hint, error })}
        {...input}
      />
    </FieldFrame>
  );
}

export function TextArea({
  label,
  hint,
  error,
  aside,
  id: givenId,
  ...input
}: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const auto = useId();
  const id = givenId ?? auto;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} aside={aside}>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, { label, hint, error })}
        {...input}
      />
    </FieldFrame>
  );
}

export function SelectField({
  label,
  hint,
  error,
  aside,
  id: givenId,
  children,
  ...select
}: FieldProps & SelectHTMLAttributes<HTMLSelectElement>) {
  const auto = useId();
  const id = givenId ?? auto;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} aside={aside}>
      <select id={id} aria-describedby={describedBy(id, { label, hint, error })} {...select}>
        {children}
      </select>
    </FieldFrame>
  );
}

export function Checkbox({
  label,
  hint,
  ...input
}: { label: ReactNode; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="check">
      <input type="checkbox" id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p className="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

export function ErrorNotice({
  error,
  title = 'Something went wrong',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <div className="notice notice-error" role="alert">
      <div>
        <strong>{title}</strong>
        <p>{errorMessage(error)}</p>
      </div>
      {onRetry && (
        <Button small onClick={onRetry}>
          Try again
        </Button>
      )}
    </div>
  );
}

export function Notice({
  tone = 'info',
  children,
  role,
}: {
  tone?: 'info' | 'success' | 'warning' | 'error';
  children: ReactNode;
  role?: 'status' | 'alert';
}) {
  return (
    <div className={`notice notice-${tone}`} role={role ?? (tone === 'error' ? 'alert' : 'status')}>
      <div>{children}</div>
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <strong>{title}</strong>
      {children && <div>{children}</div>}
    </div>
  );
}

export type Tone = 'neutral' | 'good' | 'warn' | 'bad' | 'info';

export function Badge({ tone = 'neutral', children, title }: { tone?: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** The answer of a query: loading, error (with retry), or the content. */
export function QueryView<T>(props: {
  query: { isPending: boolean; isError: boolean; error: unknown; data: T | undefined; refetch: () => unknown };
  loadingLabel?: string;
  children: (data: T) => ReactNode;
}) {
  const q = props.query;
  if (q.isPending) return <Loading label={props.loadingLabel} />;
  if (q.isError && isNotFound(q.error)) return <Unavailable error={q.error} />;
  if (q.isError || q.data === undefined)
    return <ErrorNotice error={q.error} title="Could not load" onRetry={() => void q.refetch()} />;
  return <>{props.children(q.data)}</>;
}

export function CopyButton({ text, label = 'Copy', small = true }: { text: string; label?: string; small?: boolean }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <Button
      small={small}
      onClick={async () => setState((await copyText(text)) ? 'copied' : 'failed')}
      aria-live="polite"
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </Button>
  );
}

/** A modal dialog: focus moves in, Escape and the cancel button close it. */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = useId();
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    const el = ref.current;
    const first = el?.querySelector<HTMLElement>(
      'input, select, textarea, button:not([data-dialog-close]), [href], [tabindex]:not([tabindex="-1"])',
    );
    (first ?? el)?.focus();
    return () => previous?.focus?.();
  }, []);
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      props.onClose();
    }
    if (e.key === 'Tab' && ref.current) {
      const items = Array.from(
        ref.current.querySelectorAll<HTMLElement>(
          'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), [href]',
        ),
      );
      const first = items[0];
      const last = items[items.length - 1];
      if (!first || !last) return;
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };
  return (
    <div className="backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onClose()}>
      <div
        className={`dialog${props.wide ? ' dialog-wide' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        ref={ref}
        tabIndex={-1}
        onKeyDown={onKeyDown}
      >
        <h2 id={titleId}>{props.title}</h2>
        <div className="dialog-body">{props.children}</div>
        {props.footer && <div className="dialog-foot">{props.footer}</div>}
      </div>
    </div>
  );
}

/**
 * A button that asks first. `onConfirm` may be async; its error is shown in
 * the dialog, which stays open until it succeeds or is cancelled.
 */
export function ConfirmButton(props: {
  label: ReactNode;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<unknown> | unknown;
  variant?: Variant;
  small?: boolean;
  disabled?: boolean;
  'aria-label'?: string;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const close = () => {
    if (busy) return;
    setOpen(false);
    setError(null);
  };
  return (
    <>
      <Button
        variant={props.variant ?? 'danger'}
        small={props.small ?? true}
        disabled={props.disabled}
        aria-label={props['aria-label']}
        onClick={() => setOpen(true)}
      >
        {props.label}
      </Button>
      {open && (
        <Dialog
          title={props.title}
          onClose={close}
          footer={
            <>
              <Button data-dialog-close onClick={close} disabled={busy}>
                Cancel
              </Button>
              <Button
                variant="danger"
                busy={busy}
                onClick={async () => {
                  setBusy(true);
                  setError(null);
                  try {
                    await props.onConfirm();
                    setBusy(false);
                    setOpen(false);
                  } catch (e) {
                    setBusy(false);
                    setError(e);
                  }
                }}
              >
                {props.confirmLabel}
              </Button>
            </>
          }
        >
          <div>{props.message}</div>
          {error !== null && <ErrorNotice error={error} title="Not done" />}
        </Dialog>
      )}
    </>
  );
}

/** A secret shown once, selectable, with a copy button. */
export function SecretBox({ value, label }: { value: string; label: string }) {
  return (
    <div className="secret-box">
      <code aria-label={label} tabIndex={0}>
        {value}
      </code>
      <CopyButton text={value} />
    </div>
  );
}

/** A call this gateway does not answer (404): said plainly, not as a failure. */
export function Unavailable({ error }: { error: unknown }) {
  return (
    <div className="notice notice-info" role="status">
      <div>
        <strong>Not available on this gateway</strong>
        <p>This gateway’s version does not offer this feature yet ({errorMessage(error)}).</p>
      </div>
    </div>
  );
}
