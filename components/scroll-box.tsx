"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A wide table's own scrolling box: the page never scrolls sideways, the table does, and
 * says so. While columns are hidden to the right (or left) the box shows a shadow on that
 * edge and a "more columns" line under it; a keyboard user can focus the box and scroll
 * it with the arrow keys. Labelled by `label` or by the heading `labelledBy`.
 */
export function ScrollBox({ label, labelledBy, className, children }: { label?: string; labelledBy?: string; className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [more, setMore] = useState({ left: false, right: false });
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const left = el.scrollLeft > 1;
      const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
      setMore((m) => (m.left === left && m.right === right ? m : { left, right }));
    };
    update();
    el.addEventListener("scroll", update, { passive: true });
    const observer = new ResizeObserver(update);
    observer.observe(el);
    for (const child of el.children) observer.observe(child);
    return () => {
      el.removeEventListener("scroll", update);
      observer.disconnect();
    };
  }, []);
  return (
    <div className={`scroll-box${className ? ` ${className}` : ""}`} data-more-left={more.left || undefined} data-more-right={more.right || undefined}>
      <div ref={ref} className="table-scroll" tabIndex={0} role="region" aria-label={label} aria-labelledby={labelledBy}>
        {children}
      </div>
      {more.left || more.right ? (
        <p className="scroll-cue" data-testid="scroll-cue">
          {more.right ? "More columns to the right: scroll sideways →" : "← More columns to the left"}
        </p>
      ) : null}
    </div>
  );
}
