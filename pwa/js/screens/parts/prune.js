// Pruning ended sessions (one, a project's, or all) with the undo the hub allows: the toast that
// reports a prune carries an Undo button for as long as the hub keeps the undo tokens.
import { bytes, count } from "../../format.js";
import { errorText } from "./common.js";

// The toast's life: until the earliest undo deadline the hub returned (60 s by default).
function undoWindowMs(pruned) {
  const until = Math.min(...pruned.map((p) => Date.parse(p.undo_until)).filter((t) => !Number.isNaN(t)));
  return Number.isFinite(until) ? Math.max(1000, until - Date.now()) : 60000;
}

async function undo(app, pruned, onChange) {
  let restored = 0;
  const failed = [];
  for (const p of pruned) {
    try {
      await app.api.post(`/prune/undo/${encodeURIComponent(p.undo_token)}`);
      restored += 1;
    } catch (err) {
      failed.push(`${p.name}: ${errorText(err)}`);
    }
  }
  if (restored) app.toast(`Restored ${count(restored, "session")}`);
  if (failed.length) app.toast(`Not restored: ${failed.join("; ")}`, { kind: "error" });
  await onChange();
}

// path: "/storage/sessions/<id>", "/storage/projects/<id>/sessions" or "/storage/sessions".
export async function pruneWithUndo(app, path, onChange) {
  let result;
  try {
    result = await app.api.del(path);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
    return null;
  }
  await onChange();
  if (!result.count) {
    app.toast("Nothing to prune: no ended session holds storage here");
    return result;
  }
  const what = result.count === 1 ? `session ${result.pruned[0].name}` : count(result.count, "session");
  app.toast(`Pruned ${what}, freeing ${bytes(result.bytes)}`, {
    action: { label: "Undo", run: () => undo(app, result.pruned, onChange) },
    timeout: undoWindowMs(result.pruned),
  });
  return result;
}
