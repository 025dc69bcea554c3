// A live countdown to a deadline, ticking once a second.

import { useEffect, useState } from 'react';

/** Seconds left until `deadline` (ms since epoch), or 0; null when none. */
export function useCountdown(deadline: number | null): number | null {
  const left = () => (deadline === null ? null : Math.max(0, Math.ceil((deadline - Date.now()) / 1000)));
  const [secs, setSecs] = useState(left);
  useEffect(() => {
    setSecs(left());
    if (deadline === null) return;
    const t = setInterval(() => {
      const s = left();
      setSecs(s);
      if (s === 0) clearInterval(t);
    }, 1000);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deadline]);
  return secs;
}
