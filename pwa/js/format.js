// Times, sizes and countdowns as people read them.

const MINUTE = 60, HOUR = 3600, DAY = 86400;

function seconds(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t / 1000;
}

// "just now", "5 min ago", "3 h ago", "2 d ago", then the date.
export function ago(iso, now = Date.now() / 1000) {
  const t = seconds(iso);
  if (t === null) return "";
  const d = Math.max(0, now - t);
  if (d < 45) return "just now";
  if (d < HOUR) return `${Math.round(d / MINUTE)} min ago`;
  if (d < DAY) return `${Math.round(d / HOUR)} h ago`;
  if (d < 7 * DAY) return `${Math.round(d / DAY)} d ago`;
  return when(iso);
}

// A full local date and time.
export function when(iso) {
  const t = seconds(iso);
  if (t === null) return "";
  return new Date(t * 1000).toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

// The local day an event belongs to ("Today", "Yesterday", or the date).
export function day(iso, now = new Date()) {
  const t = seconds(iso);
  if (t === null) return "";
  const d = new Date(t * 1000);
  const start = (x) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const diff = Math.round((start(now) - start(d)) / (DAY * 1000));
  if (diff === 0) return "Today";
  if (diff === 1) return "Yesterday";
  return d.toLocaleDateString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric" });
}

const UNITS = ["B", "KB", "MB", "GB", "TB", "PB"];

// 1536 -> "1.5 KB" (powers of 1024); null or undefined -> "unknown".
export function bytes(n) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return "unknown";
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) { v /= 1024; i += 1; }
  return `${i === 0 || v >= 100 ? Math.round(v) : v.toFixed(1)} ${UNITS[i]}`;
}

// Time left until iso: "4 min 05 s left", "2 h 10 min left", "expired".
export function countdown(iso, now = Date.now() / 1000) {
  const t = seconds(iso);
  if (t === null) return "";
  let d = Math.floor(t - now);
  if (d <= 0) return "expired";
  if (d < MINUTE) return `${d} s left`;
  if (d < HOUR) return `${Math.floor(d / MINUTE)} min ${String(d % MINUTE).padStart(2, "0")} s left`;
  if (d < DAY) return `${Math.floor(d / HOUR)} h ${Math.floor((d % HOUR) / MINUTE)} min left`;
  d = Math.floor(d / DAY);
  return `${d} d left`;
}

export function count(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}
