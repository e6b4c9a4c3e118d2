"use client";

import { useRouter } from "next/navigation";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { formatClock, formatDuration, formatTime } from "@/lib/dashboard/format";
import { OUTCOME_BADGE, OUTCOME_HEX } from "@/lib/dashboard/outcome";
import { revealPlain } from "@/lib/dashboard/reveal";
import type { TimelineData } from "@/lib/dashboard/sessions";
import { EmptyState } from "../../../_components/page-parts";

/**
 * A session's calls: a canvas chart (one lane per tool, a bar per call from its creation to its
 * end, coloured by its outcome; drag to zoom, hover for details, click to find the call in the table)
 * and outcome: a command that exited non-zero is red like any failure) above a virtualised table (@tanstack/react-virtual: only the rows in view are in the DOM, so
 * 10,000+ calls scroll smoothly). Zooming the chart narrows the table to the calls in view.
 */

const LANE_HEIGHT = 18;
const AXIS_HEIGHT = 22;
const LABEL_WIDTH = 112;
const ROW_HEIGHT = 34;

interface TimeWindow {
  t0: number;
  t1: number;
}

export function Timeline({ data, filtered }: { data: TimelineData; filtered: boolean }) {
  const count = data.ids.length;
  const ends = useMemo(() => data.end.map((e) => (e < 0 ? data.now : e)), [data]);
  const full = useMemo<TimeWindow>(() => {
    if (count === 0) return { t0: 0, t1: 1 };
    const t0 = data.start[0];
    let t1 = t0;
    for (const e of ends) if (e > t1) t1 = e;
    const pad = Math.max(1, (t1 - t0) * 0.01);
    return { t0: t0 - pad, t1: t1 + pad };
  }, [data, ends, count]);
  const [zoom, setZoom] = useState<TimeWindow | null>(null);
  const view = zoom ?? full;
  const [selected, setSelected] = useState<number | null>(null);

  const rows = useMemo(() => {
    if (!zoom) return null;
    const out: number[] = [];
    for (let i = 0; i < count; i++) if (ends[i] >= zoom.t0 && data.start[i] <= zoom.t1) out.push(i);
    return out;
  }, [zoom, count, ends, data]);
  const rowCount = rows ? rows.length : count;

  if (count === 0) {
    return <EmptyState title={filtered ? "No calls match these filters" : "This session has no calls yet"}>{filtered ? "Clear a filter or widen the time range." : null}</EmptyState>;
  }
  return (
    <div className="space-y-3" data-testid="timeline">
      <Chart data={data} ends={ends} view={view} selected={selected} onZoom={setZoom} onSelect={setSelected} />
      <div className="flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-zinc-600 dark:text-zinc-400">
        <Legend data={data} />
        <span className="ml-auto">
          {rowCount.toLocaleString("en")} of {data.matched.toLocaleString("en")} calls
          {zoom && (
            <button type="button" className="ml-2 underline" onClick={() => setZoom(null)}>
              reset zoom
            </button>
          )}
        </span>
      </div>
      <CallTable data={data} ends={ends} rows={rows} selected={selected} onSelect={setSelected} />
    </div>
  );
}

function Legend({ data }: { data: TimelineData }) {
  const counts = useMemo(() => {
    const c = new Array<number>(data.outcomes.length).fill(0);
    for (const o of data.outcome) c[o]++;
    return c;
  }, [data]);
  return (
    <>
      {data.outcomes.map((o, i) => (
        <span key={o.label} className="inline-flex items-center gap-1" data-testid="legend-item" data-tone={o.tone}>
          <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: OUTCOME_HEX[o.tone] }} />
          {o.label} {counts[i].toLocaleString("en")}
        </span>
      ))}
    </>
  );
}

/** "Nice" tick step (ms) for a time span, about `target` ticks. */
function tickStep(span: number, target: number): number {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 144e5, 216e5, 432e5, 864e5, 1728e5, 6048e5];
  return steps.find((s) => span / s <= target) ?? steps[steps.length - 1];
}

