// A small time-series chart (uPlot on a canvas), coloured from the theme's
// CSS variables and redrawn when the theme or the width changes. The numbers
// are also in a table next to every chart, for screen readers and copying.

import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** A CSS variable name, e.g. `--chart-1`. */
  colorVar: string;
  /** Plot on the right-hand axis (e.g. latency beside counts). */
  right?: boolean;
  unit?: string;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/** Changes whenever the colours of the page may have changed. */
function useThemeStamp(): number {
  const [stamp, setStamp] = useState(0);
  useEffect(() => {
    const bump = () => setStamp((s) => s + 1);
    const mq = window.matchMedia?.('(prefers-color-scheme: dark)');
    mq?.addEventListener?.('change', bump);
    const mo = new MutationObserver(bump);
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => {
      mq?.removeEventListener?.('change', bump);
      mo.disconnect();
    };
  }, []);
  return stamp;
}

export function TimeChart(props: { x: number[]; series: ChartSeries[]; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const stamp = useThemeStamp();
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver((entries) => {
      const w = Math.floor(entries[0]?.contentRect.width ?? 0);
      setWidth((prev) => (Math.abs(prev - w) > 2 ? w : prev));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = box.current;
    if (!el || width < 50) return;
    const text = cssVar('--text-muted');
    const grid = cssVar('--border');
    const hasRight = props.series.some((s) => s.right);
    const axis = (scale: string, side?: number, unit?: string): uPlot.Axis => ({
      scale,
      side,
      stroke: text,
      grid: { stroke: grid, width: 1, show: side !== 1 },
      ticks: { stroke: grid, width: 1 },
      font: '11px system-ui, sans-serif',
      values: (_u, splits) => splits.map((v) => (v >= 1000 ? `${Math.round(v / 100) / 10}k` : `${v}`) + (unit ? ` ${unit}` : '')),
      size: side === 1 ? 62 : 50,
    });
    const opts: uPlot.Options = {
      width,
      height: props.height ?? 220,
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] }, r: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        {
          stroke: text,
          grid: { show: false },
          ticks: { stroke: grid },
          font: '11px system-ui, sans-serif',
          size: 32,
          values: (_u, splits) =>
            splits.map((v) => new Date(v * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })),
        },
        axis('y'),
        ...(hasRight ? [axis('r', 1, props.series.find((s) => s.right)?.unit)] : []),
      ],
      series: [
        {},
        ...props.series.map((s) => ({
          label: s.label,
          stroke: cssVar(s.colorVar),
          width: 2,
          scale: s.right ? 'r' : 'y',
          points: { show: props.x.length < 40, size: 5 },
          spanGaps: false,
        })),
      ],
    };
    const data = [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData;
    const plot = new uPlot(opts, data, el);
    return () => plot.destroy();
  }, [props.x, props.series, props.height, width, stamp]);

  return <div className="chart" ref={box} role="img" aria-label={props.label} />;
}
