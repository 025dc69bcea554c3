// Formatting of numbers, dates and durations for display (the user's locale).

const nf = new Intl.NumberFormat();
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : nf.format(n);
}

export function fmtCompact(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : compact.format(n);
}

const usd = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });

/** US dollars, to the hundredth of a cent (requests cost fractions of a cent). */
export function fmtUsd(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : usd.format(n);
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function fmtDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "in 5 min", "3 h ago": relative to `now`. */
export function fmtRelative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  const diff = Math.round((t - now) / 1000);
  const abs = Math.abs(diff);
  const [value, unit] =
    abs < 60
      ? [abs, 's']
      : abs < 3600
        ? [Math.round(abs / 60), 'min']
        : abs < 86400
          ? [Math.round(abs / 3600), 'h']
          : [Math.round(abs / 86400), 'd'];
  if (abs < 5) return 'just now';
  return diff > 0 ? `in ${value} ${unit}` : `${value} ${unit} ago`;
}

/** Seconds as "4 min 05 s" / "1 h 02 min" / "12 s". */
export function fmtDuration(secs: number): string {
  const s = Math.max(0, Math.floor(secs));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(r).padStart(2, '0')} s`;
  return `${r} s`;
}

/** A UTC date `YYYY-MM-DD`, `days` from today. */
export function utcDate(daysFromToday = 0, now: Date = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + daysFromToday));
  return d.toISOString().slice(0, 10);
}