function Chart({ data, ends, view, selected, onZoom, onSelect }: { data: TimelineData; ends: number[]; view: TimeWindow; selected: number | null; onZoom(w: TimeWindow | null): void; onSelect(i: number): void }) {
  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [hover, setHover] = useState<{ i: number; x: number; y: number } | null>(null);
  const [drag, setDrag] = useState<{ x0: number; x1: number } | null>(null);
  const lanes = data.tools.length;
  const height = AXIS_HEIGHT + lanes * LANE_HEIGHT + 4;
  const plotWidth = Math.max(1, width - LABEL_WIDTH);

  // Calls of each lane in start order, to find the bar under the pointer quickly.
  const byLane = useMemo(() => {
    const lists: number[][] = data.tools.map(() => []);
    for (let i = 0; i < data.ids.length; i++) lists[data.tool[i]].push(i);
    return lists;
  }, [data]);

  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry.contentRect.width)));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const xOf = (t: number) => LABEL_WIDTH + ((t - view.t0) / (view.t1 - view.t0)) * plotWidth;
  const tOf = (x: number) => view.t0 + ((x - LABEL_WIDTH) / plotWidth) * (view.t1 - view.t0);

  useEffect(() => {
    const c = canvas.current;
    if (!c || width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = width * dpr;
    c.height = height * dpr;
    const ctx = c.getContext("2d")!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
    const ink = dark ? "#a1a1aa" : "#52525b";
    const grid = dark ? "#27272a" : "#e4e4e7";
    ctx.font = "11px ui-monospace, SFMono-Regular, Menlo, monospace";
    ctx.textBaseline = "middle";
    // Lanes and their tool names.
    data.tools.forEach((tool, lane) => {
      const y = AXIS_HEIGHT + lane * LANE_HEIGHT;
      ctx.fillStyle = lane % 2 ? (dark ? "#18181b" : "#fafafa") : "transparent";
      ctx.fillRect(LABEL_WIDTH, y, plotWidth, LANE_HEIGHT);
      ctx.fillStyle = ink;
      ctx.fillText(tool.length > 15 ? `${tool.slice(0, 14)}…` : tool, 4, y + LANE_HEIGHT / 2);
    });
    // Time axis.
    const span = view.t1 - view.t0;
    const step = tickStep(span, Math.max(2, plotWidth / 110));
    ctx.strokeStyle = grid;
    ctx.fillStyle = ink;
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = xOf(t);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, AXIS_HEIGHT - 4);
      ctx.lineTo(x + 0.5, height);
      ctx.stroke();
      const label = formatClock(t).slice(0, step < 1000 ? 12 : 8);
      ctx.fillText(label, Math.min(x + 3, width - 70), 9);
    }
    // Bars, clipped to the plot.
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_WIDTH, AXIS_HEIGHT, plotWidth, lanes * LANE_HEIGHT);
    ctx.clip();
    for (let i = 0; i < data.ids.length; i++) {
      if (ends[i] < view.t0 || data.start[i] > view.t1) continue;
      const x0 = xOf(data.start[i]);
      const w = Math.max(1.5, xOf(ends[i]) - x0);
      ctx.fillStyle = OUTCOME_HEX[data.outcomes[data.outcome[i]].tone];
      ctx.fillRect(x0, AXIS_HEIGHT + data.tool[i] * LANE_HEIGHT + 3, w, LANE_HEIGHT - 6);
    }
    if (selected !== null) {
      ctx.strokeStyle = dark ? "#fafafa" : "#18181b";
      ctx.lineWidth = 2;
      const x0 = xOf(data.start[selected]);
      ctx.strokeRect(x0 - 1, AXIS_HEIGHT + data.tool[selected] * LANE_HEIGHT + 1, Math.max(3.5, xOf(ends[selected]) - x0 + 2), LANE_HEIGHT - 2);
    }
    ctx.restore();
  }, [data, ends, view, width, height, selected]);

  /** The call whose bar is under (x, y), or null. */
  const hit = (x: number, y: number): number | null => {
    const lane = Math.floor((y - AXIS_HEIGHT) / LANE_HEIGHT);
    if (lane < 0 || lane >= lanes || x < LABEL_WIDTH) return null;
    const list = byLane[lane];
    const t = tOf(x);
    const slack = (3 / plotWidth) * (view.t1 - view.t0);
    let lo = 0;
    let hi = list.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (data.start[list[mid]] <= t + slack) lo = mid;
      else hi = mid - 1;
    }
    for (let k = lo; k >= Math.max(0, lo - 50); k--) {
      const i = list[k];
      if (data.start[i] <= t + slack && ends[i] >= t - slack) return i;
    }
    return null;
  };

  const local = (e: React.PointerEvent) => {
    const rect = canvas.current!.getBoundingClientRect();
    return { x: e.clientX - rect.left, y: e.clientY - rect.top };
  };

  return (
    <div ref={wrap} className="relative select-none rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900" data-testid="timeline-chart">
      <canvas
        ref={canvas}
        style={{ width: "100%", height, touchAction: "pan-y" }}
        aria-label={`Timeline of ${data.ids.length} calls`}
        role="img"
        onPointerDown={(e) => {
          const { x } = local(e);
          if (x >= LABEL_WIDTH) setDrag({ x0: x, x1: x });
        }}
        onPointerMove={(e) => {
          const { x, y } = local(e);
          if (drag) setDrag({ ...drag, x1: x });
          const i = hit(x, y);
          setHover(i === null ? null : { i, x, y });
        }}
        onPointerLeave={() => setHover(null)}
        onPointerUp={(e) => {
          const { x, y } = local(e);
          if (drag && Math.abs(drag.x1 - drag.x0) > 6) {
            const [a, b] = [Math.min(drag.x0, drag.x1), Math.max(drag.x0, drag.x1)];
            onZoom({ t0: tOf(a), t1: tOf(b) });
          } else {
            const i = hit(x, y);
            if (i !== null) onSelect(i);
          }
          setDrag(null);
        }}
        onDoubleClick={() => onZoom(null)}
      />
      {drag && Math.abs(drag.x1 - drag.x0) > 2 && (
        <div
          className="pointer-events-none absolute bg-sky-500/20 ring-1 ring-sky-500"
          style={{ left: Math.min(drag.x0, drag.x1), width: Math.abs(drag.x1 - drag.x0), top: AXIS_HEIGHT, height: lanes * LANE_HEIGHT }}
        />
      )}
      {hover && !drag && (
        <div
          className="pointer-events-none absolute z-10 max-w-xs rounded-md border border-zinc-300 bg-white p-2 text-xs shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
          style={{ left: Math.min(hover.x + 12, Math.max(0, width - 260)), top: hover.y + 12 }}
        >
          <div className="font-mono font-semibold">{data.tools[data.tool[hover.i]]}</div>
          <div className="break-all font-mono">{revealPlain(data.target[hover.i])}</div>
          <div>
            {data.outcomes[data.outcome[hover.i]].label} · {data.finals[data.final[hover.i]]} · {formatDuration(ends[hover.i] - data.start[hover.i])}
          </div>
          <div className="text-zinc-500">{formatTime(data.start[hover.i])}</div>
        </div>
      )}
      <p className="px-2 pb-1 text-[0.7rem] text-zinc-500">Drag across the chart to zoom in, double-click to zoom out; click a bar to find its call in the table.</p>
    </div>
  );
}

function CallTable({ data, ends, rows, selected, onSelect }: { data: TimelineData; ends: number[]; rows: number[] | null; selected: number | null; onSelect(i: number): void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const router = useRouter();
  const count = rows ? rows.length : data.ids.length;
  // Rows hold plain links (cheap to mount while scrolling); a plain left click navigates in-app.
  const openCall = (e: React.MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    router.push(e.currentTarget.getAttribute("href")!);
  };
  const virtualizer = useVirtualizer({ count, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });

  useEffect(() => {
    if (selected === null) return;
    const index = rows ? rows.indexOf(selected) : selected;
    if (index >= 0) virtualizer.scrollToIndex(index, { align: "center" });
  }, [selected, rows, virtualizer]);

  const cols = "grid grid-cols-[3.5rem_7.5rem_7rem_minmax(12rem,1fr)_6rem_9rem_5rem] items-center gap-2";
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <div className="min-w-[52rem]">
        <div className={`${cols} border-b border-zinc-200 px-3 py-2 text-xs font-medium text-zinc-500 dark:border-zinc-800`}>
          <span className="text-right">#</span>
          <span>Time (UTC)</span>
          <span>Tool</span>
          <span>Target</span>
          <span>Decision</span>
          <span>Outcome</span>
          <span className="text-right">Duration</span>
        </div>
        <div ref={scroller} className="h-[60vh] min-h-64 overflow-y-auto" data-testid="timeline-table" data-rows={count}>
          <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
            {virtualizer.getVirtualItems().map((v) => {
              const i = rows ? rows[v.index] : v.index;
              const outcome = data.outcomes[data.outcome[i]];
              const running = data.end[i] < 0;
              return (
                <div
                  key={v.key}
                  data-index={v.index}
                  data-testid="timeline-row"
                  onClick={() => onSelect(i)}
                  className={`${cols} absolute left-0 right-0 border-b border-zinc-100 px-3 text-xs dark:border-zinc-800 ${i === selected ? "bg-sky-50 dark:bg-sky-950" : "hover:bg-zinc-50 dark:hover:bg-zinc-800/50"}`}
                  style={{ height: ROW_HEIGHT, transform: `translateY(${v.start}px)` }}
                >
                  <span className="text-right tabular-nums text-zinc-500">{i + 1}</span>
                  <span className="font-mono" title={formatTime(data.start[i])}>
                    {formatClock(data.start[i])}
                  </span>
                  <span className="truncate font-mono">{data.tools[data.tool[i]]}</span>
                  <a href={`/calls/${data.ids[i]}`} onClick={openCall} className="truncate font-mono hover:underline" title={revealPlain(data.target[i])}>
                    {revealPlain(data.target[i]) || <span className="text-zinc-600 dark:text-zinc-400">—</span>}
                  </a>
                  <span data-testid="final-decision" title={`policy: ${data.decisions[data.decision[i]] || "none"}`}>
                    {data.finals[data.final[i]]}
                  </span>
                  <span data-testid="outcome" data-tone={outcome.tone} className={`truncate rounded px-1.5 py-0.5 ${OUTCOME_BADGE[outcome.tone]}`} title={outcome.label}>
                    {outcome.label}
                  </span>
                  <span className="text-right tabular-nums">{running ? "…" : formatDuration(data.duration[i] >= 0 ? data.duration[i] : ends[i] - data.start[i])}</span>
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </div>
  );
}
